//! Requests, responses and their framing.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::state::{FileState, SessionState};

/// The protocol version this build speaks; a request with another one is refused.
pub const PROTOCOL_VERSION: u32 = 1;

/// The largest request or response line, newline included: room for a start request
/// with [`MAX_ATTACHMENT_BYTES`](crate::MAX_ATTACHMENT_BYTES) of attachments in base64.
pub const MAX_MESSAGE_BYTES: usize = 8 << 20;

/// What travels on the wire for a request: the version, then the request's fields.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RequestEnvelope {
    /// [`PROTOCOL_VERSION`] of the sender.
    pub version: u32,
    /// The request.
    #[serde(flatten)]
    pub request: Request,
}

/// What a client asks recd to do.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "request", rename_all = "snake_case")]
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
    /// Write the window around now from a pre-trigger session's buffer into a new file
    /// (or extend the window being written, when they overlap).
    Trigger(TriggerRequest),
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
    Upload(crate::UploadRequest),
    /// The upload queue and the uploader's state (`rec upload --status`).
    UploadStatus,
}

/// Whether a session is paused now, after a pause or resume request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionPaused {
    /// The session.
    pub name: String,
    /// Paused now.
    pub paused: bool,
    /// The request changed it (false: it was paused, or running, already).
    pub changed: bool,
}

/// A marker written into a session's files.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionMarked {
    /// The session.
    pub name: String,
    /// The marker's time, ns since the Unix epoch.
    pub time_ns: u64,
    /// The files it goes into (those being written).
    pub files: Vec<PathBuf>,
}

/// A trigger of a pre-trigger session.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct TriggerRequest {
    /// The session; `None` means the only one running.
    pub name: Option<String>,
    /// Milliseconds before now to keep; `None` keeps the whole buffer.
    pub before_ms: Option<u64>,
    /// Milliseconds after now that still go to the file.
    pub after_ms: u64,
    /// Why; it goes into the file's `trigger` Metadata record.
    pub note: String,
    /// The trigger's moment, ns since the Unix epoch; `None` is when recd gets it. A
    /// moment ahead is waited for; one older than the buffer reaches is refused.
    pub at_ns: Option<u64>,
    /// The asker's id: a trigger repeated with the same id writes nothing new and gets
    /// the first one's answer.
    pub id: Option<String>,
}

/// The files a trigger writes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionTriggered {
    /// The session.
    pub name: String,
    /// The trigger's moment, ns since the Unix epoch.
    pub time_ns: u64,
    /// One file per source family of the session.
    pub files: Vec<TriggeredFile>,
    /// The asker's id, if it gave one.
    #[serde(default)]
    pub id: Option<String>,
    /// A trigger with this id was taken before: this is its answer, nothing new written.
    #[serde(default)]
    pub repeated: bool,
}

/// A file a trigger writes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TriggeredFile {
    /// Where it is.
    pub path: PathBuf,
    /// The first log time it holds, ns since the Unix epoch (latched samples aside).
    pub start_ns: u64,
    /// The last log time it holds, ns since the Unix epoch; it is complete once this has
    /// passed and it left the session's `current_files`.
    pub end_ns: u64,
    /// The trigger fell inside the window of a file being written, whose end it moved
    /// rather than start another.
    pub extended: bool,
}

/// How to record a new session; what is left out comes from recd's configuration.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct StartRequest {
    /// The session's name, which is also its directory under recd's data directory
    /// (`<name>_2`, `<name>_3`, … when an older session's files are in `<name>`); recd
    /// picks one when missing.
    pub name: Option<String>,
    /// Glob patterns of topics to record; empty means all.
    pub topics: Vec<String>,
    /// Glob patterns of topics never to record.
    pub exclude: Vec<String>,
    /// Start a new file once one holds this many bytes.
    pub max_file_size: Option<u64>,
    /// Start a new file after this many milliseconds.
    pub max_duration_ms: Option<u64>,
    /// Keep a CRC-32 of each file's data section.
    pub crc: bool,
    /// Record DDS / ROS 2 topics of this domain too (overrides recd's configuration).
    pub dds_domain: Option<u16>,
    /// Leave iceoryx2 shared memory out (a DDS-only session).
    pub no_iceoryx2: bool,
    /// How to write the files: `auto`, `direct` or `buffered` (overrides recd's
    /// `io_mode`).
    pub io_mode: Option<String>,
    /// Keep at most this many files of the session (the one being written included);
    /// older finished ones are deleted.
    pub max_files: Option<u32>,
    /// Stop the session by itself this many milliseconds after it started.
    pub duration_ms: Option<u64>,
    /// Entries of a Metadata record (`user/<file name>`) at the start of every file.
    pub metadata: std::collections::BTreeMap<String, String>,
    /// Files put at the start of every file as Attachments.
    pub attachments: Vec<crate::AttachedFile>,
    /// Start paused: nothing is written until a [`Request::Resume`].
    pub paused: bool,
    /// Keep this many milliseconds of messages in memory and write only around
    /// triggers ([`Request::Trigger`]).
    pub pre_trigger_ms: Option<u64>,
    /// The pre-trigger buffer's bytes (recd's default: 1 GiB).
    pub buffer_size: Option<u64>,
    /// Upload the session's finished files (`Some(true)`: `rec start --upload`) or not
    /// (`--no-upload`); none follows recd's configuration (on when `[upload]` is set).
    pub upload: Option<bool>,
    /// What recd does to the session's files once closed (`rec start --finish`); none
    /// follows `[recording] finish`.
    pub finish: Option<crate::FinishMode>,
}

