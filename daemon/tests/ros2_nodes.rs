//! recd among real ROS 2 nodes: an rclpy node over rmw_fastrtps_cpp (PyPI's Kilted wheels,
//! `tests/python/rclpy_types_node.py`) recorded by a recd that has no message definitions
//! at all. recd asks the node for each type (`~/get_type_description`), checks it against
//! the type hash and records the definition as the schema: the schema equals the `.msg`
//! files the wheels ship, nested types included, a rule decodes the topic with it, and
//! `rec info` knows the types. A node that does not answer leaves the schema empty, and
//! `rec status` says why. With `--parameters`, each file starts with the node's parameters
//! as they were (one Metadata record per node, read by Python's `mcap`) and holds every
//! change as a `/parameter_events` message.
//!
//! Each test uses a DDS domain of its own.

use std::path::{Path, PathBuf};
use std::time::Duration;

use recd_testkit::{
    read_mcap, read_ros2, recorded_messages, stopped_files, wait_until, wheel_msg, Domain, Recd,
    Script,
};
use serde_json::Value;

/// rosbag2's concatenation of `types` (the type, then its dependencies in the order
/// rosbag2 visits them), from the wheels' `.msg` files.
fn concatenated(types: &[&str]) -> String {
    let mut text = wheel_msg(types[0]);
    for name in &types[1..] {
        text.push('\n');
        text.push_str(&"=".repeat(80));
        text.push_str(&format!("\nMSG: {name}\n"));
        text.push_str(&wheel_msg(name));
    }
    text
}

/// recd on DDS loopback with no message definitions anywhere (none configured, an empty
/// AMENT_PREFIX_PATH), with `extra` in its configuration.
fn recd_without_definitions(root: &Path, shm: &Domain, extra: &str) -> Recd {
    Recd::start_configured(
        root,
        shm,
        extra,
        "dds_interfaces = [\"127.0.0.1\"]\n",
        &[("AMENT_PREFIX_PATH", "")],
    )
}

const BRAKE_RULE: &str = r#"
[[rule]]
name = "brake"
topic = "/imu"
when = "msg.linear_acceleration.x < -6.0"
before = "1s"
after = "1s"
"#;

#[test]
fn types_come_from_the_publishing_node_with_their_nested_types_and_rules_decode_them() {
    const DDS: &str = "181";
    const COUNT: u64 = 40;
    let root = tempfile::tempdir().unwrap();
    let shm = Domain::new();
    let recd = recd_without_definitions(root.path(), &shm, BRAKE_RULE);
    recd.rec_json(&[
        "start",
        "--name",
        "net",
        "--dds-domain",
        DDS,
        "--topic",
        "/chatter",
        "--topic",
        "/pose",
        "--topic",
        "/imu",
    ]);
    let node = Script::spawn(
        "rclpy_types_node.py",
        &[
            "--domain",
            DDS,
            "--node",
            "talker",
            "--topic",
            "/chatter:string",
            "--topic",
            "/pose:pose",
            "--topic",
            "/imu:imu",
            "--count",
            &COUNT.to_string(),
            "--rate",
            "20",
            "--linger",
            "3",
        ],
    )
    .finish(Duration::from_secs(120));
    assert_eq!(node.done["matched"], true, "{}", node.done);
    for topic in ["/chatter", "/pose", "/imu"] {
        assert!(
            recd.wait_topic_written("net", topic, COUNT, Duration::from_secs(30)),
            "{topic}: {:?}\n{}",
            recd.topic_status("net", topic),
            recd.log()
        );
    }
    let status = recd.rec_json(&["status", "net"]);
    assert_eq!(status[0]["problems"], Value::Array(vec![]), "{status:#}");

    // The rule on the Imu decoded its messages with the fetched definition and fired.
    let fired = wait_until(Duration::from_secs(30), || {
        let incidents = recd.rec_json(&["incidents"]);
        (incidents.as_array().unwrap().iter()).any(|i| i["rule"]["rule"] == "brake")
    });
    assert!(fired, "{}\n{}", recd.rec_json(&["incidents"]), recd.log());

    let stopped = recd.rec_json(&["stop", "net"]);
    let files = stopped_files(&stopped);
    let recorded = recorded_messages(&files);
    let expected = [
        (
            "/chatter",
            "std_msgs/msg/String",
            concatenated(&["std_msgs/String"]),
        ),
        (
            "/pose",
            "geometry_msgs/msg/PoseStamped",
            concatenated(&[
                "geometry_msgs/PoseStamped",
                "geometry_msgs/Pose",
                "geometry_msgs/Point",
                "geometry_msgs/Quaternion",
                "std_msgs/Header",
                "builtin_interfaces/Time",
            ]),
        ),
        (
            "/imu",
            "sensor_msgs/msg/Imu",
            concatenated(&[
                "sensor_msgs/Imu",
                "geometry_msgs/Quaternion",
                "geometry_msgs/Vector3",
                "std_msgs/Header",
                "builtin_interfaces/Time",
            ]),
        ),
    ];
    for (topic, schema, definition) in &expected {
        let messages: Vec<_> = recorded.iter().filter(|m| m.topic == *topic).collect();
        assert_eq!(messages.len() as u64, COUNT, "{topic}");
        let first = messages[0];
        assert_eq!(first.schema_name, *schema);
        assert_eq!(first.schema_encoding, "ros2msg");
        assert_eq!(
            String::from_utf8_lossy(&first.schema_data),
            *definition,
            "{topic}"
        );
        // Kept in the state directory by the hash the writer announced.
        let hash = &first.metadata["topic_type_hash"];
        let kept = root.path().join(format!("state/types/{hash}.msg"));
        assert_eq!(
            std::fs::read_to_string(&kept).unwrap_or_default(),
            *definition,
            "{}",
            kept.display()
        );
    }
    let info = recd.rec(&["info", "net"]);
    let info = String::from_utf8_lossy(&info.stdout);
    assert!(!info.contains("without message definitions"), "{info}");
}

