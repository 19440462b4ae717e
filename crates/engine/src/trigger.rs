//! Triggers of a pre-trigger session: what one asks for, and the files it gets.

use std::path::PathBuf;
use std::sync::mpsc;
use std::time::Duration;

use recd_storage::LogWindow;

/// What a trigger keeps around its moment.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TriggerWindow {
    /// How far back from the trigger; `None` keeps the whole buffer.
    pub before: Option<Duration>,
    /// How long after the trigger messages still go to its file.
    pub after: Duration,
    /// Why (may be empty); it goes into the file's `trigger` Metadata record.
    pub note: String,
    /// The asker's id of the trigger (may be empty), kept in the record.
    pub id: String,
    /// The host's clock-sync evidence at the trigger, kept in the record.
    pub clock_sync: String,
}

/// A file a trigger writes.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct TriggeredFile {
    /// Where it is.
    pub path: PathBuf,
    /// The first log time it holds, ns since the Unix epoch (latched samples aside).
    pub start_ns: u64,
    /// The last log time it will hold, ns since the Unix epoch.
    pub end_ns: u64,
    /// The trigger fell inside a window being written: that file's window was extended
    /// rather than a new file started.
    pub extended: bool,
}

/// What a trigger did: one file per source family of the session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Triggered {
    /// The trigger's moment, ns since the Unix epoch.
    pub time_ns: u64,
    /// The window it asked for, over every source family (a file extended for it spans
    /// more: the windows of the triggers before it too).
    pub window: LogWindow,
    /// Its files.
    pub files: Vec<TriggeredFile>,
}

/// Why a trigger wrote nothing.
#[derive(Debug, thiserror::Error)]
pub enum TriggerError {
    /// The session writes everything; only a pre-trigger session can be triggered.
    #[error("the session was not started with a pre-trigger buffer (rec start --pre-trigger DURATION); it writes everything already")]
    NotBuffered,
    /// A trigger's file could not be created.
    #[error("cannot write the trigger's file: {0}")]
    File(String),
    /// The trigger's moment is older than anything the buffer can still hold.
    #[error("its moment is {} ago, but the buffer holds only the last {}{}", seconds(*age), seconds(*holds), if *since_start { " (since the session started)" } else { "" })]
    TooOld {
        /// How long before now the moment was.
        age: Duration,
        /// How far back the buffer reaches.
        holds: Duration,
        /// The buffer reaches back only to the session's start.
        since_start: bool,
    },
    /// The trigger's moment has not come yet (the caller waits for it first).
    #[error("its moment is {} ahead; a trigger is cut once its moment has come", seconds(*ahead))]
    Ahead {
        /// How long after now the moment is.
        ahead: Duration,
    },
    /// A writer thread did not answer (it ended, or is stuck on the disk).
    #[error("the writer did not take the trigger within {0:?}")]
    NoAnswer(Duration),
}

fn seconds(duration: Duration) -> String {
    format!("{:.3} s", duration.as_secs_f64())
}

/// A trigger on its way to a writer thread, with where its answer goes.
#[derive(Debug)]
pub(crate) struct TriggerRequest {
    pub time_ns: u64,
    pub window: TriggerWindow,
    pub answer: mpsc::Sender<Result<(TriggeredFile, LogWindow), String>>,
}