/// recd's answer to one request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "response", rename_all = "snake_case")]
pub enum Response {
    /// Answer to [`Request::Ping`].
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
    /// Answer to [`Request::Topics`].
    Topics(TopicsFound),
    /// Answer to [`Request::Pause`] and [`Request::Resume`].
    Paused(SessionPaused),
    /// Answer to [`Request::Mark`].
    Marked(SessionMarked),
    /// Answer to [`Request::Trigger`].
    Triggered(SessionTriggered),
    /// Answer to [`Request::Upload`].
    UploadsQueued(crate::UploadsQueued),
    /// Answer to [`Request::UploadStatus`].
    Uploads(crate::UploadStatus),
    /// Done; nothing to report.
    Done,
    /// The request failed; nothing changed.
    Error(ErrorReply),
}

/// Which sources `rec topics` looks at, and for how long.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct TopicsRequest {
    /// Look at DDS / ROS 2 topics of this domain too (overrides recd's configuration).
    pub dds_domain: Option<u16>,
    /// Leave iceoryx2 shared memory out.
    pub no_iceoryx2: bool,
    /// Milliseconds of discovery before rates are measured.
    pub discovery_ms: u64,
    /// Milliseconds over which rates are measured.
    pub window_ms: u64,
}

/// Topics that could be recorded now.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TopicsFound {
    /// Topics, in the order found (`rec topics` sorts them by name).
    pub topics: Vec<TopicOnOffer>,
    /// Services that match but could not be subscribed to, with the reason.
    pub problems: std::collections::BTreeMap<String, String>,
}

/// One topic that could be recorded now.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TopicOnOffer {
    /// Its channel name in a recording (`/chatter` for DDS topic `rt/chatter`).
    pub name: String,
    /// Where it comes from: the iceoryx2 service, or `dds:` and the DDS topic.
    pub service: String,
    /// Its message type.
    pub type_name: String,
    /// Publishers (iceoryx2) or writers (DDS).
    pub publishers: u64,
    /// Messages per second.
    pub messages_per_s: f64,
    /// Payload bytes per second.
    pub bytes_per_s: f64,
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

/// A session that started.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionStarted {
    /// Its name.
    pub name: String,
    /// Its catalog id.
    pub id: i64,
    /// The directory its files go to.
    pub directory: PathBuf,
    /// How its files are written: `direct` or `buffered` (what `auto` chose).
    #[serde(default)]
    pub io_mode: String,
}

/// A session that stopped.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionStopped {
    /// Its name.
    pub name: String,
    /// Its files, finalized.
    pub files: Vec<FileEntry>,
    /// Seconds it recorded.
    pub duration_s: f64,
    /// Per-topic counts (rates are 0).
    pub topics: Vec<RatedTopic>,
    /// A write error that ended recording early, if any.
    pub write_error: Option<String>,
    /// Its receive threads: scheduling, lateness, loans taken back.
    #[serde(default)]
    pub receive_threads: Vec<ReceiveThreadReport>,
}

