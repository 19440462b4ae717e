//! `rec play` among real ROS 2 nodes (rclpy over rmw_fastrtps_cpp, from PyPI's ROS 2
//! wheels): a recording of an rclpy talker played with default flags to an rclpy listener
//! that runs before the playback reaches it whole — the playback waits for discovery
//! before its first message — and ROS 2's graph names the playback's node.
//!
//! Each test uses DDS domains of its own, so tests running at once do not see each
//! other's topics.

use std::time::Duration;

use recd_testkit::{stopped_files, Domain, Recd, Script};
use serde_json::Value;

/// The messages a script of `rclpy_listener.py` / `rclpy_talker.py` printed, as text.
fn texts(lines: &[Value]) -> Vec<String> {
    lines
        .iter()
        .filter_map(|line| {
            line["message"]["data"]
                .as_str()
                .or_else(|| line["data"].as_str())
        })
        .map(str::to_owned)
        .collect()
}

#[test]
fn a_listener_running_before_a_default_playback_gets_every_message_and_sees_its_node() {
    const COUNT: usize = 29;
    let root = tempfile::tempdir().unwrap();
    let shm = Domain::new();
    let recd = Recd::start_on_dds_loopback(root.path(), &shm);

    // Recorded from a real talker.
    recd.rec_json(&[
        "start",
        "--name",
        "talk",
        "--dds-domain",
        "170",
        "--topic",
        "/chatter",
    ]);
    let talker = Script::spawn(
        "rclpy_talker.py",
        &["--domain", "170", "--count", &COUNT.to_string()],
    )
    .finish(Duration::from_secs(120));
    assert_eq!(talker.done["matched"], true, "{}", talker.done);
    assert_eq!(talker.samples.len(), COUNT);
    assert!(recd.wait_written("talk", COUNT as u64), "{}", recd.log());
    let files = stopped_files(&recd.rec_json(&["stop", "talk"]));
    assert!(!files.is_empty());

    // A listener that is running (subscribed) before the playback starts.
    let listener = Script::spawn(
        "rclpy_listener.py",
        &[
            "--domain",
            "171",
            "--count",
            &COUNT.to_string(),
            "--idle",
            "15",
        ],
    );
    assert!(listener.wait_ready(Duration::from_secs(60)));
    // Default flags: no --wait-subscribers.
    let report = recd.rec_json(&[
        "play",
        "talk",
        "--dds-domain",
        "171",
        "--dds-interface",
        "127.0.0.1",
    ]);
    assert_eq!(report["topics"][0]["sent"], COUNT, "{report}");
    let heard = listener.finish(Duration::from_secs(90));
    let publishers = heard
        .samples
        .iter()
        .find_map(|line| line.get("publishers").cloned())
        .expect("the listener printed the topic's publishers");
    assert_eq!(
        texts(&heard.samples),
        texts(&talker.samples),
        "every message, in order"
    );

    // ROS 2's graph: the playback's writer belongs to its node.
    let publishers = publishers.as_array().unwrap();
    assert_eq!(publishers.len(), 1, "{publishers:?}");
    let publisher = &publishers[0];
    assert_eq!(publisher["node_name"], "rec_play", "{publisher}");
    assert_eq!(publisher["node_namespace"], "/", "{publisher}");
    assert_eq!(
        publisher["topic_type"], "std_msgs/msg/String",
        "{publisher}"
    );
}
