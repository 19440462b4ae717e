//! `rec play --services-as-calls` among real ROS 2 nodes (rclpy over rmw_fastrtps_cpp,
//! from PyPI's ROS 2 wheels): a service whose client and server both have introspection on
//! (so each request is recorded twice, REQUEST_SENT and REQUEST_RECEIVED) is recorded with
//! `rec start --services`, then played to a fresh server of the service: played as a
//! topic (without the flag) it calls nothing; played as calls, the server receives exactly
//! the recorded requests, in order, none twice, and the summary counts them answered.
//! Played where no server runs, the calls go unanswered and the playback ends, saying so.
//!
//! The service is rcl_interfaces/srv/ListParameters, whose request's uint64 lies at
//! another alignment inside an event than in the request alone. Each test uses DDS
//! domains of its own.

use std::path::{Path, PathBuf};
use std::time::Duration;

use recd_testkit::{python, recorded_messages, stopped_files, Domain, Recd, Script};
use serde_json::Value;

const SERVICE: &str = "/recd_calls";
const EVENTS: &str = "/recd_calls/_service_event";
const CALLS: usize = 5;

/// The ROS 2 install tree of the test Python's venv (`share/<pkg>/{msg,srv}`).
fn wheels_share() -> PathBuf {
    let python = python();
    let venv = python
        .parent()
        .and_then(Path::parent)
        .expect("<venv>/bin/python");
    venv.join("share")
}

/// The requests a `rclpy_service.py` printed.
fn requests(lines: &[Value]) -> Vec<Value> {
    (lines.iter())
        .filter_map(|line| line.get("request").cloned())
        .collect()
}

#[test]
fn recorded_requests_are_called_again_once_each_in_order() {
    let root = tempfile::tempdir().unwrap();
    let shm = Domain::new();
    let recording = format!(
        "dds_interfaces = [\"127.0.0.1\"]\ndds_message_dirs = [{:?}]\n",
        wheels_share()
    );
    let recd = Recd::start_configured(root.path(), &shm, "", &recording, &[]);

    // Recorded from a real client and server, both introspecting.
    recd.rec_json(&[
        "start",
        "--name",
        "calls",
        "--dds-domain",
        "191",
        "--services",
        SERVICE,
    ]);
    let server = Script::spawn(
        "rclpy_service.py",
        &[
            "server",
            "--domain",
            "191",
            "--introspection",
            "--count",
            &CALLS.to_string(),
        ],
    );
    assert!(server.wait_ready(Duration::from_secs(60)));
    let client = Script::spawn(
        "rclpy_service.py",
        &[
            "client",
            "--domain",
            "191",
            "--introspection",
            "--calls",
            &CALLS.to_string(),
            "--start-after",
            "2",
        ],
    )
    .finish(Duration::from_secs(120));
    assert_eq!(client.done["answered"], CALLS, "{}", client.done);
    let recorded = requests(&client.samples);
    assert_eq!(recorded.len(), CALLS);
    server.finish(Duration::from_secs(60));
    // Four events per call: REQUEST_SENT, REQUEST_RECEIVED, RESPONSE_SENT, RESPONSE_RECEIVED.
    assert!(
        recd.wait_written("calls", 4 * CALLS as u64),
        "{}",
        recd.log()
    );
    let files = stopped_files(&recd.rec_json(&["stop", "calls"]));
    // Both ends' events are recorded: each request as REQUEST_SENT (0) and
    // REQUEST_RECEIVED (1), each with the client's GID as its end knows it.
    let events: Vec<(u8, Vec<u8>)> = recorded_messages(&files)
        .into_iter()
        .filter(|m| m.topic == EVENTS)
        .map(|m| (m.data[4], m.data[16..32].to_vec()))
        .collect();
    assert_eq!(events.len(), 4 * CALLS, "{events:?}");
    let gids = |event_type: u8| {
        (events.iter())
            .filter(|(t, _)| *t == event_type)
            .map(|(_, gid)| gid.clone())
            .collect::<Vec<_>>()
    };
    let (sent, received) = (gids(0), gids(1));
    assert_eq!((sent.len(), received.len()), (CALLS, CALLS), "{events:?}");
    eprintln!(
        "the client's GID in REQUEST_SENT {:02x?}, in REQUEST_RECEIVED {:02x?}",
        sent[0], received[0]
    );

    // A fresh server, running before the playbacks.
    let fresh = Script::spawn(
        "rclpy_service.py",
        &[
            "server",
            "--domain",
            "192",
            "--idle",
            "5",
            "--timeout",
            "120",
        ],
    );
    assert!(fresh.wait_ready(Duration::from_secs(60)));
    let play = |extra: &[&str]| {
        let mut args = vec![
            "play",
            "calls",
            "--dds-domain",
            "192",
            "--dds-interface",
            "127.0.0.1",
        ];
        args.extend(extra);
        recd.rec_json(&args)
    };
    // Without the flag the events are a topic like any other: nothing is called.
    let as_topic = play(&[]);
    assert_eq!(as_topic["topics"][0]["name"], EVENTS, "{as_topic}");
    assert_eq!(as_topic["topics"][0]["sent"], 4 * CALLS, "{as_topic}");
    assert_eq!(as_topic["calls"], serde_json::json!([]), "{as_topic}");

    let as_calls = play(&["--services-as-calls"]);
    let heard = requests(&fresh.finish(Duration::from_secs(150)).samples);
    assert_eq!(
        heard, recorded,
        "the recorded requests, in order, each once; {as_calls}"
    );
    let calls = &as_calls["calls"][0];
    assert_eq!(calls["service"], SERVICE, "{as_calls}");
    assert_eq!(calls["service_type"], "rcl_interfaces/srv/ListParameters");
    assert_eq!(calls["sent"], CALLS, "{as_calls}");
    assert_eq!(calls["answered"], CALLS, "{as_calls}");
    assert_eq!(as_calls["topics"][0]["sent"], CALLS, "{as_calls}");

    // No server: the calls go unanswered, the playback ends and says so.
    let alone = recd.rec(&[
        "play",
        "calls",
        "--services-as-calls",
        "--dds-domain",
        "193",
        "--dds-interface",
        "127.0.0.1",
    ]);
    let text = String::from_utf8_lossy(&alone.stdout);
    assert!(alone.status.success(), "{text}");
    assert!(
        text.contains(&format!(
            "called {SERVICE} (rcl_interfaces/srv/ListParameters): {CALLS} calls sent, \
             0 answered; {CALLS} unanswered 3 s after the last"
        )),
        "{text}"
    );
}
