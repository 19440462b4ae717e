//! Building blocks of the responses: files, topics, threads, sessions and uploads, with
//! non-default values and every state.

use std::path::PathBuf;

use recd_control::{
    BufferStatus, DiskFull, FileEntry, FileState, ListedSession, RatedTopic, ReceiveThreadReport,
    SessionState, SessionStatus, TopicReport, UploadEntry, UploadState,
};

pub fn topic_report(name: &str, unknown_loss: bool) -> TopicReport {
    TopicReport {
        name: name.into(),
        service: format!("dds:rt{name}"),
        received: 1_000_003,
        written: 999_990,
        dropped: 13,
        lost: 4,
        overflows: 2,
        bytes_written: 123_456_789_012,
        paused: 17,
        evicted: 250,
        filtered: 0,
        repeated: 2,
        unknown_loss,
    }
}

pub fn rated_topic(name: &str, unknown_loss: bool) -> RatedTopic {
    RatedTopic {
        report: topic_report(name, unknown_loss),
        messages_per_s: 99.75,
        bytes_per_s: 1_234_567.125,
        health: None,
        last_sample_ns: None,
    }
}

pub fn receive_thread_full() -> ReceiveThreadReport {
    ReceiveThreadReport {
        source: "dds".into(),
        scheduling: "nice -5".into(),
        priority_warning: Some("no CAP_SYS_NICE: SCHED_FIFO 40 not granted".into()),
        memory_warning: Some("mlock failed: RLIMIT_MEMLOCK too small".into()),
        passes: 123_456,
        lateness_p999_us: 87.25,
        lateness_max_us: 1_503.5,
        spilled: 9,
        reclaimed: 11,
    }
}

pub fn receive_thread_quiet() -> ReceiveThreadReport {
    ReceiveThreadReport {
        source: "iceoryx2".into(),
        scheduling: "SCHED_FIFO 40".into(),
        priority_warning: None,
        memory_warning: None,
        passes: 0,
        lateness_p999_us: 0.0,
        lateness_max_us: 0.0,
        spilled: 0,
        reclaimed: 0,
    }
}

pub fn file_entry(path: &str, state: FileState, upload: Option<UploadState>) -> FileEntry {
    FileEntry {
        path: path.into(),
        bytes: 4_294_967_301,
        messages: 77_777,
        state,
        upload,
        health: None,
        damaged_at: None,
    }
}

pub fn every_file_state() -> Vec<FileEntry> {
    vec![
        file_entry("/data/drive/a_0.mcap", FileState::Recording, None),
        file_entry(
            "/data/drive/a_1.mcap",
            FileState::Complete,
            Some(UploadState::Queued),
        ),
        file_entry(
            "/data/drive/a_2.mcap",
            FileState::Indexed,
            Some(UploadState::Uploading),
        ),
        file_entry(
            "/data/drive/a_3.mcap",
            FileState::NeedsReindex,
            Some(UploadState::Uploaded),
        ),
        file_entry(
            "/data/drive/a_4.mcap",
            FileState::Deleted,
            Some(UploadState::Failed),
        ),
        file_entry("/data/drive/a_5.mcap", FileState::Missing, None),
    ]
}

pub fn listed_session(name: &str, id: i64, state: SessionState) -> ListedSession {
    let stopped = state != SessionState::Recording;
    ListedSession {
        name: name.into(),
        id,
        state,
        directory: PathBuf::from("/data").join(name),
        started_ns: 1_700_000_000_123_456_789,
        stopped_ns: stopped.then_some(1_700_000_360_987_654_321),
        files: if stopped {
            every_file_state()
        } else {
            vec![file_entry("/data/live/x.mcap", FileState::Recording, None)]
        },
        topics: if stopped {
            vec![topic_report("/imu", false), topic_report("/gps", true)]
        } else {
            Vec::new()
        },
        reason: (state == SessionState::Failed).then(|| "No space left on device".into()),
        health: None,
    }
}

pub fn status_full() -> SessionStatus {
    SessionStatus {
        name: "drive".into(),
        id: 17,
        directory: "/data/drive".into(),
        current_files: vec![
            "/data/drive/a_3.mcap".into(),
            "/data/drive/dds_3.mcap".into(),
        ],
        elapsed_s: 3_725.5,
        bytes_written: 98_765_432_100,
        bytes_per_s: 26_500_000.25,
        topics: vec![
            rated_topic("/camera/front", false),
            rated_topic("/lidar", true),
        ],
        write_error: Some("write /data/drive/a_3.mcap: Input/output error".into()),
        problems: vec![
            ("camera/rear".into(), "type mismatch".into()),
            ("dds:rt/odom".into(), "no type information".into()),
        ],
        io_mode: "direct".into(),
        disk_full: Some(DiskFull {
            free: 1_073_741_823,
            minimum: 2 << 30,
        }),
        paused: true,
        buffer: Some(BufferStatus {
            duration_s: 30.0,
            capacity_bytes: 1 << 30,
            messages: 45_000,
            bytes: 987_654_321,
            span_s: 29.875,
            evicted: 1_234,
        }),
        receive_threads: vec![receive_thread_quiet(), receive_thread_full()],
        required: Vec::new(),
        backlog: Default::default(),
    }
}

pub fn status_plain() -> SessionStatus {
    SessionStatus {
        name: "bench".into(),
        id: 18,
        directory: "/data/bench".into(),
        current_files: Vec::new(),
        elapsed_s: 0.5,
        bytes_written: 0,
        bytes_per_s: 0.0,
        topics: Vec::new(),
        write_error: None,
        problems: Vec::new(),
        io_mode: "buffered".into(),
        disk_full: None,
        paused: false,
        buffer: None,
        receive_threads: Vec::new(),
        required: Vec::new(),
        backlog: Default::default(),
    }
}

pub fn upload_entry(path: &str, state: UploadState, done: bool) -> UploadEntry {
    UploadEntry {
        path: path.into(),
        session: "drive".into(),
        key: format!("fleet/car-7{path}"),
        state,
        bytes: 4_294_967_301,
        sent: if done { 4_294_967_301 } else { 1 << 27 },
        priority: state == UploadState::Queued,
        queued_ns: 1_700_000_400_000_000_001,
        uploaded_ns: done.then_some(1_700_000_500_000_000_002),
        reason: (state == UploadState::Failed).then(|| "the local file changed".into()),
    }
}