#[test]
fn a_node_that_does_not_answer_leaves_the_schema_empty_and_status_says_why() {
    const DDS: &str = "182";
    // More than a reader's first history (64 samples) arrive while the node is asked.
    const COUNT: u64 = 150;
    let root = tempfile::tempdir().unwrap();
    let shm = Domain::new();
    let recd = recd_without_definitions(root.path(), &shm, "");
    recd.rec_json(&[
        "start",
        "--name",
        "mute",
        "--dds-domain",
        DDS,
        "--topic",
        "/quiet",
    ]);
    // It publishes but never spins: its services never answer.
    let node = Script::spawn(
        "rclpy_types_node.py",
        &[
            "--domain",
            DDS,
            "--node",
            "mute",
            "--topic",
            "/quiet:string",
            "--count",
            &COUNT.to_string(),
            "--rate",
            "50",
            "--linger",
            "12",
            "--no-spin",
        ],
    )
    .finish(Duration::from_secs(120));
    assert_eq!(node.done["matched"], true, "{}", node.done);
    // Held while the node is asked, then recorded without a definition: every message.
    assert!(
        recd.wait_topic_written("mute", "/quiet", COUNT, Duration::from_secs(60)),
        "{:?}\n{}",
        recd.topic_status("mute", "/quiet"),
        recd.log()
    );
    let status = recd.rec_json(&["status", "mute"]);
    let problems = status[0]["problems"].to_string();
    assert!(
        problems.contains("dds:rt/quiet")
            && problems.contains("/mute did not answer ~/get_type_description"),
        "{status:#}"
    );
    let text = recd.rec(&["status", "mute"]);
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(text.contains("did not answer"), "{text}");

    let stopped = recd.rec_json(&["stop", "mute"]);
    let recorded = recorded_messages(&stopped_files(&stopped));
    let quiet: Vec<_> = recorded.iter().filter(|m| m.topic == "/quiet").collect();
    assert_eq!(quiet.len() as u64, COUNT);
    let topic = &stopped[0]["topics"][0];
    assert_eq!(topic["received"], COUNT, "{stopped}");
    assert_eq!(topic["dropped"], 0, "{stopped}");
    assert_eq!(quiet[0].schema_name, "std_msgs/msg/String");
    assert!(quiet[0].schema_data.is_empty());
    let info = recd.rec(&["info", "mute"]);
    let info = String::from_utf8_lossy(&info.stdout);
    assert!(info.contains("without message definitions"), "{info}");
    assert!(!root.path().join("state/types").exists());
}