/// Live view of a running session.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionStatus {
    /// Its name.
    pub name: String,
    /// Its catalog id.
    pub id: i64,
    /// The directory its files go to.
    pub directory: PathBuf,
    /// The files being written: one, or two when the session records iceoryx2 and DDS
    /// (a file per source family); none while paused for disk space.
    pub current_files: Vec<PathBuf>,
    /// Seconds since the start.
    pub elapsed_s: f64,
    /// Bytes written so far.
    pub bytes_written: u64,
    /// Bytes per second over the last second or so.
    pub bytes_per_s: f64,
    /// Per-topic counts and rates.
    pub topics: Vec<RatedTopic>,
    /// A write error that stopped the writing, if any.
    pub write_error: Option<String>,
    /// Services that match but could not be opened, with the reason.
    pub problems: Vec<(String, String)>,
    /// How its files are written: `direct` or `buffered` (what `auto` chose).
    #[serde(default)]
    pub io_mode: String,
    /// Set while writing is paused because its file system is nearly full.
    #[serde(default)]
    pub disk_full: Option<DiskFull>,
    /// Paused by request (`rec pause`): messages are counted as paused, not written.
    #[serde(default)]
    pub paused: bool,
    /// A pre-trigger session's buffer; `None` for one that writes everything.
    #[serde(default)]
    pub buffer: Option<BufferStatus>,
    /// Its receive threads: scheduling, lateness, loans taken back.
    #[serde(default)]
    pub receive_threads: Vec<ReceiveThreadReport>,
}

/// A receive thread of a session: how it is scheduled and how late its passes came.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReceiveThreadReport {
    /// The source it receives for: `iceoryx2` or `dds`.
    pub source: String,
    /// `SCHED_FIFO <priority>`, or `nice <value>`.
    pub scheduling: String,
    /// Why it did not get the real-time priority configured (`receive_priority`).
    pub priority_warning: Option<String>,
    /// Why its preallocated memory could not be locked.
    #[serde(default)]
    pub memory_warning: Option<String>,
    /// Passes started by a poll schedule (topics without an event service).
    pub passes: u64,
    /// How late such a pass started behind its schedule, 99.9th percentile, in µs.
    pub lateness_p999_us: f64,
    /// The latest, in µs.
    pub lateness_max_us: f64,
    /// Large samples copied into the spill pool to free their loan for a waiting one.
    pub spilled: u64,
    /// Loans taken back from the writer: spilled, or given up (dropped) with the pool full.
    pub reclaimed: u64,
}

/// What a pre-trigger session's buffer holds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BufferStatus {
    /// Seconds of messages it keeps (`--pre-trigger`).
    pub duration_s: f64,
    /// Its memory in bytes (`--buffer-size`).
    pub capacity_bytes: u64,
    /// Messages held.
    pub messages: u64,
    /// Their bytes.
    pub bytes: u64,
    /// Seconds between the oldest and the newest held.
    pub span_s: f64,
    /// Messages let go without a trigger so far (the topics' `evicted`, summed).
    pub evicted: u64,
}

/// A session paused because the free space on its file system fell below recd's
/// `min_free_space`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct DiskFull {
    /// Bytes free when last looked at.
    pub free: u64,
    /// `min_free_space`.
    pub minimum: u64,
}

/// A topic's counts as recd reports them: live in a status, final in a stop report and
/// in the catalog.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TopicReport {
    /// The channel name in the file.
    pub name: String,
    /// The source's name of the topic: the iceoryx2 service name, or `dds:<topic>` for a
    /// DDS topic.
    pub service: String,
    /// Samples taken from the source.
    pub received: u64,
    /// Messages written.
    pub written: u64,
    /// Received but not written (full handoff, failed write).
    pub dropped: u64,
    /// Never received: gaps in the publishers' sequence numbers.
    pub lost: u64,
    /// Receive passes that found the subscriber's queue full: samples may have been
    /// overwritten there that no sequence number shows.
    #[serde(default)]
    pub overflows: u64,
    /// Payload bytes written.
    pub bytes_written: u64,
    /// Received while the session was paused, so not written.
    #[serde(default)]
    pub paused: u64,
    /// Let go of by a pre-trigger session's buffer without a trigger.
    #[serde(default)]
    pub evicted: u64,
    /// A receive pass found the queue full on a topic whose samples carry no sequence
    /// numbers: samples may have been overwritten there, and nobody can say how many.
    #[serde(default)]
    pub unknown_loss: bool,
}

/// A topic's counts with its recent rates.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RatedTopic {
    /// The counts (their fields appear inline on the wire).
    #[serde(flatten)]
    pub report: TopicReport,
    /// Messages per second lately (status only; 0 in a stop report).
    pub messages_per_s: f64,
    /// Payload bytes per second lately (status only; 0 in a stop report).
    pub bytes_per_s: f64,
}

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
    pub upload: Option<crate::UploadState>,
}

/// One message as a line: JSON and a newline.
pub fn encode<T: Serialize>(message: &T) -> Vec<u8> {
    let mut line = serde_json::to_vec(message).expect("protocol types serialize");
    line.push(b'\n');
    line
}

