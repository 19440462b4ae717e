//! [`Response`]: recd's answer to a request, one variant per reply kind, and the failed ones.

use serde::{Deserialize, Serialize};

use super::catalog::ListedSession;
use super::incidents::{Incident, IncidentsReleased};
use super::rules::RuleStatus;
use super::sessions::{SessionPaused, SessionStarted, SessionStopped};
use super::status::SessionStatus;
use super::topics::TopicsFound;
use super::topics_set::SessionTopicsChanged;
use super::triggers::{SessionMarked, SessionTriggered};
use crate::upload::{UploadStatus, UploadsQueued};
use crate::Backlog;

/// recd's answer to one request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "response", rename_all = "snake_case")]
pub enum Response {
    /// Answer to [`Request::Ping`](crate::Request::Ping).
    Pong {
        /// recd's protocol version.
        version: u32,
        /// recd's package version.
        daemon: String,
    },
    /// A session started.
    Started(SessionStarted),
    /// Sessions stopped and finalized.
    Stopped {
        /// One entry per stopped session.
        sessions: Vec<SessionStopped>,
    },
    /// Live status.
    Status {
        /// One entry per running session asked about.
        sessions: Vec<SessionStatus>,
        /// The backlog of every session's files (stopped ones too) and the background
        /// policy's state; `None` from an older recd.
        #[serde(default)]
        backlog: Option<Backlog>,
        /// The `[[rule]]`s of recd.toml as they run.
        #[serde(default)]
        rules: Vec<RuleStatus>,
    },
    /// The catalog's sessions, newest first.
    List {
        /// Sessions with their files.
        sessions: Vec<ListedSession>,
    },
    /// The catalog's files of one session.
    Files {
        /// The session.
        session: ListedSession,
    },
    /// Answer to [`Request::Topics`](crate::Request::Topics).
    Topics(TopicsFound),
    /// Answer to [`Request::Pause`](crate::Request::Pause) and
    /// [`Request::Resume`](crate::Request::Resume).
    Paused(SessionPaused),
    /// Answer to [`Request::Mark`](crate::Request::Mark).
    Marked(SessionMarked),
    /// Answer to [`Request::SetTopics`](crate::Request::SetTopics).
    TopicsChanged(SessionTopicsChanged),
    /// Answer to [`Request::Trigger`](crate::Request::Trigger).
    Triggered(SessionTriggered),
    /// Answer to [`Request::Incidents`](crate::Request::Incidents), newest first.
    Incidents {
        /// The incidents.
        incidents: Vec<Incident>,
    },
    /// Answer to [`Request::ReleaseIncident`](crate::Request::ReleaseIncident).
    IncidentsReleased(IncidentsReleased),
    /// Answer to [`Request::Upload`](crate::Request::Upload).
    UploadsQueued(UploadsQueued),
    /// Answer to [`Request::UploadStatus`](crate::Request::UploadStatus).
    Uploads(UploadStatus),
    /// Done; nothing to report.
    Done,
    /// The request failed; nothing changed.
    Error(ErrorReply),
}

/// A failed request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ErrorReply {
    /// What kind of failure, for scripts.
    pub kind: ErrorKind,
    /// One line for people saying what is wrong.
    pub message: String,
}

/// Kinds of failed requests.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorKind {
    /// Not a request this protocol knows (malformed, unknown, too large, wrong version).
    BadRequest,
    /// A session name or pattern that cannot be used.
    InvalidArgument,
    /// No session by that name (or none running).
    UnknownSession,
    /// A session by that name is already recording.
    AlreadyRunning,
    /// Starting or stopping failed inside recd.
    Failed,
}
