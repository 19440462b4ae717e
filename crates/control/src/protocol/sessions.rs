//! Starting, stopping, pausing and resuming a session: how to record, and what recd answers.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use super::catalog::FileEntry;
use super::status::ReceiveThreadReport;
use super::topics::RatedTopic;
use crate::attachment::AttachedFile;
use crate::state::FinishMode;
use recd_health::{HealthState, Verdict};

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
    /// Record ROS 2 topics over Zenoh (rmw_zenoh) of this domain too (overrides recd's
    /// `[zenoh] domain`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub zenoh_domain: Option<u16>,
    /// Leave iceoryx2 shared memory out (a DDS- or Zenoh-only session).
    pub no_iceoryx2: bool,
    /// How to write the files: `auto`, `direct` or `buffered` (overrides recd's
    /// `io_mode`).
    pub io_mode: Option<String>,
    /// Keep at most this many files of the session (the one being written included);
    /// older finished ones are deleted.
    pub max_files: Option<u32>,
    /// Delete the session's files older than this many milliseconds (by their last
    /// message), unless an incident pins them; none follows `[recording] max_age`.
    pub max_age_ms: Option<u64>,
    /// Stop the session by itself this many milliseconds after it started.
    pub duration_ms: Option<u64>,
    /// Entries of a Metadata record (`user/<file name>`) at the start of every file.
    pub metadata: std::collections::BTreeMap<String, String>,
    /// Files put at the start of every file as Attachments.
    pub attachments: Vec<AttachedFile>,
    /// Start paused: nothing is written until a [`Request::Resume`](crate::Request::Resume).
    pub paused: bool,
    /// Keep this many milliseconds of messages in memory and write only around
    /// triggers ([`Request::Trigger`](crate::Request::Trigger)).
    pub pre_trigger_ms: Option<u64>,
    /// The pre-trigger buffer's bytes (recd's default: 1 GiB).
    pub buffer_size: Option<u64>,
    /// Upload the session's finished files (`Some(true)`: `rec start --upload`) or not
    /// (`--no-upload`); none follows recd's configuration (on when `[upload]` is set).
    pub upload: Option<bool>,
    /// What recd does to the session's files once closed (`rec start --finish`); none
    /// follows `[recording] finish`.
    pub finish: Option<FinishMode>,
    /// What is expected of the topics, in `rec start --expect`'s compact form
    /// (`camera/*:25hz`, `/imu:max_gap=20ms,required`), before recd's `[[expect]]`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub expect: Vec<String>,
    /// Glob patterns of message types to record (`rec start --topic-type`); empty
    /// means all.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub topic_types: Vec<String>,
    /// Glob patterns of message types never to record.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub exclude_topic_types: Vec<String>,
    /// Rate limits, `GLOB=HZ` (`rec start --max-rate`), before recd's `[[topic]]`
    /// rules.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub max_rate: Vec<String>,
    /// Downsampling, `GLOB=N`: keep one sample in N (`rec start --downsample`), before
    /// recd's `[[topic]]` rules.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub downsample: Vec<String>,
    /// Glob patterns of ROS 2 services whose introspection events to record
    /// (`rec start --services`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub services: Vec<String>,
    /// Record every ROS 2 service's introspection events (`rec start --all-services`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub all_services: bool,
    /// Glob patterns of ROS 2 services never to record.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub exclude_services: Vec<String>,
    /// Glob patterns of ROS 2 actions to record (`rec start --actions`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub actions: Vec<String>,
    /// Record every ROS 2 action (`rec start --all-actions`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub all_actions: bool,
    /// Glob patterns of ROS 2 actions never to record.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub exclude_actions: Vec<String>,
    /// Read every ROS 2 node's parameters into each file and record
    /// `/parameter_events` (`rec start --parameters`); recd's `[recording] parameters`
    /// turns it on for every session.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub parameters: bool,
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
    /// Whether the recording is usable: its verdict and the required topics that failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub health: Option<SessionHealth>,
}

/// A session's health at its end.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionHealth {
    /// `ok`, `degraded` (a topic stalled or was slow) or `missing` (a required topic
    /// never came).
    pub verdict: Verdict,
    /// Required topics (or patterns) that were missing or stalled in the session, with
    /// the worst state each reached: these make `rec stop` exit 5.
    pub failed_required: Vec<FailedRequirement>,
}

/// A required topic that failed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FailedRequirement {
    /// The topic, or the required pattern that matched no topic.
    pub topic: String,
    /// `missing` or `stalled`.
    pub state: HealthState,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::topics::TopicReport;
    use crate::state::FileState;

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
                health: None,
                damaged_at: None,
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
                    filtered: 0,
                    repeated: 0,
                    unknown_loss: true,
                },
                messages_per_s: 0.0,
                bytes_per_s: 0.0,
                health: None,
                last_sample_ns: None,
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
            health: None,
        };
        let json = serde_json::to_string(&stopped).unwrap();
        assert_eq!(
            json,
            r#"{"name":"drive","files":[{"path":"/d/a.mcap","bytes":10,"messages":2,"state":"needs-reindex","upload":"uploading"}],"duration_s":1.5,"topics":[{"name":"/imu","service":"dds:rt/imu","received":3,"written":2,"dropped":1,"lost":0,"overflows":0,"bytes_written":200,"paused":0,"evicted":0,"filtered":0,"repeated":0,"unknown_loss":true,"messages_per_s":0.0,"bytes_per_s":0.0}],"write_error":null,"receive_threads":[{"source":"iceoryx2","scheduling":"SCHED_FIFO 10","priority_warning":null,"memory_warning":null,"passes":7,"lateness_p999_us":12.5,"lateness_max_us":40.0,"spilled":1,"reclaimed":2}]}"#
        );
        assert_eq!(
            serde_json::from_str::<SessionStopped>(&json).unwrap(),
            stopped
        );
    }
}
