//! The families of a made-up snapshot, encoded both ways.

use std::path::PathBuf;
use std::time::Instant;

use recd_control::{RatedTopic, ReceiveThreadReport, SessionStatus, TopicReport};
use recd_health::{HealthState, TopicHealth};

use super::{families, render, TopicBudget, OPENMETRICS};
use crate::backend::DaemonFacts;
use crate::snapshot::Snapshot;

fn topic(name: &str, written: u64, health: HealthState, last_sample_ns: Option<u64>) -> RatedTopic {
    RatedTopic {
        report: TopicReport {
            name: name.into(),
            service: name.into(),
            received: written + 2,
            written,
            dropped: 2,
            lost: 0,
            overflows: 0,
            bytes_written: written * 10,
            paused: 0,
            evicted: 0,
            filtered: 0,
            repeated: 0,
            unknown_loss: false,
        },
        messages_per_s: 30.0,
        bytes_per_s: 300.0,
        health: Some(TopicHealth {
            state: health,
            ..TopicHealth::default()
        }),
        last_sample_ns,
    }
}

fn session(name: &str, topics: Vec<RatedTopic>, paused: bool) -> SessionStatus {
    SessionStatus {
        name: name.into(),
        id: 1,
        directory: PathBuf::from("/data").join(name),
        current_files: vec![PathBuf::from("/data/a.mcap")],
        elapsed_s: 1.0,
        bytes_written: 0,
        bytes_per_s: 0.0,
        topics,
        write_error: None,
        problems: Vec::new(),
        io_mode: "direct".into(),
        disk_full: None,
        paused,
        buffer: None,
        receive_threads: vec![ReceiveThreadReport {
            source: "iceoryx2".into(),
            scheduling: "SCHED_FIFO 10".into(),
            priority_warning: None,
            memory_warning: None,
            passes: 10,
            lateness_p999_us: 250.0,
            lateness_max_us: 1500.0,
            spilled: 1,
            reclaimed: 3,
        }],
        required: Vec::new(),
        backlog: Default::default(),
    }
}

fn snapshot(sessions: Vec<SessionStatus>) -> Snapshot {
    Snapshot {
        taken: Instant::now(),
        sessions,
        uploads: None,
        facts: DaemonFacts {
            free_bytes: Some(5 << 30),
            min_free_space: 1 << 30,
            seal_keys: Some(4),
            fleet_requests: Some(crate::FleetRequests {
                taken: [("window".to_string(), 2)].into(),
                refused: [("unsigned".to_string(), 0), ("stale".to_string(), 1)].into(),
            }),
            ..DaemonFacts::default()
        },
        file_sizes: Default::default(),
        incidents: None,
        rules: Vec::new(),
        backlog: Some(recd_control::Backlog {
            finish_waiting: 2,
            finish_oldest_s: Some(61.5),
            deleted_unfinished: 3,
            background_mode: "throttled".into(),
            ..Default::default()
        }),
    }
}

fn now_ns() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64
}

#[test]
fn topics_sessions_and_disk_are_named_as_prometheus_expects() {
    let snapshot = snapshot(vec![
        session(
            "drive",
            vec![
                topic(
                    "camera/front",
                    90,
                    HealthState::Ok,
                    Some(now_ns() - 500_000_000),
                ),
                topic("imu", 7, HealthState::Stalled, None),
                topic("debug", 1, HealthState::Unchecked, None),
            ],
            false,
        ),
        session("parked", vec![], true),
    ]);
    let mut budget = TopicBudget::new(100);
    let (content_type, text) = render(families(&snapshot, &mut budget, "9.9.9"), "*/*");
    assert_eq!(content_type, "text/plain; version=0.0.4; charset=utf-8");
    for line in [
        "# TYPE recd_messages_written_total counter",
        "recd_messages_written_total{session=\"drive\",topic=\"camera/front\"} 90",
        "recd_messages_dropped_total{session=\"drive\",topic=\"imu\"} 2",
        "recd_written_bytes_total{session=\"drive\",topic=\"camera/front\"} 900",
        "recd_topic_health{session=\"drive\",topic=\"imu\"} 2",
        "recd_topic_health{session=\"drive\",topic=\"camera/front\"} 0",
        "recd_sessions{state=\"recording\"} 1",
        "recd_sessions{state=\"paused\"} 1",
        "recd_receive_lateness_p999_seconds{session=\"drive\",source=\"iceoryx2\"} 0.00025",
        "recd_receive_takebacks_total{session=\"drive\",source=\"iceoryx2\"} 3",
        "recd_data_free_bytes 5368709120",
        "recd_data_min_free_bytes 1073741824",
        "recd_seal_keys 4",
        "recd_fleet_requests_total{kind=\"window\"} 2",
        "recd_fleet_requests_refused_total{reason=\"unsigned\"} 0",
        "recd_fleet_requests_refused_total{reason=\"stale\"} 1",
        "recd_files_waiting_to_finish 2",
        "recd_finish_oldest_waiting_seconds 61.5",
        "recd_files_deleted_unfinished_total 3",
        "recd_background_info{mode=\"throttled\"} 1",
        "recd_build_info{version=\"9.9.9\"} 1",
    ] {
        assert!(
            text.lines().any(|l| l.starts_with(line)),
            "no {line:?} in\n{text}"
        );
    }
    // Unchecked is no number: no series rather than a false "ok".
    assert!(!text.contains("recd_topic_health{session=\"drive\",topic=\"debug\"}"));
    let age: f64 = (text.lines())
        .find_map(|l| {
            l.strip_prefix(
                "recd_last_sample_age_seconds{session=\"drive\",topic=\"camera/front\"} ",
            )
        })
        .expect("an age for the topic that sent")
        .parse()
        .unwrap();
    assert!((0.4..5.0).contains(&age), "{age}");
    assert!(!text.contains("recd_last_sample_age_seconds{session=\"drive\",topic=\"imu\"}"));

    let (content_type, text) = render(
        families(&snapshot, &mut budget, "9.9.9"),
        "application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5",
    );
    assert_eq!(content_type, OPENMETRICS);
    assert!(
        text.contains("# TYPE recd_messages_written counter\n"),
        "{text}"
    );
    assert!(text.contains("# TYPE recd_build info\n"), "{text}");
    assert!(
        text.contains("# UNIT recd_data_free_bytes bytes\n"),
        "{text}"
    );
    assert!(text.ends_with("# EOF\n"));
}

