//! The control protocol between `recd` and `rec`.
//!
//! This crate is what the daemon and its command-line tool agree on: the requests `rec`
//! sends, the replies recd gives, their line framing and the blocking [`Client`].
//!
//! A client connects to recd's Unix socket and sends one request per line: a JSON object
//! of at most [`MAX_MESSAGE_BYTES`] with the protocol `version` and the request. recd
//! answers each with one line holding a [`Response`]. Requests and replies are plain data
//! types shared by both sides; [`SessionState`] and [`FileState`] are also what the
//! catalog stores.

#![warn(missing_docs)]
#![warn(clippy::undocumented_unsafe_blocks)]

mod attachment;
mod backlog;
mod client;
mod protocol;
mod state;
pub mod units;
mod upload;

pub use attachment::{AttachedFile, MAX_ATTACHMENT_BYTES};
pub use backlog::Backlog;
pub use client::{Client, ClientError};
pub use protocol::{
    decode_request, encode, origin, BufferStatus, CutState, DiskFull, ErrorKind, ErrorReply,
    FailedRequirement, FileEntry, Incident, IncidentFile, IncidentTaken, IncidentsOverview,
    IncidentsReleased, ListedSession, RatedTopic, ReceiveThreadReport, Released, Request,
    RequestEnvelope, Response, RuleFiring, RuleState, RuleStatus, SessionHealth, SessionMarked,
    SessionPaused, SessionStarted, SessionStatus, SessionStopped, SessionTopicsChanged,
    SessionTriggered, SetTopicsRequest, StartRequest, TopicOnOffer, TopicReport, TopicsFound,
    TopicsRequest, TriggerRequest, TriggeredFile, MAX_MESSAGE_BYTES, PROTOCOL_VERSION,
};
pub use recd_health;
pub use state::{FileState, FinishMode, SessionState, UnknownState, UploadState, UploadsMode};
pub use upload::{UploadEntry, UploadRequest, UploadStatus, UploadsQueued, UPLOADED_LISTED};
