//! [`Request`]: what a client can ask recd to do, one variant per request kind.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::sessions::StartRequest;
use super::topics::TopicsRequest;
use super::topics_set::SetTopicsRequest;
use super::triggers::TriggerRequest;
use crate::upload::UploadRequest;

/// What a client asks recd to do.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "request", rename_all = "snake_case")]
// A request is made once per command and read once; never kept in bulk, so the size of
// its largest variant costs nothing that boxing it would save.
#[allow(clippy::large_enum_variant)]
pub enum Request {
    /// Is recd there, and which version?
    Ping,
    /// Start a recording session.
    Start(StartRequest),
    /// Stop the named session, the only one running (no name), or all.
    Stop {
        /// The session; `None` means the only one running.
        name: Option<String>,
        /// Stop every running session.
        #[serde(default)]
        all: bool,
    },
    /// Live status of one running session or of all.
    Status {
        /// The session; `None` means all running ones.
        name: Option<String>,
    },
    /// Sessions and files from the catalog.
    List,
    /// The files of a session from the catalog, for `rec reindex SESSION`.
    Files {
        /// The session.
        name: String,
    },
    /// What could be recorded now: topics found by receiving for a while, as a session
    /// would (`rec topics`); nothing is written.
    Topics(TopicsRequest),
    /// Stop writing a running session (the only one when no name) until resumed;
    /// messages are still taken from the publishers and counted as paused.
    Pause {
        /// The session; `None` means the only one running.
        name: Option<String>,
    },
    /// Write again after a pause.
    Resume {
        /// The session; `None` means the only one running.
        name: Option<String>,
    },
    /// End the files a running session is writing and continue in new ones (rosbag2's
    /// `split_bagfile`).
    Split {
        /// The session; `None` means the only one running.
        name: Option<String>,
    },
    /// Write a marker (a Metadata record `marker` with its time and text) into the files
    /// a running session is writing.
    Mark {
        /// The session; `None` means the only one running.
        name: Option<String>,
        /// The marker's text.
        text: String,
    },
    /// Change the topics a running session records, without a gap in those it keeps
    /// (`rec topics-set`).
    SetTopics(SetTopicsRequest),
    /// Make an incident around a moment: a session on disk pins the window's files and
    /// cuts them into files of their own; a pre-trigger session writes the window from its
    /// buffer into a new file (or extends the window being written, when they overlap).
    Trigger(TriggerRequest),
    /// The incidents of a session (the newest of that name), or of all.
    Incidents {
        /// The session; `None` means every session.
        name: Option<String>,
    },
    /// End the pin of the incidents with this id (every session's), so that retention
    /// may take their files again.
    ReleaseIncident {
        /// The incident's id.
        id: String,
    },
    /// A catalog file was reindexed in place: it is complete now.
    Reindexed {
        /// The file.
        path: PathBuf,
        /// Its new size.
        bytes: u64,
        /// Messages in it.
        messages: u64,
    },
    /// Queue a session's files, or one file, for upload (`rec upload`).
    Upload(UploadRequest),
    /// The upload queue and the uploader's state (`rec upload --status`).
    UploadStatus,
}