#[test]
fn a_session_stopped_while_a_type_is_asked_counts_what_it_gathered_as_dropped() {
    const DDS: &str = "185";
    let root = tempfile::tempdir().unwrap();
    let shm = Domain::new();
    let recd = recd_without_definitions(root.path(), &shm, "");
    recd.rec_json(&[
        "start",
        "--name",
        "held",
        "--dds-domain",
        DDS,
        "--topic",
        "/held",
    ]);
    let until = root.path().join("enough");
    let until_arg = until.to_str().unwrap();
    // It never answers, so its topic stays held for the node's bound (5 s).
    let node = Script::spawn(
        "rclpy_types_node.py",
        &[
            "--domain",
            DDS,
            "--node",
            "silent",
            "--topic",
            "/held:string",
            "--count",
            "1",
            "--rate",
            "50",
            "--linger",
            "0",
            "--no-spin",
            "--until",
            until_arg,
            "--wait-until",
            "60",
        ],
    );
    let publishing = wait_until(Duration::from_secs(60), || {
        node.lines().iter().any(|l| l["publishing"] == true)
    });
    assert!(publishing, "{:?}", node.lines());
    std::thread::sleep(Duration::from_millis(800));
    let status = recd.rec_json(&["status", "held"]);
    assert_eq!(
        status[0]["topics"],
        Value::Array(vec![]),
        "the topic is still held: {status:#}"
    );

    let stopped = recd.rec_json(&["stop", "held"]);
    std::fs::write(&until, "").unwrap();
    let node = node.finish(Duration::from_secs(60));
    assert_eq!(node.done["matched"], true, "{}", node.done);
    let topics = stopped[0]["topics"].as_array().unwrap();
    assert_eq!(topics.len(), 1, "{stopped}");
    let topic = &topics[0];
    assert_eq!(topic["name"], "/held", "{stopped}");
    let received = topic["received"].as_u64().unwrap();
    assert!(received > 0, "what it gathered is counted: {stopped}");
    assert_eq!(topic["dropped"], received, "{stopped}");
    assert_eq!(topic["written"], 0, "{stopped}");
    assert!(
        recorded_messages(&stopped_files(&stopped)).is_empty(),
        "{stopped}"
    );
}

#[test]
fn a_node_s_service_requests_and_replies_are_not_recorded_as_topics() {
    const DDS: &str = "183";
    const COUNT: u64 = 10;
    let root = tempfile::tempdir().unwrap();
    let shm = Domain::new();
    let recd = recd_without_definitions(root.path(), &shm, "");
    // Everything: an rclpy node serves its parameter and type-description services on
    // rq/<node>/…Request and rr/<node>/…Reply DDS topics.
    recd.rec_json(&["start", "--name", "all", "--dds-domain", DDS]);
    let node = Script::spawn(
        "rclpy_types_node.py",
        &[
            "--domain",
            DDS,
            "--node",
            "served",
            "--topic",
            "/chatter:string",
            "--count",
            &COUNT.to_string(),
            "--linger",
            "3",
        ],
    )
    .finish(Duration::from_secs(120));
    assert_eq!(node.done["matched"], true, "{}", node.done);
    assert!(
        recd.wait_topic_written("all", "/chatter", COUNT, Duration::from_secs(30)),
        "{:?}\n{}",
        recd.topic_status("all", "/chatter"),
        recd.log()
    );
    let stopped = recd.stop("all");
    let names: Vec<String> = stopped.counts().into_keys().collect();
    assert!(names.contains(&"/chatter".to_string()), "{names:?}");
    assert!(
        !names
            .iter()
            .any(|name| name.contains("rq/") || name.contains("rr/")),
        "service plumbing is not a topic: {names:?}"
    );
}

/// `rec info --json FILE`'s parameters of `node` (name → YAML value), once the file has
/// them (the file may still be being written: `rec info` scans it).
fn parameters_in(recd: &Recd, file: &Path, node: &str) -> Option<serde_json::Map<String, Value>> {
    let info = recd.rec(&["info", "--json", &file.display().to_string()]);
    let info: Value = serde_json::from_slice(&info.stdout).ok()?;
    info["parameters"][node].as_object().cloned()
}

/// The file the session writes now (none for a moment while it splits).
fn current_file(recd: &Recd, session: &str) -> Option<PathBuf> {
    let status = recd.rec_json(&["status", session]);
    status[0]["current_files"][0].as_str().map(PathBuf::from)
}

