//! What a Prometheus scrape costs recd's HTTP thread: the families of a snapshot built and
//! encoded (OpenMetrics and the 0.0.4 text format) for 12 topics (2 cameras and 10 small
//! ones) and for 500, against the JSON of the same status that `rec status --json` and
//! `/api/status` serialize anyway (the reference).
//!
//! `cargo bench -p recd-benches --bench metrics`

use std::hint::black_box;
use std::path::PathBuf;
use std::time::Instant;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use recd_control::{RatedTopic, ReceiveThreadReport, SessionStatus, TopicReport};
use recd_health::{HealthState, TopicHealth};
use recd_http::{families, DaemonFacts, Snapshot, TopicBudget};

fn snapshot(topics: usize) -> Snapshot {
    let topics = (0..topics)
        .map(|n| RatedTopic {
            report: TopicReport {
                name: format!("/sensors/topic_{n}"),
                service: format!("sensors/topic_{n}"),
                received: 1_000_000 + n as u64,
                written: 1_000_000,
                dropped: n as u64,
                lost: 0,
                overflows: 0,
                bytes_written: 100_000_000,
                paused: 0,
                evicted: 0,
                filtered: 0,
                repeated: 0,
                unknown_loss: false,
            },
            messages_per_s: 1000.0,
            bytes_per_s: 100_000.0,
            health: Some(TopicHealth {
                state: HealthState::Ok,
                ..TopicHealth::default()
            }),
            last_sample_ns: Some(1_800_000_000_000_000_000),
        })
        .collect();
    let session = SessionStatus {
        name: "drive".into(),
        id: 1,
        directory: PathBuf::from("/var/lib/recd/recordings/drive"),
        current_files: vec![PathBuf::from("/var/lib/recd/recordings/drive/drive_0.mcap")],
        elapsed_s: 60.0,
        bytes_written: 1 << 30,
        bytes_per_s: 1e8,
        topics,
        write_error: None,
        problems: Vec::new(),
        io_mode: "direct".into(),
        disk_full: None,
        paused: false,
        buffer: None,
        receive_threads: vec![ReceiveThreadReport {
            source: "iceoryx2".into(),
            scheduling: "SCHED_FIFO 10".into(),
            priority_warning: None,
            memory_warning: None,
            passes: 1_000_000,
            lateness_p999_us: 80.0,
            lateness_max_us: 900.0,
            spilled: 0,
            reclaimed: 0,
        }],
        required: Vec::new(),
        backlog: Default::default(),
    };
    Snapshot {
        taken: Instant::now(),
        sessions: vec![session],
        uploads: None,
        facts: DaemonFacts {
            free_bytes: Some(100 << 30),
            min_free_space: 1 << 30,
            ..DaemonFacts::default()
        },
        file_sizes: Default::default(),
        incidents: None,
        rules: Vec::new(),
        backlog: None,
    }
}

fn scrape(c: &mut Criterion) {
    let mut group = c.benchmark_group("scrape");
    for topics in [12, 500] {
        let snapshot = snapshot(topics);
        let mut budget = TopicBudget::new(500);
        group.bench_with_input(
            BenchmarkId::new("openmetrics", topics),
            &snapshot,
            |b, s| {
                b.iter(|| {
                    let families = families(black_box(s), &mut budget, "0.1.0");
                    recd_http::render(families, "application/openmetrics-text")
                        .1
                        .len()
                })
            },
        );
        group.bench_with_input(BenchmarkId::new("text_0_0_4", topics), &snapshot, |b, s| {
            b.iter(|| {
                let families = families(black_box(s), &mut budget, "0.1.0");
                recd_http::render(families, "*/*").1.len()
            })
        });
        group.bench_with_input(
            BenchmarkId::new("status_json", topics),
            &snapshot,
            |b, s| b.iter(|| serde_json::to_vec(&black_box(s).sessions).unwrap().len()),
        );
    }
    group.finish();
}

criterion_group!(benches, scrape);
criterion_main!(benches);
