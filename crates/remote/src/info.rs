//! recd's detail in a status's `info`: who answers, what it records, its newest
//! incidents, and the answer to a command.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// The `info` JSON of every status recd writes.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct StatusInfo {
    /// The recorder's name in the fleet (`[remote_control] recorder`, the host name by
    /// default).
    pub recorder: String,
    /// The host's name.
    pub host: String,
    /// The recorder's DDS participant (its GUID prefix), which sets two recorders of
    /// one name apart.
    pub participant: String,
    /// When the status was written, ns since the Unix epoch.
    pub time_ns: u64,
    /// Remote commands are taken (`[remote_control] enabled`).
    pub control: bool,
    /// The answer to a command; none in a periodic status.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reply: Option<Reply>,
    /// The sessions recording.
    pub sessions: Vec<SessionInfo>,
    /// Free bytes on recd's data directory's file system.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub disk_free_bytes: Option<u64>,
    /// The uploader's state in a few words (none when uploads are off).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub upload: Option<String>,
    /// The newest incidents (at most [`STATUS_INCIDENTS`]), newest first; none from an
    /// older recd.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub incidents: Vec<IncidentInfo>,
}

/// How many of the newest incidents a status carries.
pub const STATUS_INCIDENTS: usize = 5;

/// An incident in a status: a window of a session kept around a moment.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct IncidentInfo {
    /// Its id (a fleet trigger's id, or one recd made).
    pub id: String,
    /// The session whose files it keeps.
    pub session: String,
    /// Who made it: `cli`, `remote`, `page`, `fleet` or `buffer`.
    pub origin: String,
    /// Why, as the asker said.
    pub note: String,
    /// Its moment T, ns since the Unix epoch.
    pub time_ns: u64,
    /// The window kept, from T - before…
    pub start_ns: u64,
    /// …to T + after, ns since the Unix epoch.
    pub end_ns: u64,
    /// How far its cut has come: `waiting`, `cut`, `failed` or `buffer`.
    pub cut: String,
    /// Its pin has ended: retention may take its files.
    pub released: bool,
}

/// What became of a command.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Reply {
    /// The command as it came (its name, or what was sent when unknown).
    pub command: String,
    /// Its id from `args`, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// It was carried out.
    pub ok: bool,
    /// Why not, when not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The session it acted on.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
    /// Files it wrote or extended (a trigger's).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub files: Vec<String>,
    /// A trigger's moment, ns since the epoch.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trigger_ns: Option<u64>,
    /// The trigger was taken before under this id: nothing new written.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub repeated: bool,
    /// The incident a trigger of a session on disk made (or found, repeated): its id.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub incident: Option<String>,
}

/// A session in a status.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct SessionInfo {
    /// Its name.
    pub name: String,
    /// Its state.
    pub state: String,
    /// Files being written.
    pub files: Vec<String>,
    /// Bytes per second written lately.
    pub bytes_per_s: f64,
    /// Counts per topic.
    pub topics: BTreeMap<String, TopicInfo>,
    /// Required topics (or patterns) that no topic sent a sample of yet.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub missing: Vec<String>,
}

/// A topic's counts in a status.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct TopicInfo {
    /// Messages received.
    pub received: u64,
    /// Messages written.
    pub written: u64,
    /// Messages recd had and could not write.
    pub dropped: u64,
    /// Messages that never reached recd; none where recd cannot know.
    pub lost: Option<u64>,
    /// Messages taken while paused, not written.
    pub paused: u64,
    /// Messages a pre-trigger buffer let go untriggered.
    pub evicted: u64,
    /// Messages a rate limit or downsampling let go.
    pub filtered: u64,
    /// Messages that arrived again (a publisher's repeat) and were let go of: not part
    /// of `received`, so `received + repeated` is what arrived; 0 from an older recd.
    pub repeated: u64,
    /// Its health: `ok`, `slow`, `stalled`, `unchecked`; none from an older recd.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub health: Option<String>,
}

impl StatusInfo {
    /// The info as JSON text.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("status info serializes")
    }

    /// The info a status's text holds, if it is recd's.
    pub fn parse(text: &str) -> Option<Self> {
        serde_json::from_str(text).ok()
    }
}
