//! `rec pause`, `rec resume`, `rec start --paused` and `rec mark` on the real recd and rec:
//! a paused session writes nothing and counts what it takes as paused (so that written +
//! paused is what the publisher sent, exactly), and markers land in the files it writes,
//! where `rec info` and the Python `mcap` package find them.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use recd_testkit::{finish_load, read_mcap, stopped_files, wait_until, Domain, Recd, RecdLoad};
use serde_json::Value;

fn now_ns() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64
}

/// The session's counts of its one topic in `rec status --json`.
fn counts(recd: &Recd, session: &str) -> Value {
    recd.rec_json(&["status", session])[0]["topics"][0].clone()
}

#[test]
fn a_paused_session_counts_what_it_does_not_write_and_markers_land_in_its_files() {
    let root = tempfile::tempdir().unwrap();
    let domain = Domain::new();
    let recd = Recd::start(root.path(), &domain);
    recd.rec_json(&["start", "--name", "drive", "--topic", "pm/*"]);
    recd.rec_json(&["start", "--name", "held", "--topic", "pm/*", "--paused"]);
    let load = domain.load(
        &RecdLoad::new("pm/")
            .cameras(0)
            .small_topics(1)
            .small_rate(100)
            .count(400)
            .duration(Duration::from_secs(30))
            .wait_subscribers(2),
    );
    assert!(wait_until(Duration::from_secs(20), || {
        counts(&recd, "drive")["written"].as_u64() >= Some(50)
    }));
    let before = recd.rec_json(&["mark", "drive", "before the pause"]);
    assert_eq!(before["name"], "drive");

    let paused = recd.rec_json(&["pause", "drive"]);
    let paused_at = now_ns();
    assert_eq!(
        (paused["paused"].clone(), paused["changed"].clone()),
        (true.into(), true.into())
    );
    let again = recd.rec_json(&["pause", "drive"]);
    assert_eq!(again["changed"], false, "{again}");
    std::thread::sleep(Duration::from_millis(1000));
    let status = recd.rec_json(&["status", "drive"]);
    assert_eq!(status[0]["paused"], true, "{status}");
    assert!(
        status[0]["topics"][0]["paused"].as_u64() > Some(50),
        "{status}"
    );
    let text = String::from_utf8_lossy(&recd.rec(&["status", "drive"]).stdout).into_owned();
    assert!(
        text.contains("paused (rec resume drive writes again)"),
        "{text}"
    );

    let resumed_at = now_ns();
    let resumed = recd.rec_json(&["resume", "drive"]);
    assert_eq!(resumed["paused"], false);
    let after = recd.rec_json(&["mark", "drive", "after the pause"]);

    let sent = finish_load(load).topics[0].sent;
    assert_eq!(sent, 400);
    // Every message sent is written or counted as paused, exactly.
    for session in ["drive", "held"] {
        assert!(
            wait_until(Duration::from_secs(20), || {
                let c = counts(&recd, session);
                c["written"].as_u64().unwrap() + c["paused"].as_u64().unwrap() == sent
            }),
            "{session}: {}",
            counts(&recd, session)
        );
    }
    let held = recd.rec_json(&["stop", "held"]);
    let held_topic = &held[0]["topics"][0];
    assert_eq!(
        (
            held_topic["written"].as_u64(),
            held_topic["paused"].as_u64()
        ),
        (Some(0), Some(sent)),
        "{held}"
    );

    let stopped = recd.rec_json(&["stop", "drive"]);
    let topic = &stopped[0]["topics"][0];
    let (written, paused_count) = (
        topic["written"].as_u64().unwrap(),
        topic["paused"].as_u64().unwrap(),
    );
    assert_eq!(written + paused_count, sent, "{stopped}");
    assert_eq!(topic["dropped"], 0, "{stopped}");
    assert!(paused_count >= 50, "{stopped}");

    // The files hold what was written, nothing from well inside the pause, and both
    // markers in order.
    let files = stopped_files(&stopped);
    assert_eq!(files.len(), 1);
    let read = read_mcap(&files[0]);
    let messages = read["messages"].as_array().unwrap();
    assert_eq!(messages.len() as u64, written);
    let slack = 100_000_000;
    assert!(messages.iter().all(|m| {
        let t = m["log_time"].as_u64().unwrap();
        t < paused_at + slack || t + slack > resumed_at
    }));
    let markers: Vec<(&str, u64)> = read["metadata"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["name"] == "marker")
        .map(|m| {
            (
                m["metadata"]["text"].as_str().unwrap(),
                m["metadata"]["time"].as_str().unwrap().parse().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        markers,
        [
            ("before the pause", before["time_ns"].as_u64().unwrap()),
            ("after the pause", after["time_ns"].as_u64().unwrap()),
        ]
    );
    assert!(markers[0].1 < paused_at && markers[1].1 >= resumed_at);

    // rec info lists them, from the summary.
    let info = recd.rec_json(&["info", files[0].to_str().unwrap()]);
    let listed: Vec<&str> = info["markers"]
        .as_array()
        .unwrap_or_else(|| panic!("{info}"))
        .iter()
        .map(|m| m["text"].as_str().unwrap())
        .collect();
    assert_eq!(listed, ["before the pause", "after the pause"]);
}

#[test]
fn requests_name_a_running_session_and_a_marker_needs_text() {
    let root = tempfile::tempdir().unwrap();
    let domain = Domain::new();
    let recd = Recd::start(root.path(), &domain);
    let unknown = recd.rec(&["pause", "nowhere"]);
    assert_eq!(unknown.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&unknown.stderr).contains("nowhere"));
    recd.rec_json(&["start", "--name", "s", "--topic", "nothing/*"]);
    let empty = recd.rec(&["mark", "s", " "]);
    assert_eq!(empty.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&empty.stderr).contains("a marker needs a text"));
    let resumed = recd.rec_json(&["resume", "s"]);
    assert_eq!(resumed["changed"], false, "{resumed}");
    recd.rec_json(&["stop", "s"]);
}

#[test]
fn a_paused_session_split_by_duration_starts_no_files_of_latched_repeats() {
    let root = tempfile::tempdir().unwrap();
    let domain = Domain::new();
    let recd = Recd::start(root.path(), &domain);
    recd.rec_json(&[
        "start",
        "--name",
        "latched",
        "--topic",
        "pl/*",
        "--max-duration",
        "1s",
    ]);
    // A latched topic: its last message is repeated at the start of every new file.
    finish_load(
        domain.load(
            &RecdLoad::new("pl/")
                .cameras(0)
                .small_topics(1)
                .small_rate(50)
                .count(20)
                .history(1)
                .duration(Duration::from_secs(30))
                .wait_subscribers(1),
        ),
    );
    assert!(recd.wait_written("latched", 20));
    recd.rec_json(&["pause", "latched"]);
    let current = || recd.rec_json(&["status", "latched"])[0]["current_files"].clone();
    std::thread::sleep(Duration::from_millis(100));
    let at_pause = current();
    std::thread::sleep(Duration::from_millis(2500));
    assert_eq!(current(), at_pause, "no file split off while paused");
    recd.rec_json(&["stop", "latched"]);
}
