//! Requests, responses and their framing; this module only gathers its parts, one per concern.

mod catalog;
mod framing;
mod incidents;
mod request;
mod response;
mod rules;
mod sessions;
mod status;
mod topics;
mod topics_set;
mod triggers;

pub use catalog::{FileEntry, ListedSession};
pub use framing::{decode_request, encode, RequestEnvelope, MAX_MESSAGE_BYTES, PROTOCOL_VERSION};
pub use incidents::{
    origin, CutState, Incident, IncidentFile, IncidentTaken, IncidentsOverview, IncidentsReleased,
    Released, RuleFiring,
};
pub use request::Request;
pub use response::{ErrorKind, ErrorReply, Response};
pub use rules::{RuleState, RuleStatus};
pub use sessions::{
    FailedRequirement, SessionHealth, SessionPaused, SessionStarted, SessionStopped, StartRequest,
};
pub use status::{BufferStatus, DiskFull, ReceiveThreadReport, SessionStatus};
pub use topics::{RatedTopic, TopicOnOffer, TopicReport, TopicsFound, TopicsRequest};
pub use topics_set::{SessionTopicsChanged, SetTopicsRequest};
pub use triggers::{SessionMarked, SessionTriggered, TriggerRequest, TriggeredFile};
