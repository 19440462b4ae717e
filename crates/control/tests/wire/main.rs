//! The control protocol's wire format, pinned by golden fixtures in `tests/wire/fixtures/`.
//!
//! Every request kind and every response kind is built with non-default values (and the
//! optional parts both present and absent), framed the way `rec` and recd frame them, and
//! compared byte for byte with a fixture written by an earlier build. Decoding a fixture
//! and encoding it again must give the same bytes. Hand-written sparse messages (fields
//! left out that older peers may leave out) must decode to their defaults.
//!
//! After a deliberate change of the wire format, write the fixtures again with
//! `RECD_BLESS=1 cargo test -p recd-control --test wire` and review the diff.

mod requests;
mod responses;
mod sparse;
mod values;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use recd_control::{
    decode_request, encode, ErrorKind, Request, RequestEnvelope, Response, PROTOCOL_VERSION,
};

/// One message of a fixture: a request (sent in its envelope) or a response. A fixture
/// is built once, so a start request's size does not matter.
#[derive(Debug, Clone)]
#[allow(clippy::large_enum_variant)]
enum Message {
    Request(Request),
    Response(Response),
}

impl Message {
    /// The line as it travels: what `Client::request` writes for a request, what recd
    /// writes for a response.
    fn encode(&self) -> Vec<u8> {
        match self {
            Self::Request(request) => encode(&RequestEnvelope {
                version: PROTOCOL_VERSION,
                request: request.clone(),
            }),
            Self::Response(response) => encode(response),
        }
    }

    /// Reads `line` back as the receiving side does: recd with [`decode_request`] (the
    /// newline cut off), `rec` with `serde_json::from_slice`.
    fn decode_like(&self, line: &[u8]) -> Self {
        match self {
            Self::Request(_) => {
                let body = line
                    .strip_suffix(b"\n")
                    .expect("a line ends with a newline");
                let request = decode_request(body).expect("the request decodes");
                let envelope: RequestEnvelope =
                    serde_json::from_slice(line).expect("the envelope decodes");
                assert_eq!(envelope.version, PROTOCOL_VERSION);
                assert_eq!(envelope.request, request);
                Self::Request(request)
            }
            Self::Response(_) => {
                Self::Response(serde_json::from_slice(line).expect("the response decodes"))
            }
        }
    }

    fn same_value(&self, other: &Self) -> bool {
        match (self, other) {
            (Self::Request(a), Self::Request(b)) => a == b,
            (Self::Response(a), Self::Response(b)) => a == b,
            _ => false,
        }
    }
}

/// Every request kind; the match has no wildcard, so a new kind fails to compile here
/// until it gets a fixture.
fn request_kind(request: &Request) -> &'static str {
    match request {
        Request::Ping => "ping",
        Request::Start(_) => "start",
        Request::Stop { .. } => "stop",
        Request::Status { .. } => "status",
        Request::List => "list",
        Request::Files { .. } => "files",
        Request::Topics(_) => "topics",
        Request::Pause { .. } => "pause",
        Request::Resume { .. } => "resume",
        Request::Split { .. } => "split",
        Request::Mark { .. } => "mark",
        Request::SetTopics(_) => "set_topics",
        Request::Trigger(_) => "trigger",
        Request::Incidents { .. } => "incidents",
        Request::ReleaseIncident { .. } => "release_incident",
        Request::Reindexed { .. } => "reindexed",
        Request::Upload(_) => "upload",
        Request::UploadStatus => "upload_status",
    }
}

const REQUEST_KINDS: [&str; 18] = [
    "ping",
    "start",
    "stop",
    "status",
    "list",
    "files",
    "topics",
    "pause",
    "resume",
    "split",
    "mark",
    "set_topics",
    "trigger",
    "incidents",
    "release_incident",
    "reindexed",
    "upload",
    "upload_status",
];

/// Every response kind, as [`request_kind`].
fn response_kind(response: &Response) -> &'static str {
    match response {
        Response::Pong { .. } => "pong",
        Response::Started(_) => "started",
        Response::Stopped { .. } => "stopped",
        Response::Status { .. } => "status",
        Response::List { .. } => "list",
        Response::Files { .. } => "files",
        Response::Topics(_) => "topics",
        Response::Paused(_) => "paused",
        Response::Marked(_) => "marked",
        Response::TopicsChanged(_) => "topics_changed",
        Response::Triggered(_) => "triggered",
        Response::Incidents { .. } => "incidents",
        Response::IncidentsReleased(_) => "incidents_released",
        Response::UploadsQueued(_) => "uploads_queued",
        Response::Uploads(_) => "uploads",
        Response::Done => "done",
        Response::Error(_) => "error",
    }
}

