//! Sessions and their files as the catalog keeps them, for the list and files replies.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::topics::TopicReport;
use crate::state::{FileState, SessionState, UploadState};

/// One session as the catalog keeps it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ListedSession {
    /// Its name.
    pub name: String,
    /// Its catalog id.
    pub id: i64,
    /// Where it is in its life.
    pub state: SessionState,
    /// Its directory.
    pub directory: PathBuf,
    /// Start, ns since the Unix epoch.
    pub started_ns: i64,
    /// Stop, ns since the Unix epoch, once stopped.
    pub stopped_ns: Option<i64>,
    /// Its files.
    pub files: Vec<FileEntry>,
    /// Its topics' final counts (empty while recording).
    pub topics: Vec<TopicReport>,
    /// Why it failed, when it did.
    #[serde(default)]
    pub reason: Option<String>,
    /// Its health verdict: `ok`, `degraded` or `missing`; none before recd kept one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub health: Option<String>,
}

/// One file of a session.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FileEntry {
    /// Where it is.
    pub path: PathBuf,
    /// Its size in bytes, as last known.
    pub bytes: u64,
    /// Messages in it, as last known.
    pub messages: u64,
    /// Where it is in its life.
    pub state: FileState,
    /// Where it is on its way to object storage; none when it is not queued.
    #[serde(default)]
    pub upload: Option<UploadState>,
    /// Its health verdict (from its health record); none before recd kept one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub health: Option<String>,
    /// Recovered after a crash with damage: readable records ended at this byte, what
    /// followed is lost.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub damaged_at: Option<u64>,
}