/// Reads a request line; the error says what is wrong with it for the reply.
pub fn decode_request(line: &[u8]) -> Result<Request, String> {
    let value: serde_json::Value =
        serde_json::from_slice(line).map_err(|e| format!("not a JSON request: {e}"))?;
    match value.get("version").and_then(|v| v.as_u64()) {
        Some(version) if version == u64::from(PROTOCOL_VERSION) => {}
        Some(version) => {
            return Err(format!(
                "protocol version {version} is not spoken here (recd speaks {PROTOCOL_VERSION}); use a rec of the same release"
            ))
        }
        None => return Err("a request needs a numeric \"version\"".into()),
    }
    let envelope: RequestEnvelope =
        serde_json::from_value(value).map_err(|e| format!("unknown or malformed request: {e}"))?;
    Ok(envelope.request)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_round_trip_through_lines() {
        let requests = [
            Request::Ping,
            Request::Start(StartRequest {
                name: Some("drive".into()),
                topics: vec!["camera/*".into()],
                max_file_size: Some(1 << 30),
                ..StartRequest::default()
            }),
            Request::Stop {
                name: None,
                all: true,
            },
            Request::Status { name: None },
            Request::List,
            Request::Trigger(TriggerRequest {
                name: Some("drive".into()),
                before_ms: Some(30_000),
                after_ms: 10_000,
                note: "hard brake".into(),
                at_ns: Some(1_700_000_000_000_000_000),
                id: Some("brake-17".into()),
            }),
        ];
        for request in requests {
            let line = encode(&RequestEnvelope {
                version: PROTOCOL_VERSION,
                request: request.clone(),
            });
            assert_eq!(*line.last().unwrap(), b'\n');
            assert_eq!(decode_request(&line[..line.len() - 1]), Ok(request));
        }
    }

    #[test]
    fn bad_requests_say_what_is_wrong() {
        assert!(decode_request(b"{nope").unwrap_err().contains("not a JSON"));
        assert!(decode_request(br#"{"request":"ping"}"#)
            .unwrap_err()
            .contains("version"));
        assert!(decode_request(br#"{"version":99,"request":"ping"}"#)
            .unwrap_err()
            .contains("99"));
        assert!(decode_request(br#"{"version":1,"request":"explode"}"#)
            .unwrap_err()
            .contains("unknown"));
    }

    #[test]
    fn replies_keep_their_wire_field_names() {
        let stopped = SessionStopped {
            name: "drive".into(),
            files: vec![FileEntry {
                path: "/d/a.mcap".into(),
                bytes: 10,
                messages: 2,
                state: FileState::NeedsReindex,
                upload: Some(crate::UploadState::Uploading),
            }],
            duration_s: 1.5,
            topics: vec![RatedTopic {
                report: TopicReport {
                    name: "/imu".into(),
                    service: "dds:rt/imu".into(),
                    received: 3,
                    written: 2,
                    dropped: 1,
                    lost: 0,
                    overflows: 0,
                    bytes_written: 200,
                    paused: 0,
                    evicted: 0,
                    unknown_loss: true,
                },
                messages_per_s: 0.0,
                bytes_per_s: 0.0,
            }],
            write_error: None,
            receive_threads: vec![ReceiveThreadReport {
                source: "iceoryx2".into(),
                scheduling: "SCHED_FIFO 10".into(),
                priority_warning: None,
                memory_warning: None,
                passes: 7,
                lateness_p999_us: 12.5,
                lateness_max_us: 40.0,
                spilled: 1,
                reclaimed: 2,
            }],
        };
        let json = serde_json::to_string(&stopped).unwrap();
        assert_eq!(
            json,
            r#"{"name":"drive","files":[{"path":"/d/a.mcap","bytes":10,"messages":2,"state":"needs-reindex","upload":"uploading"}],"duration_s":1.5,"topics":[{"name":"/imu","service":"dds:rt/imu","received":3,"written":2,"dropped":1,"lost":0,"overflows":0,"bytes_written":200,"paused":0,"evicted":0,"unknown_loss":true,"messages_per_s":0.0,"bytes_per_s":0.0}],"write_error":null,"receive_threads":[{"source":"iceoryx2","scheduling":"SCHED_FIFO 10","priority_warning":null,"memory_warning":null,"passes":7,"lateness_p999_us":12.5,"lateness_max_us":40.0,"spilled":1,"reclaimed":2}]}"#
        );
        assert_eq!(
            serde_json::from_str::<SessionStopped>(&json).unwrap(),
            stopped
        );
    }
}
