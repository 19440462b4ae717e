//! A stopped session gives its memory back (issue 68, item 6): after recording many
//! iceoryx2 topics, recd's private memory is again within a few MiB of what it was before
//! the session. While recording, glibc keeps up to 16 MiB free at the top of each
//! thread's heap for reuse, and `malloc_trim` never gives those tops back: kept after the
//! stop, they left 19–32 MiB behind a session of 500 to 2,000 topics (BENCHMARKS.md,
//! "Thousands of topics").

use std::time::Duration;

use recd_testkit::{anonymous_bytes, finish_load, wait_until, Domain, Recd, RecdLoad};

/// Enough topics that the ports and buffers freed at the stop fill several heaps.
const TOPICS: usize = 500;
/// What recd may hold after the stop beyond its memory before the session (the catalog's
/// cache, its iceoryx2 node, thread stacks): 1.7 MiB measured here, 1.5–3.4 MiB with
/// `scripts/bench-topics` at 100 to 2,000 topics; with the heaps' tops kept, 12.2 MiB here.
const KEPT_AFTER_STOP: u64 = 6 << 20;

/// recd-load holds a few descriptors per topic: a login shell's 1,024 would not do.
fn raise_open_files() {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit and setrlimit read and write one rlimit each.
    unsafe {
        assert_eq!(libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit), 0);
        limit.rlim_cur = limit.rlim_max;
        assert_eq!(libc::setrlimit(libc::RLIMIT_NOFILE, &limit), 0);
    }
}

#[test]
fn a_stopped_session_of_many_topics_gives_its_memory_back() {
    raise_open_files();
    let root = tempfile::tempdir().unwrap();
    let domain = Domain::new();
    let recd = Recd::start(root.path(), &domain);
    std::thread::sleep(Duration::from_secs(1));
    let before = anonymous_bytes(recd.pid());

    // No finishing after the stop: its reads would be counted as what the session kept.
    recd.rec_json(&[
        "start", "--name", "many", "--topic", "mt/*", "--finish", "none",
    ]);
    let load = domain.load(
        &RecdLoad::new("mt/")
            .cameras(0)
            .small_topics(TOPICS)
            .small_rate(10)
            .duration(Duration::from_secs(15)),
    );
    let mut seen = 0;
    wait_until(Duration::from_secs(60), || {
        let status = recd.rec_json(&["status", "many"]);
        seen = status[0]["topics"].as_array().map_or(0, Vec::len);
        seen >= TOPICS
    });
    assert_eq!(seen, TOPICS, "every topic is recorded before the stop");
    let while_recording = anonymous_bytes(recd.pid());
    finish_load(load);
    let stopped = recd.rec_json(&["stop", "many"]);
    assert_eq!(
        stopped[0]["topics"].as_array().map(Vec::len),
        Some(TOPICS),
        "{stopped}"
    );

    let after = anonymous_bytes(recd.pid());
    let mib = |bytes: u64| bytes as f64 / f64::from(1 << 20);
    assert!(
        while_recording > before + KEPT_AFTER_STOP,
        "the session's topics took memory: {:.1} MiB recording, {:.1} MiB before",
        mib(while_recording),
        mib(before)
    );
    assert!(
        after <= before + KEPT_AFTER_STOP,
        "recd kept {:.1} MiB after the session stopped ({:.1} MiB before it, {:.1} MiB \
         while recording); at most {:.0} MiB may stay",
        mib(after),
        mib(before),
        mib(while_recording),
        mib(KEPT_AFTER_STOP)
    );
}
