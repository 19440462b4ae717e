//! `recd-e2e bare-dds`, the reference `recd-e2e ddsperf` measures the recorder against:
//! it takes every sample of a keyed topic (ddsperf's) and of a no-key one (recd-load's),
//! and counts them right, so that a cheap reference is never one that missed samples.

mod common;

use std::process::{Child, Command, Stdio};
use std::time::Duration;

use common::{binary, ddsperf_done, ddsperf_publish, finish_load, wait_bounded, DDSPERF_TOPIC};
use recd_engine::BareCounts;
use recd_workload::blob;

/// A DDS domain of this test process's own, `offset` apart for each test.
fn domain(offset: u16) -> u16 {
    150 + (std::process::id() % 40) as u16 * 2 + offset
}

fn start_bare(domain: u16, topic: &str) -> Child {
    Command::new(binary("recd-e2e"))
        .args(["bare-dds", "--topic", topic, "--dds-domain"])
        .arg(domain.to_string())
        .stdout(Stdio::piped())
        .spawn()
        .expect("recd-e2e starts")
}

/// Stops the bare reader with SIGINT and returns what it took.
fn stop_bare(bare: Child) -> BareCounts {
    // SAFETY: kill(2) on our own child.
    unsafe { libc::kill(bare.id() as i32, libc::SIGINT) };
    let output = wait_bounded(bare, Duration::from_secs(10));
    assert!(output.status.success(), "bare-dds failed: {output:?}");
    serde_json::from_slice(&output.stdout).expect("bare-dds prints its counts as JSON")
}

#[test]
fn the_bare_reader_takes_every_sample_of_a_keyed_ddsperf_writer() {
    let domain = domain(0);
    let bare = start_bare(domain, DDSPERF_TOPIC);
    std::thread::sleep(Duration::from_secs(1));
    ddsperf_done(
        ddsperf_publish(domain, 2, "1kHz", "1k"),
        Duration::from_secs(30),
    );
    std::thread::sleep(Duration::from_millis(500));
    let counts = stop_bare(bare);
    assert_eq!(counts.lost, 0, "{counts:?}");
    // ddsperf does not say how many it sent; its sequence numbers do: 2 s at 1 kHz.
    let sent = counts.before_first + counts.received;
    assert!((1900..=2200).contains(&sent), "{counts:?}");
    assert!(counts.received >= 1500, "{counts:?}");
    assert!(counts.bytes >= counts.received * 1024, "{counts:?}");
}

#[test]
fn the_bare_reader_takes_every_sample_of_a_no_key_writer() {
    let domain = domain(1);
    let prefix = format!("bare_dds_test_{}/", std::process::id());
    let topic = blob::dds_topic(&format!("/{prefix}small_0"));
    let bare = start_bare(domain, &topic);
    let load = Command::new(binary("recd-load"))
        .args(["--json", "--name-prefix", &prefix, "--duration", "1s"])
        .args(["dds", "--domain", &domain.to_string()])
        .args(["--interface", "127.0.0.1", "--cameras", "0"])
        .args(["--small-topics", "1", "--small-size", "100"])
        .args(["--small-rate", "500"])
        .stdout(Stdio::piped())
        .spawn()
        .expect("recd-load starts");
    // recd-load publishes once the reader matched its writer.
    let report = finish_load(load);
    std::thread::sleep(Duration::from_millis(500));
    let counts = stop_bare(bare);
    let sent = report.topics[0].sent;
    assert_eq!(sent, 500);
    assert_eq!(
        counts,
        BareCounts {
            received: sent,
            lost: 0,
            bytes: sent * 100,
            before_first: 0,
        }
    );
}
