//! The DDS source against writers none of us wrote (Cyclone DDS: its `ddsperf` tool and
//! its Python binding) over real UDP on loopback, with the receive thread stalled on
//! purpose: a reliable writer's samples must wait in the readers' history, not be lost.

use std::time::Duration;

use recd_engine::{DdsConfig, Recording, RecordingConfig, TopicCounts, TopicSelection};
use recd_testkit::{
    dds_publish, dds_published, ddsperf_done, ddsperf_publish, wait_until, DDSPERF_TOPIC,
};

/// How long the receive thread sleeps before each pass.
const STALL: Duration = Duration::from_millis(200);

/// A recording of DDS `domain` on loopback, its receive thread stalling before each pass.
fn stalled_recording(dir: &std::path::Path, domain: u16) -> Recording {
    let mut config = RecordingConfig::new(dir);
    config.dds = Some(DdsConfig {
        interfaces: vec![std::net::IpAddr::from([127, 0, 0, 1])],
        ..DdsConfig::new(domain)
    });
    // DDS only: no iceoryx2 services of other tests.
    config.iceoryx2 = false;
    config.topics = TopicSelection {
        include: vec!["*".into()],
        ..TopicSelection::default()
    };
    config.test_hooks.receive_delay = Some(STALL);
    Recording::start(config).unwrap()
}

fn counts_of(recording: &Recording, name: &str) -> Option<TopicCounts> {
    recording
        .status()
        .topics
        .into_iter()
        .find(|t| t.name == name)
        .map(|t| t.counts)
}

#[test]
fn a_stalled_receive_thread_loses_nothing_of_a_keyed_reliable_writer_at_10_khz() {
    let dir = tempfile::tempdir().unwrap();
    let recording = stalled_recording(dir.path(), 31);
    // Cyclone's ddsperf: reliable, keep-all, keyed; 100 B samples at 10 kHz for 3 s,
    // 2,000 of them arrive during each stall.
    ddsperf_done(
        ddsperf_publish(31, 3, "10kHz", "100"),
        Duration::from_secs(30),
    );
    let summary = recording.stop().unwrap();
    let topic = summary
        .topics
        .iter()
        .find(|t| t.name == DDSPERF_TOPIC)
        .expect("the topic is recorded");
    let counts = topic.counts;
    assert!(counts.received > 15_000, "{counts:?}");
    assert_eq!(counts.lost, 0, "{counts:?}");
    assert_eq!(counts.dropped, 0, "{counts:?}");
    assert_eq!(counts.written, counts.received, "{counts:?}");
}

#[test]
fn a_stalled_receive_thread_loses_nothing_of_a_reliable_ros2_writer() {
    let dir = tempfile::tempdir().unwrap();
    let recording = stalled_recording(dir.path(), 32);
    let publish = |count: u64| {
        let count = count.to_string();
        let published = dds_published(
            dds_publish(&[
                "--domain", "32", "--topic", "rt/fast", "--kind", "blob", "--size", "64",
                "--count", &count, "--rate", "0",
            ]),
            Duration::from_secs(120),
        );
        assert_eq!(published.done["acked"], true, "{}", published.done);
    };
    // The history is sized in bytes once the topic's sample size is known, from its
    // first samples (until then it holds 64 samples).
    publish(10);
    assert!(wait_until(Duration::from_secs(20), || {
        counts_of(&recording, "/fast").is_some_and(|c| c.written == 10)
    }));
    // As fast as the Python publisher writes, far more than a 200 ms stall's worth.
    publish(20_000);
    let sent = 20_010;
    let settled = wait_until(Duration::from_secs(20), || {
        counts_of(&recording, "/fast").is_some_and(|c| c.written == sent)
    });
    let counts = counts_of(&recording, "/fast");
    assert!(settled, "{counts:?}");
    let summary = recording.stop().unwrap();
    let counts = summary
        .topics
        .iter()
        .find(|t| t.name == "/fast")
        .unwrap()
        .counts;
    assert_eq!((counts.received, counts.lost, counts.dropped), (sent, 0, 0));
}
