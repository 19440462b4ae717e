//! A recording that splits often keeps no trace of the files it closed: each file is
//! closed on a thread of its own, and a thread never joined keeps its stack mapped (two
//! mappings and about 24 KiB resident each), which grew recd by about 10 MB an hour in
//! the soak and would, after some 32,000 files, reach the kernel's limit of mappings.
//!
//! A test binary of its own, so that the process's mappings are the recording's alone.

use std::time::Duration;

use recd_engine::Recording;
use recd_testkit::{finish_load, wait_until, Domain, RecdLoad};

/// Mappings of this process.
fn mappings() -> usize {
    std::fs::read_to_string("/proc/self/maps")
        .unwrap()
        .lines()
        .count()
}

#[test]
fn files_closed_during_a_recording_leave_no_mapping_behind() {
    /// Splits counted between the two looks; the load gives about twice as many.
    const SPLITS: usize = 60;
    let domain = Domain::new();
    let dir = tempfile::tempdir().unwrap();
    let mut config = domain.config(dir.path(), &["t/*"]);
    config.split.max_bytes = Some(1_000_000);
    let recording = Recording::start(config).unwrap();
    let closed = || recording.status().files_closed as usize;
    // 100 kB frames at 200 Hz: 20 MB/s, a split every 50 ms, for 8 s.
    let load = domain.load(
        &RecdLoad::new("t/")
            .cameras(1)
            .frame_size(100_000)
            .fps(200)
            .count(1_600)
            .buffer(16)
            .wait_subscribers(1),
    );
    assert!(
        wait_until(Duration::from_secs(30), || closed() >= 5),
        "the recording split"
    );
    let (closed_before, mappings_before) = (closed(), mappings());
    finish_load(load);
    let closed_after = closed();
    let grown = mappings().saturating_sub(mappings_before);
    assert!(
        closed_after - closed_before >= SPLITS,
        "the load split the recording too few times to tell: {closed_before} -> {closed_after}"
    );
    // Never joined, the closing threads of those files would have left two mappings each.
    assert!(
        grown < SPLITS / 4,
        "{grown} more mappings after {} files closed",
        closed_after - closed_before
    );
    let summary = recording.stop().unwrap();
    assert!(
        summary.files.len() >= closed_after,
        "every closed file's summary: {} of {closed_after}",
        summary.files.len()
    );
}
