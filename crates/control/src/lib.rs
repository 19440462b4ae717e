//! The control protocol between `recd` and `rec`.
//!
//! A client connects to recd's Unix socket and sends one request per line: a JSON object
//! of at most [`MAX_MESSAGE_BYTES`] with the protocol `version` and the request. recd
//! answers each with one line holding a [`Response`]. Requests and replies are plain data
//! types shared by both sides; [`Client`] is the blocking client `rec` uses.

mod client;
mod protocol;

pub use client::{Client, ClientError};
pub use protocol::{
    decode_request, encode, ErrorKind, ErrorReply, FileEntry, ListedSession, Request,
    RequestEnvelope, Response, SessionStarted, SessionStatus, SessionStopped, StartRequest,
    TopicEntry, TopicStats, MAX_MESSAGE_BYTES, PROTOCOL_VERSION,
};
