//! Topic health in the engine, against real publisher processes over real iceoryx2: a
//! topic whose publisher went silent while the others went on is stalled live, once, and
//! the file's health record maps its silence.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use recd_engine::recd_health::{
    Expectation, FileHealthSummary, HealthEvent, HealthState, Verdict, HEALTH_CHANNEL,
};
use recd_engine::Recording;
use recd_testkit::{finish_load, wait_until, Domain, RecdLoad};

#[test]
fn a_topic_silent_while_others_go_on_stalls_live_and_in_the_file() {
    let domain = Domain::new();
    let dir = tempfile::tempdir().unwrap();
    let mut config = domain.config(dir.path(), &["h*"]);
    config.expect = vec![Expectation::parse("h*:max_gap=200ms").unwrap()];
    let recording = Recording::start(config).unwrap();
    let steady = domain.load(
        &RecdLoad::new("hsteady/")
            .cameras(0)
            .small_topics(2)
            .small_rate(100)
            .count(350)
            .duration(Duration::from_secs(20))
            .wait_subscribers(1),
    );
    let brief = domain.load(
        &RecdLoad::new("hbrief/")
            .cameras(0)
            .small_topics(1)
            .small_rate(100)
            .count(100)
            .duration(Duration::from_secs(20))
            .wait_subscribers(1),
    );
    let brief = finish_load(brief);
    let brief_ended = Instant::now();
    let brief_topic = brief.topics[0].service.clone();
    let stalled = |recording: &Recording| {
        recording
            .status()
            .topics
            .iter()
            .find(|t| t.name == brief_topic)
            .is_some_and(|t| t.health.state == HealthState::Stalled)
    };
    assert!(wait_until(Duration::from_secs(3), || stalled(&recording)));
    // The load lingers a moment before it reports; the stall comes within max_gap and a
    // check of its last sample, so well within a second of the report.
    assert!(brief_ended.elapsed() < Duration::from_secs(1));
    let steady = finish_load(steady);
    let summary = recording.stop().unwrap();

    let file = &summary.files[0].path;
    let bytes = std::fs::read(file).unwrap();
    let (events, health) = health_of(&bytes);
    // The steady topics stall too once their load ends, before the stop: not the brief's.
    let stalls: Vec<_> = events.iter().filter(|e| e.topic == brief_topic).collect();
    assert_eq!(stalls.len(), 1, "{events:?}");
    assert_eq!(stalls[0].to, HealthState::Stalled);
    assert_eq!(stalls[0].max_gap_ns, Some(200_000_000));
    assert_eq!(health.verdict, Verdict::Degraded);
    let brief_health = &health.topics[&brief_topic];
    assert_eq!(brief_health.samples, 100);
    assert_eq!(brief_health.gaps, 1);
    assert!(brief_health.silent_at_end_ns.unwrap() > 1_000_000_000);
    assert_eq!(
        brief_health.gap_map[0][0], stalls[0].since_ns,
        "the gap starts at its last sample"
    );
    for topic in &steady.topics {
        let topic = &health.topics[&topic.service];
        assert_eq!((topic.samples, topic.gaps), (350, 0), "{topic:?}");
        let rate = topic.rate.unwrap();
        assert!(rate.median >= 90.0 && rate.median <= 110.0, "{rate:?}");
    }
    let status = summary
        .topics
        .iter()
        .find(|t| t.name == brief_topic)
        .unwrap();
    assert_eq!(status.health.stalls, 1);
}

/// The `recd/health` messages and the health record of a file.
fn health_of(bytes: &[u8]) -> (Vec<HealthEvent>, FileHealthSummary) {
    let events = mcap::MessageStream::new(bytes)
        .unwrap()
        .map(Result::unwrap)
        .filter(|m| m.channel.topic == HEALTH_CHANNEL)
        .map(|m| serde_json::from_slice(&m.data).unwrap())
        .collect();
    let summary = mcap::Summary::read(bytes).unwrap().unwrap();
    let index = summary
        .metadata_indexes
        .iter()
        .find(|i| i.name.starts_with("health/"))
        .expect("a health record");
    let metadata = mcap::read::metadata(bytes, index).unwrap();
    let entries: BTreeMap<String, String> = metadata.metadata;
    (events, FileHealthSummary::from_metadata(&entries).unwrap())
}
