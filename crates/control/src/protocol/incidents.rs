//! Incidents: a moment with a window around it whose files are kept (pinned) and cut into
//! files of their own, whatever made it (`rec trigger`, the fleet, the page, a
//! pre-trigger buffer).

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::state::{FileState, UploadState};

/// Where an incident came from; what `rec incidents` shows as its origin.
pub mod origin {
    /// `rec trigger` over the socket.
    pub const CLI: &str = "cli";
    /// A remote controller over DDS (DDS Record & Replay's contract, rosbag2's services).
    pub const REMOTE: &str = "remote";
    /// The web page's Trigger button or `POST /api/trigger`.
    pub const PAGE: &str = "page";
    /// A fleet trigger: a moment and an id shared by every recorder (`rec fleet trigger`).
    pub const FLEET: &str = "fleet";
    /// A pre-trigger session's window, written from its memory buffer.
    pub const BUFFER: &str = "buffer";
    /// A `[[rule]]` of recd.toml: a message's content or a topic's health.
    pub const RULE: &str = "rule";
    /// A window the fleet's cloud asked for over MQTT (`[fleet]`, `rec fleet pull`).
    pub const CLOUD: &str = "cloud";
    /// Every origin recd gives an incident.
    pub const ALL: [&str; 7] = [CLI, REMOTE, PAGE, FLEET, BUFFER, RULE, CLOUD];
}

/// How far an incident's cut has come.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CutState {
    /// Its window has not been written to the end yet.
    Waiting,
    /// Its files are cut.
    Cut,
    /// Cutting failed (the reason is with it); the pin still holds.
    Failed,
    /// A pre-trigger buffer wrote its window straight into its own file.
    Buffer,
}

impl CutState {
    /// The name the catalog and the wire use.
    pub fn as_str(self) -> &'static str {
        match self {
            CutState::Waiting => "waiting",
            CutState::Cut => "cut",
            CutState::Failed => "failed",
            CutState::Buffer => "buffer",
        }
    }

    /// The state named `name`, if any.
    pub fn from_name(name: &str) -> Option<Self> {
        [Self::Waiting, Self::Cut, Self::Failed, Self::Buffer]
            .into_iter()
            .find(|state| state.as_str() == name)
    }
}

/// What fired a rule's incident: the rule, the sample that fired it and the values its
/// expression read.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RuleFiring {
    /// The rule's name (`[[rule]] name`).
    pub rule: String,
    /// The topic of the sample that fired it (for a health rule: the topic whose health
    /// changed).
    pub topic: String,
    /// The log time of the sample that fired it (the incident's T), ns since the Unix
    /// epoch; for a health rule, when the topic's health left ok.
    pub sample_ns: u64,
    /// The values the rule read, by path (`msg.accel.x`, `prev.mode`); for a health
    /// rule, `state` and `session`.
    pub values: BTreeMap<String, serde_json::Value>,
}

/// An incident as `rec incidents` shows it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Incident {
    /// Its id: the asker's, or one recd made (`<UTC time>_<session>`).
    pub id: String,
    /// The session whose files it keeps.
    pub session: String,
    /// Why, as the asker said (may be empty).
    pub note: String,
    /// Who made it: `cli`, `remote`, `page`, `fleet`, `buffer`, `rule` or `cloud` (see
    /// [`origin`]).
    pub origin: String,
    /// Its moment T, ns since the Unix epoch.
    pub time_ns: u64,
    /// The window kept: from T − before…
    pub start_ns: u64,
    /// …to T + after, ns since the Unix epoch.
    pub end_ns: u64,
    /// When recd took it, ns since the Unix epoch.
    pub created_ns: u64,
    /// How far its cut has come.
    pub cut: CutState,
    /// Why its cut failed, if it did.
    #[serde(default)]
    pub cut_error: Option<String>,
    /// When its pin ends by itself (`[incidents] keep`), ns since the Unix epoch.
    #[serde(default)]
    pub keep_until_ns: Option<u64>,
    /// Its pin ends once its cut files are uploaded (`[incidents] release_after_upload`).
    #[serde(default)]
    pub release_after_upload: bool,
    /// Released: when, and why (`rec incidents release`, its keep ended, uploaded);
    /// `None` while its files are pinned.
    #[serde(default)]
    pub released: Option<Released>,
    /// The session's files its window overlaps (kept while it is pinned).
    #[serde(default)]
    pub pinned_files: Vec<IncidentFile>,
    /// Its own files, each holding exactly its window of one source family.
    #[serde(default)]
    pub cut_files: Vec<IncidentFile>,
    /// A rule's incident: what fired it.
    #[serde(default)]
    pub rule: Option<RuleFiring>,
    /// Glob patterns of the topics its cut keeps (a fleet window that named topics);
    /// `None` keeps every topic.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub topics: Option<Vec<String>>,
}

/// When and why an incident's pin ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Released {
    /// When, ns since the Unix epoch.
    pub at_ns: u64,
    /// Why: `released` (asked), `keep` (its keep ended) or `uploaded`.
    pub why: String,
}

/// A file of an incident.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct IncidentFile {
    /// Where it is.
    pub path: PathBuf,
    /// Its size, as the catalog last knew it.
    pub bytes: u64,
    /// Its state.
    pub state: FileState,
    /// Its upload, when it is queued.
    #[serde(default)]
    pub upload: Option<UploadState>,
}

/// The incident a trigger of a session made (or found, for a repeated id).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct IncidentTaken {
    /// Its id.
    pub id: String,
    /// The window kept: from…
    pub start_ns: u64,
    /// …to, ns since the Unix epoch.
    pub end_ns: u64,
    /// The session's files its window overlaps so far.
    pub pinned_files: Vec<PathBuf>,
    /// Where its cut files will be.
    pub directory: PathBuf,
}

/// Answer to releasing incidents.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct IncidentsReleased {
    /// The id asked for.
    pub id: String,
    /// The incidents of that id released now (one per session it pinned).
    pub released: usize,
}

/// The incidents at a glance: what `/metrics`, the web page and the remote status show.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct IncidentsOverview {
    /// The newest incidents (as many as asked for), newest first.
    pub newest: Vec<Incident>,
    /// Every incident the catalog holds, by origin.
    pub by_origin: BTreeMap<String, u64>,
    /// Incidents not released: their files are pinned.
    pub pinned: u64,
    /// Incidents not released whose window is not cut yet.
    pub waiting_to_cut: u64,
    /// Incidents refused for want of room since recd started, by origin.
    pub refused: BTreeMap<String, u64>,
    /// Bytes the pinned files take on disk.
    pub pinned_bytes: u64,
    /// The bound on them (`[incidents] max_pinned_size` or its default).
    pub pinned_bytes_limit: u64,
}