#[test]
fn topics_beyond_the_budget_are_summed_into_other_and_keep_their_place() {
    let topics = |names: &[&str]| {
        (names.iter())
            .map(|n| topic(n, 10, HealthState::Ok, None))
            .collect::<Vec<_>>()
    };
    let mut budget = TopicBudget::new(2);
    let first = snapshot(vec![session("s", topics(&["b", "c", "d"]), false)]);
    let (_, text) = render(families(&first, &mut budget, "1"), "");
    assert!(text.contains("recd_messages_written_total{session=\"s\",topic=\"b\"} 10"));
    assert!(text.contains("recd_messages_written_total{session=\"s\",topic=\"c\"} 10"));
    assert!(text.contains("recd_messages_written_total{session=\"s\",topic=\"_other\"} 10"));
    assert!(text.contains("recd_metrics_topics_folded 1"), "{text}");
    // A topic found later sorts first, yet the first two keep their series.
    let later = snapshot(vec![session("s", topics(&["a", "b", "c", "d"]), false)]);
    let (_, text) = render(families(&later, &mut budget, "1"), "");
    assert!(text.contains("recd_messages_written_total{session=\"s\",topic=\"b\"} 10"));
    assert!(text.contains("recd_messages_written_total{session=\"s\",topic=\"_other\"} 20"));
    assert!(!text.contains("topic=\"a\""), "{text}");
}

#[test]
fn incidents_are_counted_by_origin_with_the_bytes_they_pin() {
    let mut with_incidents = snapshot(vec![]);
    with_incidents.incidents = Some(recd_control::IncidentsOverview {
        by_origin: [("page".to_string(), 2), ("rule".to_string(), 1)].into(),
        pinned: 2,
        waiting_to_cut: 1,
        refused: [("fleet".to_string(), 4)].into(),
        pinned_bytes: 3_000,
        pinned_bytes_limit: 1 << 30,
        ..Default::default()
    });
    let mut budget = TopicBudget::new(100);
    let (_, text) = render(families(&with_incidents, &mut budget, "1"), "");
    assert!(
        text.contains("# TYPE recd_incidents_total counter\n"),
        "{text}"
    );
    for (series, value) in [
        ("recd_incidents_total{origin=\"page\"}", 2.0),
        ("recd_incidents_total{origin=\"cli\"}", 0.0),
        ("recd_incidents_total{origin=\"rule\"}", 1.0),
        ("recd_incidents_refused_total{origin=\"fleet\"}", 4.0),
        ("recd_incidents_refused_total{origin=\"page\"}", 0.0),
        ("recd_incidents_pinned", 2.0),
        ("recd_incidents_waiting_to_cut", 1.0),
        ("recd_pinned_bytes", 3000.0),
        ("recd_pinned_limit_bytes", 1073741824.0),
    ] {
        let found = (text.lines())
            .find_map(|l| l.strip_prefix(&format!("{series} ")))
            .map(|v| v.parse::<f64>().unwrap());
        assert_eq!(found, Some(value), "{series} in\n{text}");
    }
    // Without incidents read, no family claims there are none.
    let (_, text) = render(families(&snapshot(vec![]), &mut budget, "1"), "");
    assert!(!text.contains("recd_incidents"), "{text}");
}

#[test]
fn each_rule_has_its_evaluations_firings_skips_errors_and_refusal() {
    let rule = |name: &str, state, evaluated, skipped, fired| recd_control::RuleStatus {
        name: name.into(),
        origin: "recd.toml".into(),
        watches: "topic /vehicle/status".into(),
        state,
        problem: None,
        evaluated,
        skipped,
        errors: 1,
        fired,
        last_fired_ns: None,
    };
    let mut with_rules = snapshot(vec![]);
    with_rules.rules = vec![
        rule("hard_brake", recd_control::RuleState::Watching, 1000, 3, 2),
        rule("typo", recd_control::RuleState::Refused, 0, 0, 0),
    ];
    let mut budget = TopicBudget::new(100);
    let (_, text) = render(families(&with_rules, &mut budget, "1"), "");
    for (series, value) in [
        ("recd_rule_evaluations_total{rule=\"hard_brake\"}", 1000.0),
        ("recd_rule_firings_total{rule=\"hard_brake\"}", 2.0),
        ("recd_rule_skipped_total{rule=\"hard_brake\"}", 3.0),
        ("recd_rule_errors_total{rule=\"typo\"}", 1.0),
        ("recd_rule_refused{rule=\"hard_brake\"}", 0.0),
        ("recd_rule_refused{rule=\"typo\"}", 1.0),
    ] {
        let found = (text.lines())
            .find_map(|l| l.strip_prefix(&format!("{series} ")))
            .map(|v| v.parse::<f64>().unwrap());
        assert_eq!(found, Some(value), "{series} in\n{text}");
    }
    let (_, text) = render(families(&snapshot(vec![]), &mut budget, "1"), "");
    assert!(!text.contains("recd_rule"), "{text}");
}
