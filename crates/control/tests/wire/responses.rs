//! The responses the fixtures pin: every kind, every error kind, with options both present
//! and absent.

use std::collections::BTreeMap;

use recd_control::{
    CutState, ErrorReply, FileState, Incident, IncidentFile, IncidentTaken, IncidentsReleased,
    Released, Response, RuleFiring, RuleState, RuleStatus, SessionMarked, SessionPaused,
    SessionStarted, SessionState, SessionStopped, SessionTopicsChanged, SessionTriggered,
    TopicOnOffer, TopicsFound, TriggeredFile, UploadState, UploadStatus, UploadsMode,
    UploadsQueued, PROTOCOL_VERSION,
};

use crate::values::{
    every_file_state, listed_session, rated_topic, receive_thread_full, receive_thread_quiet,
    status_full, status_plain, upload_entry,
};
use crate::{error_kind, Message, ERROR_KINDS};

/// The named responses, in a fixed order.
pub fn cases() -> Vec<(String, Message)> {
    use Message::Response as R;
    let cases = [
        (
            "response-pong",
            R(Response::Pong {
                version: PROTOCOL_VERSION,
                daemon: "0.1.0-test".into(),
            }),
        ),
        (
            "response-started",
            R(Response::Started(SessionStarted {
                name: "drive_2".into(),
                id: 9_007_199_254_740_993,
                directory: "/data/drive_2".into(),
                io_mode: "buffered".into(),
            })),
        ),
        (
            "response-stopped",
            R(Response::Stopped {
                sessions: vec![
                    SessionStopped {
                        name: "drive".into(),
                        files: every_file_state(),
                        duration_s: 3_725.125,
                        topics: vec![rated_topic("/imu", true), rated_topic("/gps", false)],
                        write_error: Some("disk full".into()),
                        receive_threads: vec![receive_thread_full(), receive_thread_quiet()],
                        health: None,
                    },
                    SessionStopped {
                        name: "bench".into(),
                        files: Vec::new(),
                        duration_s: 0.0,
                        topics: Vec::new(),
                        write_error: None,
                        receive_threads: Vec::new(),
                        health: None,
                    },
                ],
            }),
        ),
        (
            "response-stopped-none",
            R(Response::Stopped {
                sessions: Vec::new(),
            }),
        ),
        (
            "response-status",
            R(Response::Status {
                sessions: vec![status_full(), status_plain()],
                backlog: Some(recd_control::Backlog {
                    finish_waiting: 2,
                    finish_oldest_s: Some(61.5),
                    upload_waiting: 3,
                    upload_oldest_s: None,
                    deleted_unfinished: 1,
                    deleted_unuploaded: 4,
                    background_mode: "throttled".into(),
                    background:
                        "throttled: recordings lose samples with or without background work".into(),
                    background_on: false,
                    max_delay_s: Some(600.0),
                }),
                rules: vec![
                    RuleStatus {
                        name: "hard_brake".into(),
                        origin: "recd.toml".into(),
                        watches: "topic /vehicle/status".into(),
                        state: RuleState::Watching,
                        problem: None,
                        evaluated: 12_000,
                        skipped: 3,
                        errors: 0,
                        fired: 2,
                        last_fired_ns: Some(1_700_000_000_000_000_000),
                    },
                    RuleStatus {
                        name: "typo".into(),
                        origin: "campaign braking@2".into(),
                        watches: "topic /vehicle/status".into(),
                        state: RuleState::Refused,
                        problem: Some("when: VehicleStatus has no field \"acel\"".into()),
                        evaluated: 0,
                        skipped: 0,
                        errors: 0,
                        fired: 0,
                        last_fired_ns: None,
                    },
                ],
            }),
        ),
        (
            "response-status-none",
            R(Response::Status {
                sessions: Vec::new(),
                backlog: None,
                rules: Vec::new(),
            }),
        ),
        (
            "response-list",
            R(Response::List {
                sessions: vec![
                    listed_session("live", 4, SessionState::Recording),
                    listed_session("drive", 3, SessionState::Stopped),
                    listed_session("broken", 2, SessionState::Failed),
                    listed_session("crashed", 1, SessionState::Interrupted),
                ],
            }),
        ),
        (
            "response-files",
            R(Response::Files {
                session: listed_session("drive", 3, SessionState::Stopped),
            }),
        ),
        (
            "response-topics",
            R(Response::Topics(TopicsFound {
                topics: vec![
                    TopicOnOffer {
                        name: "/chatter".into(),
                        service: "dds:rt/chatter".into(),
                        type_name: "std_msgs/msg/String".into(),
                        publishers: 2,
                        messages_per_s: 10.5,
                        bytes_per_s: 336.0,
                    },
                    TopicOnOffer {
                        name: "camera/front".into(),
                        service: "camera/front".into(),
                        type_name: "sensor_msgs/msg/Image".into(),
                        publishers: 1,
                        messages_per_s: 29.97,
                        bytes_per_s: 186_624_000.0,
                    },
                ],
                problems: BTreeMap::from([
                    ("camera/rear".to_string(), "no type information".to_string()),
                    ("dds:rt/odom".to_string(), "type mismatch".to_string()),
                ]),
            })),
        ),
        (
            "response-topics-none",
            R(Response::Topics(TopicsFound::default())),
        ),
        (
            "response-paused",
            R(Response::Paused(SessionPaused {
                name: "drive".into(),
                paused: true,
                changed: false,
            })),
        ),
        (
            "response-resumed",
            R(Response::Paused(SessionPaused {
                name: "drive".into(),
                paused: false,
                changed: true,
            })),
        ),
        (
            "response-marked",
            R(Response::Marked(SessionMarked {
                name: "drive".into(),
                time_ns: 1_700_000_111_222_333_444,
                files: vec![
                    "/data/drive/a_3.mcap".into(),
                    "/data/drive/dds_3.mcap".into(),
                ],
            })),
        ),
        (
            "response-topics-changed",
            R(Response::TopicsChanged(SessionTopicsChanged {
                name: "drive".into(),
                topics: vec!["camera/*".into(), "/imu".into()],
                exclude: vec!["camera/rear/*".into()],
                times_ns: vec![1_700_000_111_222_333_444, 1_700_000_111_222_999_000],
                files: vec![
                    "/data/drive/a_3.mcap".into(),
                    "/data/drive/dds_3.mcap".into(),
                ],
            })),
        ),
        (
            "response-triggered",
            R(Response::Triggered(SessionTriggered {
                name: "drive".into(),
                time_ns: 1_700_000_000_000_000_000,
                files: vec![
                    TriggeredFile {
                        path: "/data/drive/trigger_1.mcap".into(),
                        start_ns: 1_699_999_970_000_000_000,
                        end_ns: 1_700_000_010_000_000_000,
                        extended: false,
                    },
                    TriggeredFile {
                        path: "/data/drive/dds_trigger_1.mcap".into(),
                        start_ns: 1_699_999_980_000_000_000,
                        end_ns: 1_700_000_020_000_000_000,
                        extended: true,
                    },
                ],
                id: Some("brake-17".into()),
                repeated: true,
                incident: None,
            })),
        ),
        (
            "response-triggered-incident",
            R(Response::Triggered(SessionTriggered {
                name: "drive".into(),
                time_ns: 1_700_000_000_000_000_000,
                files: Vec::new(),
                id: Some("brake-17".into()),
                repeated: false,
                incident: Some(IncidentTaken {
                    id: "brake-17".into(),
                    start_ns: 1_699_999_970_000_000_000,
                    end_ns: 1_700_000_010_000_000_000,
                    pinned_files: vec!["/data/drive/a_3.mcap".into()],
                    directory: "/data/incidents".into(),
                }),
            })),
        ),
        (
            "response-incidents",
            R(Response::Incidents {
                incidents: vec![
                    Incident {
                        id: "brake-17".into(),
                        session: "drive".into(),
                        note: "hard brake".into(),
                        origin: "fleet".into(),
                        time_ns: 1_700_000_000_000_000_000,
                        start_ns: 1_699_999_970_000_000_000,
                        end_ns: 1_700_000_010_000_000_000,
                        created_ns: 1_700_000_000_100_000_000,
                        cut: CutState::Cut,
                        cut_error: None,
                        keep_until_ns: Some(1_700_604_800_000_000_000),
                        release_after_upload: true,
                        released: None,
                        pinned_files: vec![IncidentFile {
                            path: "/data/drive/a_3.mcap".into(),
                            bytes: 4_294_967_301,
                            state: FileState::Indexed,
                            upload: None,
                        }],
                        cut_files: vec![IncidentFile {
                            path: "/data/incidents/brake-17_hard-brake_drive_dds.mcap".into(),
                            bytes: 1_000_000,
                            state: FileState::Indexed,
                            upload: Some(UploadState::Uploaded),
                        }],
                        rule: Some(RuleFiring {
                            rule: "hard_brake".into(),
                            topic: "/vehicle/status".into(),
                            sample_ns: 1_700_000_000_000_000_000,
                            values: BTreeMap::from([
                                ("msg.accel.x".to_string(), serde_json::json!(-6.25)),
                                ("msg.mode".to_string(), serde_json::json!("auto")),
                            ]),
                        }),
                        topics: None,
                    },
                    Incident {
                        id: "20231114T221320.000Z".into(),
                        session: "drive".into(),
                        note: String::new(),
                        origin: "cli".into(),
                        time_ns: 1_700_000_000_000_000_000,
                        start_ns: 1_699_999_970_000_000_000,
                        end_ns: 1_700_000_000_000_000_000,
                        created_ns: 1_700_000_000_000_000_000,
                        cut: CutState::Failed,
                        cut_error: Some("cannot create /data/incidents: read-only".into()),
                        keep_until_ns: None,
                        release_after_upload: false,
                        released: Some(Released {
                            at_ns: 1_700_000_100_000_000_000,
                            why: "released".into(),
                        }),
                        pinned_files: Vec::new(),
                        cut_files: Vec::new(),
                        rule: None,
                        topics: None,
                    },
                ],
            }),
        ),
        (
            "response-incidents-released",
            R(Response::IncidentsReleased(IncidentsReleased {
                id: "brake-17".into(),
                released: 2,
            })),
        ),
        (
            "response-triggered-plain",
            R(Response::Triggered(SessionTriggered {
                name: "drive".into(),
                time_ns: 5,
                files: Vec::new(),
                id: None,
                repeated: false,
                incident: None,
            })),
        ),
        (
            "response-uploads-queued",
            R(Response::UploadsQueued(UploadsQueued {
                queued: vec!["/data/drive/a_1.mcap".into(), "/data/drive/a_2.mcap".into()],
                unchanged: vec!["/data/drive/a_0.mcap".into()],
            })),
        ),
        (
            "response-uploads",
            R(Response::Uploads(UploadStatus {
                enabled: true,
                destination: Some("s3://fleet/car-7 at https://s3.example.com".into()),
                error: Some("403 Forbidden: check the credentials".into()),
                yielding: Some("session drive is falling behind".into()),
                bytes_per_s: 12_500_000.5,
                uploaded_files: 31,
                uploaded_bytes: 123_456_789_012,
                files: vec![
                    upload_entry("/data/drive/a_1.mcap", UploadState::Queued, false),
                    upload_entry("/data/drive/a_2.mcap", UploadState::Uploading, false),
                    upload_entry("/data/drive/a_3.mcap", UploadState::Failed, false),
                    upload_entry("/data/drive/a_0.mcap", UploadState::Uploaded, true),
                ],
                mode: UploadsMode::Incidents,
            })),
        ),
        (
            "response-uploads-disabled",
            R(Response::Uploads(UploadStatus::default())),
        ),
        ("response-done", R(Response::Done)),
    ];
    let mut cases: Vec<(String, Message)> = cases
        .into_iter()
        .map(|(name, message)| (name.to_string(), message))
        .collect();
    for kind in ERROR_KINDS {
        cases.push((
            format!("response-error-{}", error_kind(kind).replace('_', "-")),
            Message::Response(Response::Error(ErrorReply {
                kind,
                message: format!("{} — it says why, with \"quotes\"", error_kind(kind)),
            })),
        ));
    }
    cases
}
