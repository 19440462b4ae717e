//! The recorder engine against real publisher processes over real iceoryx2 shared memory.

mod common;

use std::time::Duration;

use common::{finish_load, Domain};
use recd_benches::verify::check_files;
use recd_engine::Recording;

#[test]
fn every_message_of_every_topic_is_recorded_byte_exact_in_order() {
    let domain = Domain::new();
    let dir = tempfile::tempdir().unwrap();
    let recording = Recording::start(domain.config(dir.path(), &["t/*"])).unwrap();
    let load = domain.load(&[
        "--name-prefix",
        "t/",
        "--cameras",
        "2",
        "--frame-size",
        "300000",
        "--fps",
        "100",
        "--small-topics",
        "3",
        "--small-size",
        "100",
        "--small-rate",
        "100",
        "--count",
        "60",
        "--duration",
        "20s",
        "--wait-subscribers",
        "1",
    ]);
    let sent = finish_load(load);
    let summary = recording.stop().unwrap();
    assert!(summary.write_error.is_none());

    let paths: Vec<_> = summary.files.iter().map(|f| f.path.clone()).collect();
    let checks = check_files(&paths).unwrap();
    assert_eq!(sent.topics.len(), 5);
    for topic in &sent.topics {
        assert_eq!(topic.sent, 60, "{} sent everything", topic.service);
        let check = &checks[&topic.service];
        assert!(check.bad.is_empty(), "{}: {:?}", topic.service, check.bad);
        assert_eq!(
            check.sequences,
            (0..60).collect::<Vec<u64>>(),
            "{}",
            topic.service
        );
        for (header, sequence) in check.user_headers.iter().zip(&check.sequences) {
            assert_eq!(header.len(), 16);
            assert_eq!(
                u64::from_ne_bytes(header[8..16].try_into().unwrap()),
                *sequence
            );
        }
        let status = summary
            .topics
            .iter()
            .find(|t| t.service == topic.service)
            .unwrap();
        assert_eq!(status.counts.received, 60);
        assert_eq!(status.counts.written, 60);
        assert_eq!(status.counts.dropped + status.counts.lost, 0);
    }
    let _ = Duration::ZERO;
}
