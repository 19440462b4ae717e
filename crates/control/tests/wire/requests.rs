//! The requests the fixtures pin: every kind, with its options both present and absent.

use std::collections::BTreeMap;

use recd_control::{
    AttachedFile, FinishMode, Request, SetTopicsRequest, StartRequest, TopicsRequest,
    TriggerRequest, UploadRequest,
};

use crate::Message;

fn attachment() -> AttachedFile {
    AttachedFile {
        name: "calibration.yaml".into(),
        media_type: "application/yaml".into(),
        create_time_ns: 1_712_345_678_901_234_567,
        data: (0u8..=255).rev().collect(),
    }
}

fn start_full() -> StartRequest {
    StartRequest {
        name: Some("drive-2024".into()),
        topics: vec!["camera/*".into(), "/imu".into()],
        exclude: vec!["camera/raw*".into()],
        max_file_size: Some(3 << 30),
        max_duration_ms: Some(600_000),
        crc: true,
        dds_domain: Some(42),
        zenoh_domain: Some(7),
        no_iceoryx2: true,
        io_mode: Some("direct".into()),
        max_files: Some(12),
        max_age_ms: Some(3_600_000),
        duration_ms: Some(3_600_000),
        metadata: BTreeMap::from([
            ("vehicle".to_string(), "car-7".to_string()),
            ("driver".to_string(), "Zoë \"the\" tester".to_string()),
        ]),
        attachments: vec![attachment()],
        paused: true,
        pre_trigger_ms: Some(30_000),
        buffer_size: Some(512 << 20),
        upload: Some(false),
        finish: Some(FinishMode::Zstd),
        expect: Vec::new(),
        topic_types: vec!["sensor_msgs/msg/*".into()],
        exclude_topic_types: vec!["sensor_msgs/msg/PointCloud2".into()],
        max_rate: vec!["camera/*=5".into()],
        downsample: vec!["/points=3".into()],
        services: vec!["/add_two_ints".into()],
        all_services: false,
        exclude_services: vec!["*/set_parameters*".into()],
        actions: Vec::new(),
        all_actions: true,
        exclude_actions: vec!["/secret".into()],
        parameters: true,
    }
}

/// The named requests, in a fixed order.
pub fn cases() -> Vec<(&'static str, Message)> {
    use Message::Request as Q;
    let named = |name: Option<&str>| name.map(String::from);
    vec![
        ("request-ping", Q(Request::Ping)),
        ("request-start-full", Q(Request::Start(start_full()))),
        (
            "request-start-default",
            Q(Request::Start(StartRequest::default())),
        ),
        (
            "request-start-finish-none",
            Q(Request::Start(StartRequest {
                upload: Some(true),
                finish: Some(FinishMode::None),
                ..StartRequest::default()
            })),
        ),
        (
            "request-start-finish-index",
            Q(Request::Start(StartRequest {
                finish: Some(FinishMode::Index),
                ..StartRequest::default()
            })),
        ),
        (
            "request-start-finish-lz4",
            Q(Request::Start(StartRequest {
                finish: Some(FinishMode::Lz4),
                ..StartRequest::default()
            })),
        ),
        (
            "request-stop-named",
            Q(Request::Stop {
                name: named(Some("drive")),
                all: false,
            }),
        ),
        (
            "request-stop-all",
            Q(Request::Stop {
                name: None,
                all: true,
            }),
        ),
        (
            "request-status-named",
            Q(Request::Status {
                name: named(Some("drive")),
            }),
        ),
        ("request-status-all", Q(Request::Status { name: None })),
        ("request-list", Q(Request::List)),
        (
            "request-files",
            Q(Request::Files {
                name: "drive_2".into(),
            }),
        ),
        (
            "request-topics",
            Q(Request::Topics(TopicsRequest {
                dds_domain: Some(7),
                no_iceoryx2: true,
                discovery_ms: 1_500,
                window_ms: 2_500,
                topic_types: vec!["sensor_msgs/msg/Image".into()],
                exclude_topic_types: vec!["*Debug*".into()],
            })),
        ),
        (
            "request-topics-default",
            Q(Request::Topics(TopicsRequest::default())),
        ),
        (
            "request-pause-named",
            Q(Request::Pause {
                name: named(Some("drive")),
            }),
        ),
        ("request-pause-only", Q(Request::Pause { name: None })),
        (
            "request-resume-named",
            Q(Request::Resume {
                name: named(Some("drive")),
            }),
        ),
        ("request-resume-only", Q(Request::Resume { name: None })),
        (
            "request-split-named",
            Q(Request::Split {
                name: named(Some("drive")),
            }),
        ),
        ("request-split-only", Q(Request::Split { name: None })),
        (
            "request-mark-named",
            Q(Request::Mark {
                name: named(Some("drive")),
                text: "brake \"hard\" at the ü-turn\n\tsecond line \\ done".into(),
            }),
        ),
        (
            "request-mark-only",
            Q(Request::Mark {
                name: None,
                text: String::new(),
            }),
        ),
        (
            "request-set-topics-full",
            Q(Request::SetTopics(SetTopicsRequest {
                name: named(Some("drive")),
                add: vec!["/imu".into(), "camera/front/*".into()],
                remove: vec!["camera/rear/*".into()],
            })),
        ),
        (
            "request-set-topics-only",
            Q(Request::SetTopics(SetTopicsRequest::default())),
        ),
        (
            "request-trigger-full",
            Q(Request::Trigger(TriggerRequest {
                name: named(Some("drive")),
                before_ms: Some(30_000),
                after_ms: 10_000,
                note: "hard brake".into(),
                at_ns: Some(1_700_000_000_000_000_000),
                id: Some("brake-17".into()),
                origin: Some("fleet".into()),
                rule: None,
            })),
        ),
        (
            "request-trigger-default",
            Q(Request::Trigger(TriggerRequest::default())),
        ),
        (
            "request-incidents",
            Q(Request::Incidents {
                name: named(Some("drive")),
            }),
        ),
        (
            "request-incidents-all",
            Q(Request::Incidents { name: None }),
        ),
        (
            "request-release-incident",
            Q(Request::ReleaseIncident {
                id: "brake-17".into(),
            }),
        ),
        (
            "request-reindexed",
            Q(Request::Reindexed {
                path: "/data/drive/a_3.mcap".into(),
                bytes: 4_294_967_301,
                messages: 77_777,
            }),
        ),
        (
            "request-upload-session",
            Q(Request::Upload(UploadRequest {
                session: Some("drive".into()),
                file: None,
            })),
        ),
        (
            "request-upload-file",
            Q(Request::Upload(UploadRequest {
                session: None,
                file: Some("/data/drive/a_1.mcap".into()),
            })),
        ),
        ("request-upload-status", Q(Request::UploadStatus)),
    ]
}