#[test]
fn each_file_starts_with_the_nodes_parameters_and_their_changes_are_recorded() {
    const DDS: &str = "184";
    let root = tempfile::tempdir().unwrap();
    let shm = Domain::new();
    let recd = recd_without_definitions(root.path(), &shm, "");
    // Only /chatter by name: /parameter_events comes with --parameters all the same.
    recd.rec_json(&[
        "start",
        "--name",
        "tuned",
        "--dds-domain",
        DDS,
        "--topic",
        "/chatter",
        "--no-iceoryx2",
        "--parameters",
    ]);
    let control = tempfile::tempdir().unwrap();
    let set_now = control.path().join("set");
    let stop_now = control.path().join("stop");
    let node = Script::spawn(
        "rclpy_types_node.py",
        &[
            "--domain",
            DDS,
            "--node",
            "tuned",
            "--topic",
            "/chatter:string",
            "--count",
            "10",
            "--rate",
            "20",
            "--param",
            "gain=1.5",
            "--param",
            "label=front",
            "--set",
            "gain=2.5",
            "--set-when",
            &set_now.display().to_string(),
            "--until",
            &stop_now.display().to_string(),
            "--linger",
            "1",
        ],
    );
    assert!(node.wait_ready(Duration::from_secs(60)));

    // The first file gets the node's parameters as they are...
    let first = current_file(&recd, "tuned").expect("a file");
    let read = |file: &Path, gain: &str| {
        wait_until(Duration::from_secs(60), || {
            parameters_in(&recd, file, "/tuned").is_some_and(|p| p["gain"] == gain)
        })
    };
    assert!(read(&first, "1.5"), "{}\n{}", first.display(), recd.log());
    // ...the node changes one, and the next file starts with the new value.
    // recd records /parameter_events once the node gave its type.
    assert!(wait_until(Duration::from_secs(60), || recd
        .topic_status("tuned", "/parameter_events")
        .is_some()));
    // The node sets gain once its /parameter_events writer has matched a reader. About one
    // run in five under load, that first change never reached recd (received 0, none
    // counted lost, for 30 s): the writer had matched recd's reader before rustdds's reader
    // took the writer on, it seems. The change is then asked for again, at most 3 times;
    // the closing note of issue 67 keeps this as an open defect.
    let received = || {
        recd.topic_status("tuned", "/parameter_events")
            .and_then(|topic| topic["received"].as_u64())
            .unwrap_or(0)
    };
    let mut rounds = 0;
    while rounds < 3 && received() == 0 {
        rounds += 1;
        std::fs::write(&set_now, rounds.to_string()).unwrap();
        let mut set = None;
        assert!(wait_until(Duration::from_secs(60), || {
            set = (node.lines().into_iter())
                .find(|line| line["round"] == rounds.to_string().as_str());
            set.is_some()
        }));
        assert_eq!(set.unwrap()["events_matched"], true);
        wait_until(Duration::from_secs(10), || received() > 0);
    }
    assert!(
        received() > 0,
        "the change never reached recd in {rounds} rounds"
    );
    // What the ROS 2 control service's split and `ros2 bag`'s ~/split_bagfile ask for.
    let split = recd_control::Client::connect(&recd.socket, Duration::from_secs(10))
        .unwrap()
        .request(&recd_control::Request::Split {
            name: Some("tuned".into()),
        })
        .unwrap();
    assert_eq!(split, recd_control::Response::Done);
    // The writer takes the split between messages.
    let mut second = None;
    assert!(wait_until(Duration::from_secs(30), || {
        second = current_file(&recd, "tuned").filter(|file| *file != first);
        second.is_some()
    }));
    let second = second.expect("the next file");
    assert!(read(&second, "2.5"), "{}\n{}", second.display(), recd.log());
    std::fs::write(&stop_now, "").unwrap();
    let node = node.finish(Duration::from_secs(60));
    assert_eq!(node.done["matched"], true, "{}", node.done);
    let stopped = recd.rec_json(&["stop", "tuned"]);
    let files = stopped_files(&stopped);
    assert_eq!(files.len(), 2, "{stopped:#}");

    // An MCAP reader none of us wrote finds one record per node and file, typed as YAML.
    for (file, gain) in files.iter().zip(["1.5", "2.5"]) {
        let read = read_mcap(file);
        let name = format!(
            "parameters/{}/tuned",
            file.file_name().unwrap().to_string_lossy()
        );
        let record = (read["metadata"].as_array().unwrap().iter())
            .find(|m| m["name"] == name.as_str())
            .unwrap_or_else(|| panic!("{name} in {:#}", read["metadata"]));
        assert_eq!(record["metadata"]["gain"], gain, "{record:#}");
        assert_eq!(record["metadata"]["label"], "'front'", "{record:#}");
        assert_eq!(record["metadata"]["use_sim_time"], "false", "{record:#}");
    }
    // The change itself, with its time, is a /parameter_events message that rosbags decodes
    // with the definition the node gave.
    let events: Vec<Value> = files
        .iter()
        .flat_map(|file| read_ros2(file))
        .filter(|m| m["reader"] == "rosbags" && m["topic"] == "/parameter_events")
        .collect();
    let changed = events.iter().any(|event| {
        event["data"]["node"] == "/tuned"
            && (event["data"]["changed_parameters"]
                .as_array()
                .into_iter()
                .flatten())
            .any(|p| p["name"] == "gain" && p["value"]["double_value"] == 2.5)
    });
    let recorded: Vec<_> = recorded_messages(&files)
        .into_iter()
        .filter(|m| m.topic == "/parameter_events")
        .map(|m| (m.schema_name, m.schema_data.len()))
        .collect();
    assert!(
        changed,
        "no /parameter_events message of the change: {events:#?}\nrecorded: {recorded:?}\n{}",
        recd.log()
    );
    let info = recd.rec(&["info", &files[1].display().to_string()]);
    let info = String::from_utf8_lossy(&info.stdout);
    assert!(info.contains("/tuned  gain: 2.5"), "{info}");
    assert!(!info.contains("without message definitions"), "{info}");
}
