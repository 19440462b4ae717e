//! The spill pool's bound holds: with a writer far slower than a camera publishing with
//! iceoryx2's default borrow limit (2), the recorder's own memory grows by no more than
//! the pool and a fixed margin, however many frames it must drop. The cameras' queues hold
//! 16 frames, as an integrator configures a recorded service (with iceoryx2's 2, a receive
//! pass a period late on a loaded machine overwrites the first frame before it is taken,
//! and no count can show it: not this test's point).
//!
//! A test binary of its own, so that the process's memory is the recording's alone.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use recd_engine::Recording;
use recd_testkit::{anonymous_bytes, finish_load, recorded_queue_depth, Domain, RecdLoad};

/// The cameras' queue depth (`subscriber_max_buffer_size`).
const QUEUE_DEPTH: usize = 16;

/// Anonymous resident memory of this process (shared memory mapped from the publisher
/// is not the recorder's), in bytes.
fn anonymous_rss() -> u64 {
    anonymous_bytes(std::process::id())
}

#[test]
fn the_recorder_stays_within_the_spill_pool_and_a_fixed_margin() {
    const POOL: usize = 64 << 20;
    const MARGIN: u64 = 64 << 20;
    let domain = Domain::new();
    let dir = tempfile::tempdir().unwrap();
    let mut config = domain.config(dir.path(), &["t/*"]);
    config.spill_bytes = POOL;
    config.test_hooks.writer_delay = Some(Duration::from_millis(25));
    let before = anonymous_rss();
    let recording = Recording::start(config).unwrap();

    let done = Arc::new(AtomicBool::new(false));
    let sampler = {
        let done = done.clone();
        std::thread::spawn(move || {
            let mut peak = 0;
            while !done.load(Ordering::Relaxed) {
                peak = peak.max(anonymous_rss());
                std::thread::sleep(Duration::from_millis(5));
            }
            peak
        })
    };
    // 2 × 4 MB × 60 fps for 2.5 s: 1.2 GB offered to a writer that takes 40 messages/s.
    let sent = finish_load(
        domain.load(
            &RecdLoad::new("t/")
                .cameras(2)
                .frame_size(4_000_000)
                .fps(60)
                .count(150)
                .duration(Duration::from_secs(20))
                .buffer(QUEUE_DEPTH)
                .borrowed(2)
                .wait_subscribers(1),
        ),
    );
    let summary = recording.stop().unwrap();
    done.store(true, Ordering::Relaxed);
    for topic in &sent.topics {
        assert_eq!(
            recorded_queue_depth(&summary.files[0].path, &topic.service),
            QUEUE_DEPTH
        );
    }
    let peak = sampler.join().unwrap();

    let dropped: u64 = summary.topics.iter().map(|t| t.counts.dropped).sum();
    assert!(dropped > 0, "the pool filled up: {:?}", summary.topics);
    for topic in &summary.topics {
        let sent = sent
            .topics
            .iter()
            .find(|t| t.service == topic.service)
            .unwrap();
        let counts = topic.counts;
        assert_eq!(
            counts.written + counts.dropped + counts.lost,
            sent.sent,
            "{counts:?}"
        );
    }
    let grown = peak.saturating_sub(before);
    assert!(
        grown <= POOL as u64 + MARGIN,
        "the recorder grew by {} MiB with a {} MiB pool",
        grown >> 20,
        POOL >> 20
    );
}