const RESPONSE_KINDS: [&str; 17] = [
    "pong",
    "started",
    "stopped",
    "status",
    "list",
    "files",
    "topics",
    "paused",
    "marked",
    "topics_changed",
    "triggered",
    "incidents",
    "incidents_released",
    "uploads_queued",
    "uploads",
    "done",
    "error",
];

/// Every error kind, as [`request_kind`].
fn error_kind(kind: ErrorKind) -> &'static str {
    match kind {
        ErrorKind::BadRequest => "bad_request",
        ErrorKind::InvalidArgument => "invalid_argument",
        ErrorKind::UnknownSession => "unknown_session",
        ErrorKind::AlreadyRunning => "already_running",
        ErrorKind::Failed => "failed",
    }
}

const ERROR_KINDS: [ErrorKind; 5] = [
    ErrorKind::BadRequest,
    ErrorKind::InvalidArgument,
    ErrorKind::UnknownSession,
    ErrorKind::AlreadyRunning,
    ErrorKind::Failed,
];

/// Every named message the fixtures pin: the requests, then the responses.
fn cases() -> Vec<(String, Message)> {
    let mut cases: Vec<(String, Message)> = requests::cases()
        .into_iter()
        .map(|(name, message)| (name.to_string(), message))
        .collect();
    cases.extend(responses::cases());
    cases
}

fn fixture_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/wire/fixtures")
}

fn blessing() -> bool {
    std::env::var_os("RECD_BLESS").is_some_and(|value| value != "0" && !value.is_empty())
}

/// Writes `bytes` as fixture `name` when blessing; otherwise checks them against it.
/// Returns a complaint when they differ.
fn check_fixture(name: &str, bytes: &[u8]) -> Option<String> {
    let path = fixture_dir().join(format!("{name}.json"));
    if blessing() {
        std::fs::create_dir_all(fixture_dir()).unwrap();
        std::fs::write(&path, bytes).unwrap();
        return None;
    }
    match std::fs::read(&path) {
        Ok(golden) if golden == bytes => None,
        Ok(golden) => Some(format!(
            "{name}: the encoding changed\n  golden: {}\n  now:    {}",
            String::from_utf8_lossy(&golden),
            String::from_utf8_lossy(bytes)
        )),
        Err(e) => Some(format!(
            "{name}: no fixture at {} ({e}); write it with RECD_BLESS=1",
            path.display()
        )),
    }
}

#[test]
fn every_request_and_response_kind_has_a_fixture() {
    let cases = cases();
    let requests: BTreeSet<&str> = cases
        .iter()
        .filter_map(|(_, message)| match message {
            Message::Request(request) => Some(request_kind(request)),
            Message::Response(_) => None,
        })
        .collect();
    let responses: BTreeSet<&str> = cases
        .iter()
        .filter_map(|(_, message)| match message {
            Message::Response(response) => Some(response_kind(response)),
            Message::Request(_) => None,
        })
        .collect();
    assert_eq!(requests, BTreeSet::from(REQUEST_KINDS));
    assert_eq!(responses, BTreeSet::from(RESPONSE_KINDS));
    let names: BTreeSet<&str> = cases.iter().map(|(name, _)| name.as_str()).collect();
    assert_eq!(names.len(), cases.len(), "fixture names repeat");
}

#[test]
fn wire_format_matches_the_golden_fixtures() {
    let mut complaints = Vec::new();
    let mut expected = BTreeSet::new();
    for (name, message) in cases() {
        let line = message.encode();
        assert_eq!(line.last(), Some(&b'\n'), "{name}");
        assert!(!line[..line.len() - 1].contains(&b'\n'), "{name}: one line");
        complaints.extend(check_fixture(&name, &line));
        expected.insert(format!("{name}.json"));

        // The golden bytes decode to the same value and encode to the same bytes.
        let golden = std::fs::read(fixture_dir().join(format!("{name}.json")))
            .unwrap_or_else(|_| line.clone());
        let decoded = message.decode_like(&golden);
        assert!(
            decoded.same_value(&message),
            "{name}: decodes to {decoded:?}, not {message:?}"
        );
        assert_eq!(
            String::from_utf8_lossy(&decoded.encode()),
            String::from_utf8_lossy(&golden),
            "{name}: decoding and encoding again changed the bytes"
        );
    }
    for (name, kind, text) in sparse::cases() {
        let mut line = text.as_bytes().to_vec();
        line.push(b'\n');
        let decoded = kind.decode_like(&line);
        let encoded = decoded.encode();
        complaints.extend(check_fixture(name, &encoded));
        expected.insert(format!("{name}.json"));
        // What it decoded to travels unchanged from here on.
        assert!(kind.decode_like(&encoded).same_value(&decoded), "{name}");
    }
    let present: BTreeSet<String> = std::fs::read_dir(fixture_dir())
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    for stray in present.difference(&expected) {
        complaints.push(format!("{stray}: a fixture no case writes"));
    }
    assert!(complaints.is_empty(), "{}", complaints.join("\n"));
}
