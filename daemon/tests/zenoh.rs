//! The Zenoh source as a user runs it: the real recd and rec, ROS 2 nodes on rmw_zenoh
//! played by Python `eclipse-zenoh` (a Zenoh none of us wrote: liveliness tokens, keys,
//! attachments and CDR as rmw_zenoh writes them, each node its own router), over TCP on
//! loopback, and the files read back by `rosbags`, `mcap-ros2-support` and the `mcap`
//! crate.
//!
//! Each test uses ROS 2 domains and ports of its own, so tests running at once do not see
//! each other's topics.

use std::net::TcpListener;
use std::path::PathBuf;
use std::process::Child;
use std::time::Duration;

use recd_testkit::{
    read_ros2, recd_refused, recorded_messages, ros2_fixtures, script_done, stopped_files,
    wait_until, wheel_msg, zenoh_node, Domain, Published, Recd, RecordedMessage, Script,
};
use serde_json::Value;

/// recd on a root directory and iceoryx2 domain of its own, connecting to `routers`.
struct ZenohRecd {
    recd: Recd,
    root: tempfile::TempDir,
    _shm: Domain,
}

impl ZenohRecd {
    fn start(routers: &[&Router]) -> Self {
        let recording = format!("dds_message_dirs = [{:?}]\n", ros2_fixtures());
        Self::start_with(routers, &recording, &[])
    }

    /// recd with no message definitions anywhere (none configured, an empty
    /// AMENT_PREFIX_PATH).
    fn start_without_definitions(routers: &[&Router]) -> Self {
        Self::start_with(routers, "", &[("AMENT_PREFIX_PATH", "")])
    }

    fn start_with(routers: &[&Router], recording: &str, env: &[(&str, &str)]) -> Self {
        let root = tempfile::tempdir().unwrap();
        let shm = Domain::new();
        let endpoints: Vec<String> = routers.iter().map(|r| r.endpoint()).collect();
        let zenoh = format!("[zenoh]\nconnect = {endpoints:?}\n");
        let recd = Recd::start_configured(root.path(), &shm, &zenoh, recording, env);
        Self {
            recd,
            root,
            _shm: shm,
        }
    }
}

/// A free TCP port on loopback for a node's router.
struct Router {
    port: u16,
}

impl Router {
    fn new() -> Self {
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        Self { port }
    }

    fn endpoint(&self) -> String {
        format!("tcp/127.0.0.1:{}", self.port)
    }

    /// Starts a node (`zenoh_node.py` with `args`) as the router on this port and waits
    /// until it listens.
    fn node(&self, args: &[&str]) -> Child {
        let endpoint = self.endpoint();
        let mut all = vec!["--listen", endpoint.as_str()];
        all.extend(args);
        let child = zenoh_node(&all);
        let listening = wait_until(Duration::from_secs(20), || {
            std::net::TcpStream::connect(("127.0.0.1", self.port)).is_ok()
        });
        assert!(listening, "the Zenoh node does not listen on {endpoint}");
        child
    }
}

fn published(child: Child) -> Published {
    let published = script_done(child, Duration::from_secs(90));
    assert_eq!(published.done["matched"], true, "{}", published.done);
    published
}

fn status_topic(recd: &Recd, session: &str, topic: &str) -> Option<Value> {
    recd.topic_status(session, topic)
}

fn wait_written(recd: &Recd, session: &str, topic: &str, count: u64) -> bool {
    recd.wait_topic_written(session, topic, count, Duration::from_secs(30))
}

/// The recorded messages of `topic`, in file order.
fn data_of(recorded: &[RecordedMessage], topic: &str) -> Vec<Vec<u8>> {
    recorded
        .iter()
        .filter(|m| m.topic == topic)
        .map(|m| m.data.clone())
        .collect()
}

fn payloads(samples: &[Value], topic: &str) -> Vec<Vec<u8>> {
    samples
        .iter()
        .filter(|s| s["topic"] == topic)
        .map(|s| hex(s["hex"].as_str().unwrap()))
        .collect()
}

fn hex(text: &str) -> Vec<u8> {
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).unwrap())
        .collect()
}

#[test]
fn ros2_over_zenoh_is_recorded_byte_exact_and_read_back_by_rosbags_and_mcap_ros2() {
    let (strings, blobs, early) = (Router::new(), Router::new(), Router::new());
    let (pieces, large) = (Router::new(), Router::new());
    let setup = ZenohRecd::start(&[&strings, &blobs, &early, &pieces, &large]);
    let recd = &setup.recd;
    let talker = strings.node(&["--domain", "31", "--count", "50", "--rate", "100"]);
    let blobber = blobs.node(&[
        "--domain",
        "31",
        "--topic",
        "/sensors/blob",
        "--kind",
        "blob",
        "--size",
        "3000",
        "--count",
        "20",
        "--rate",
        "50",
        "--best-effort",
    ]);
    // Samples larger than Zenoh's batches (64 KiB) arrive in fragments, which recd
    // writes from Zenoh's buffers as they are, never joined: lent to the writer (over
    // 64 KiB) and staged, and over the size written in place with direct I/O (1 MiB).
    let piecemeal = pieces.node(&[
        "--domain",
        "31",
        "--topic",
        "/camera/pieces",
        "--kind",
        "blob",
        "--size",
        "300000",
        "--count",
        "10",
        "--rate",
        "20",
    ]);
    let frames = large.node(&[
        "--domain",
        "31",
        "--topic",
        "/camera/raw",
        "--kind",
        "blob",
        "--size",
        "1500000",
        "--count",
        "6",
        "--rate",
        "10",
    ]);
    // Samples ahead of their publisher's token: the topic is described from its key,
    // and what came meanwhile is kept and written in order.
    let untold = early.node(&[
        "--domain",
        "31",
        "--topic",
        "/early",
        "--count",
        "40",
        "--rate",
        "100",
        "--token-after",
        "10",
    ]);
    recd.rec_json(&[
        "start",
        "--name",
        "zen",
        "--zenoh-domain",
        "31",
        "--no-iceoryx2",
    ]);
    let chatter = published(talker);
    let blob = published(blobber);
    let early = published(untold);
    let piecemeal = published(piecemeal);
    let frames = published(frames);
    assert!(
        wait_written(recd, "zen", "/chatter", 50)
            && wait_written(recd, "zen", "/sensors/blob", 20)
            && wait_written(recd, "zen", "/early", 40)
            && wait_written(recd, "zen", "/camera/pieces", 10)
            && wait_written(recd, "zen", "/camera/raw", 6),
        "not all written: {:?}\n{}",
        [
            "/chatter",
            "/sensors/blob",
            "/early",
            "/camera/pieces",
            "/camera/raw"
        ]
        .map(|topic| status_topic(recd, "zen", topic)),
        recd.log()
    );
    for topic in [
        "/chatter",
        "/sensors/blob",
        "/early",
        "/camera/pieces",
        "/camera/raw",
    ] {
        let counts = status_topic(recd, "zen", topic).unwrap();
        assert_eq!(counts["received"], counts["written"], "{counts}");
        assert_eq!(counts["lost"], 0, "{counts}");
        assert_eq!(counts["dropped"], 0, "{counts}");
    }
    let stopped = recd.rec_json(&["stop", "zen"]);
    let files = stopped_files(&stopped);
    assert_eq!(files.len(), 1, "{stopped}");
    assert!(
        files[0].to_string_lossy().ends_with("_0000.mcap"),
        "{files:?}"
    );

    let recorded = recorded_messages(&files);
    for (topic, samples) in [
        ("/chatter", &chatter),
        ("/sensors/blob", &blob),
        ("/early", &early),
        ("/camera/pieces", &piecemeal),
        ("/camera/raw", &frames),
    ] {
        let got = data_of(&recorded, topic);
        assert_eq!(
            got,
            payloads(&samples.samples, topic),
            "{topic} byte for byte"
        );
    }
    let first = recorded.iter().find(|m| m.topic == "/chatter").unwrap();
    assert_eq!(first.schema_name, "std_msgs/msg/String");
    assert!(
        first.metadata["zenoh.key_expr"]
            .starts_with("31/chatter/std_msgs::msg::dds_::String_/RIHS01_df668c74"),
        "{:?}",
        first.metadata
    );
    assert_eq!(
        first.metadata["topic_type_hash"],
        "RIHS01_df668c740482bbd48fb39d76a70dfd4bd59db1288021743503259e948f6b1a18"
    );
    assert!(first.metadata["offered_qos_profiles"].contains("reliability: reliable"));
    let blob_channel = recorded
        .iter()
        .find(|m| m.topic == "/sensors/blob")
        .unwrap();
    assert_eq!(blob_channel.schema_name, "recd_test/msg/Blob");
    assert!(blob_channel.metadata["offered_qos_profiles"].contains("best_effort"));

    let decoded = read_ros2(&files[0]);
    for reader in ["rosbags", "mcap_ros2"] {
        let strings: Vec<&Value> = decoded
            .iter()
            .filter(|m| m["reader"] == reader && m["topic"] == "/chatter")
            .collect();
        assert_eq!(strings.len(), 50, "{reader}");
        assert_eq!(strings[0]["data"], "hello 1", "{reader}");
        let blobs = decoded
            .iter()
            .filter(|m| m["reader"] == reader && m["topic"] == "/sensors/blob")
            .count();
        assert_eq!(blobs, 20, "{reader}");
        let early = decoded
            .iter()
            .filter(|m| m["reader"] == reader && m["topic"] == "/early")
            .count();
        assert_eq!(early, 40, "{reader}");
    }
    let info = recd.rec(&["info", files[0].to_str().unwrap()]);
    let info = String::from_utf8_lossy(&info.stdout);
    assert!(info.contains("Zenoh"), "rec info names the source: {info}");
}

#[test]
fn a_skipped_sequence_number_is_lost_and_a_publisher_restart_is_not() {
    let router = Router::new();
    let setup = ZenohRecd::start(&[&router]);
    let recd = &setup.recd;
    let node = router.node(&[
        "--domain",
        "32",
        "--count",
        "30",
        "--rate",
        "100",
        "--skip",
        "5",
        "--restart-after",
        "15",
        "--odd-token",
    ]);
    recd.rec_json(&["start", "--name", "gaps", "--zenoh-domain", "32"]);
    let sent = published(node);
    assert_eq!(sent.samples.len(), 30);
    assert!(
        wait_written(recd, "gaps", "/chatter", 30),
        "{:?}",
        status_topic(recd, "gaps", "/chatter")
    );
    let counts = status_topic(recd, "gaps", "/chatter").unwrap();
    assert_eq!(counts["received"], 30, "{counts}");
    assert_eq!(
        counts["lost"], 1,
        "sequence number 5 was never sent; the restart (numbers from 1 again under a new GID) loses nothing: {counts}"
    );
    // A token of a shape rmw_zenoh never wrote is left alone, named in the log and the
    // session's problems.
    let log = recd.log();
    assert!(
        log.contains("a liveliness token of a format recd does not know")
            && log.contains("/XX/%/%/talker/%odd"),
        "{log}"
    );
    let status = recd.rec_json(&["status", "gaps"]);
    assert!(status.to_string().contains("entity kind"), "{status}");
    // An incident over the whole session: the Zenoh family's files are cut apart.
    let cut = recd.rec_json(&[
        "trigger", "gaps", "--before", "60s", "--after", "0s", "--wait",
    ]);
    assert_eq!(cut["cut"], "cut", "{cut}");
    let incident = recd.rec_json(&["incidents", "gaps"]);
    let cut_files: Vec<PathBuf> = incident[0]["cut_files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| PathBuf::from(f["path"].as_str().unwrap()))
        .collect();
    let zenoh_cut: Vec<&PathBuf> = cut_files
        .iter()
        .filter(|f| f.to_string_lossy().ends_with("_zenoh.mcap"))
        .collect();
    assert_eq!(zenoh_cut.len(), 1, "{incident}");
    let in_cut = recorded_messages(&[zenoh_cut[0].clone()]);
    assert_eq!(
        in_cut.iter().filter(|m| m.topic == "/chatter").count(),
        30,
        "the cut holds the Zenoh topic's messages of the window"
    );
    let stopped = recd.rec_json(&["stop", "gaps"]);
    let files = stopped_files(&stopped);
    assert!(
        files
            .iter()
            .any(|f| f.to_string_lossy().contains("_zenoh_0000.mcap")),
        "iceoryx2 recorded too: the Zenoh family has files of its own: {files:?}"
    );
}

#[test]
fn a_transient_local_message_published_before_recd_started_is_in_the_file_once() {
    let router = Router::new();
    let setup = ZenohRecd::start(&[&router]);
    let recd = &setup.recd;
    let go = setup.root.path().join("go");
    let go_text = go.to_string_lossy().to_string();
    let node = {
        let endpoint = router.endpoint();
        let child = std::process::Command::new(recd_testkit::python())
            .arg(recd_testkit::python_file("zenoh_node.py"))
            .args([
                "--listen",
                &endpoint,
                "--domain",
                "33",
                "--topic",
                "/map",
                "--transient-local",
                "--depth",
                "5",
                "--before",
                "2",
                "--count",
                "3",
                "--rate",
                "20",
            ])
            .env("ZENOH_NODE_GO_FILE", &go_text)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        assert!(wait_until(Duration::from_secs(20), || {
            std::net::TcpStream::connect(("127.0.0.1", router.port)).is_ok()
        }));
        child
    };
    // The two samples are in the publisher's cache before recd starts.
    std::thread::sleep(Duration::from_millis(500));
    recd.rec_json(&[
        "start",
        "--name",
        "latched",
        "--zenoh-domain",
        "33",
        "--no-iceoryx2",
    ]);
    assert!(
        wait_written(recd, "latched", "/map", 2),
        "the cached samples were not fetched: {:?}\n{}",
        status_topic(recd, "latched", "/map"),
        recd.log()
    );
    std::fs::write(&go, b"").unwrap();
    let sent = published(node);
    assert!(
        wait_written(recd, "latched", "/map", 5),
        "{:?}",
        status_topic(recd, "latched", "/map")
    );
    let stopped = recd.rec_json(&["stop", "latched"]);
    let recorded = recorded_messages(&stopped_files(&stopped));
    let got = data_of(&recorded, "/map");
    assert_eq!(
        got,
        payloads(&sent.samples, "/map"),
        "history first, then live, each once"
    );
}

#[test]
fn two_domains_recorded_at_once_stay_apart() {
    let (first, second) = (Router::new(), Router::new());
    let setup = ZenohRecd::start(&[&first, &second]);
    let recd = &setup.recd;
    let one = first.node(&["--domain", "34", "--count", "20", "--rate", "100"]);
    let two = second.node(&[
        "--domain", "35", "--count", "30", "--rate", "100", "--kind", "blob", "--topic",
        "/chatter", "--size", "64",
    ]);
    recd.rec_json(&[
        "start",
        "--name",
        "d34",
        "--zenoh-domain",
        "34",
        "--no-iceoryx2",
    ]);
    recd.rec_json(&[
        "start",
        "--name",
        "d35",
        "--zenoh-domain",
        "35",
        "--no-iceoryx2",
    ]);
    let (one, two) = (published(one), published(two));
    assert!(wait_written(recd, "d34", "/chatter", 20));
    assert!(wait_written(recd, "d35", "/chatter", 30));
    for (session, sent, domain) in [("d34", &one, "34"), ("d35", &two, "35")] {
        let stopped = recd.rec_json(&["stop", session]);
        let recorded = recorded_messages(&stopped_files(&stopped));
        assert!(recorded
            .iter()
            .all(|m| m.metadata["zenoh.domain"] == domain));
        let got: Vec<Vec<u8>> = recorded.iter().map(|m| m.data.clone()).collect();
        assert_eq!(got, payloads(&sent.samples, "/chatter"), "{session}");
    }
}

#[test]
fn a_zenoh_setting_zenoh_refuses_stops_recd_at_start_up_naming_it() {
    let root = tempfile::tempdir().unwrap();
    let config = root.path().join("recd.toml");
    std::fs::write(
        &config,
        format!(
            "socket = {:?}\ndata_dir = {:?}\n[zenoh]\nconnect = [\"nonsense\"]\n",
            root.path().join("s"),
            root.path().join("d")
        ),
    )
    .unwrap();
    let refused = recd_refused(&config);
    assert!(
        refused.contains("[zenoh]") && refused.contains("nonsense"),
        "{refused}"
    );
}

#[test]
fn topics_changed_while_recording_lose_nothing_they_keep_and_rate_limits_apply() {
    let (kept, added, limited) = (Router::new(), Router::new(), Router::new());
    let setup = ZenohRecd::start(&[&kept, &added, &limited]);
    let recd = &setup.recd;
    let node = |router: &Router, topic: &str| {
        router.node(&[
            "--domain", "36", "--topic", topic, "--count", "300", "--rate", "100",
        ])
    };
    let (kept_node, added_node, limited_node) = (
        node(&kept, "/kept"),
        node(&added, "/added"),
        node(&limited, "/limited"),
    );
    recd.rec_json(&[
        "start",
        "--name",
        "change",
        "--zenoh-domain",
        "36",
        "--no-iceoryx2",
        "--topic",
        "/kept",
        "--topic",
        "/limited",
        "--max-rate",
        "/limited=10",
    ]);
    assert!(wait_until(Duration::from_secs(30), || {
        status_topic(recd, "change", "/kept")
            .is_some_and(|t| t["written"].as_u64().unwrap_or(0) >= 50)
    }));
    recd.rec_json(&[
        "topics-set",
        "change",
        "--add",
        "/added",
        "--remove",
        "/limited",
    ]);
    let kept_sent = published(kept_node);
    let added_sent = published(added_node);
    published(limited_node);
    assert!(
        wait_written(recd, "change", "/kept", 300) && wait_written(recd, "change", "/added", 300),
        "{:?} {:?}",
        status_topic(recd, "change", "/kept"),
        status_topic(recd, "change", "/added")
    );
    let limited_counts = status_topic(recd, "change", "/limited").unwrap();
    let stopped = recd.rec_json(&["stop", "change"]);
    let recorded = recorded_messages(&stopped_files(&stopped));
    let of = |topic: &str| data_of(&recorded, topic);
    assert_eq!(
        of("/kept"),
        payloads(&kept_sent.samples, "/kept"),
        "kept across the change"
    );
    assert_eq!(of("/added"), payloads(&added_sent.samples, "/added"));
    let filtered = limited_counts["filtered"].as_u64().unwrap();
    let written = limited_counts["written"].as_u64().unwrap();
    assert!(filtered > 0 && written > 0, "{limited_counts}");
    assert!(
        written * 5 < filtered,
        "10 Hz of 100 Hz kept: {limited_counts}"
    );
    assert_eq!(of("/limited").len() as u64, written);
}

#[test]
fn a_node_restarted_with_the_same_zenoh_id_is_recorded_whole_and_a_repeat_counted() {
    // The nodes are clients of a router that stays, as recd does: a node that restarts
    // keeps its Zenoh id (fixed in its config), so its publisher keeps its GID and counts
    // from 1 again.
    let router = Router::new();
    let mut stays = router.node(&[
        "--domain",
        "34",
        "--topic",
        "/idle",
        "--count",
        "0",
        "--wait-match",
        "0",
        "--linger",
        "120",
    ]);
    let setup = ZenohRecd::start(&[&router]);
    let recd = &setup.recd;
    recd.rec_json(&["start", "--name", "again", "--zenoh-domain", "34"]);
    let endpoint = router.endpoint();
    let run = |count: &str, extra: &[&str]| {
        let mut args = vec![
            "--connect",
            endpoint.as_str(),
            "--zid",
            "5eed5eed5eed",
            "--domain",
            "34",
            "--count",
            count,
            "--rate",
            "200",
        ];
        args.extend(extra);
        published(zenoh_node(&args))
    };
    // The first run puts sample 10 twice: it arrives twice, is recorded once, counted.
    let first = run("80", &["--repeat", "10"]);
    assert!(
        wait_written(recd, "again", "/chatter", 80),
        "{:?}",
        status_topic(recd, "again", "/chatter")
    );
    let second = run("200", &[]);
    let written = wait_written(recd, "again", "/chatter", 280);
    let counts = status_topic(recd, "again", "/chatter").unwrap();
    assert!(
        written,
        "the restarted node's samples numbered up to the first run's last are new: {counts}"
    );
    let stopped = recd.stop("again");
    let _ = stays.kill();
    let _ = stays.wait();
    let counts = stopped.counts()["/chatter"];
    assert_eq!(
        (counts.received, counts.written, counts.lost),
        (280, 280, 0),
        "{counts:?}"
    );
    assert_eq!(counts.repeated, 1, "sample 10 arrived twice: {counts:?}");
    let mut sent = payloads(&first.samples, "/chatter");
    sent.extend(payloads(&second.samples, "/chatter"));
    let recorded = data_of(&recorded_messages(&stopped.files()), "/chatter");
    assert_eq!(recorded, sent, "every sample of both runs, once, in order");
}

#[test]
fn a_type_no_msg_file_has_is_asked_of_the_publishing_node_and_kept() {
    // What a real rclpy node answers to ~/get_type_description of std_msgs/String.
    let described = Script::spawn("type_description_reply.py", &["--domain", "37"])
        .finish(Duration::from_secs(90));
    let reply = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(reply.path(), described.done["reply_hex"].as_str().unwrap()).unwrap();
    let service_hash = described.done["service_hash"].as_str().unwrap();

    let router = Router::new();
    let setup = ZenohRecd::start_without_definitions(&[&router]);
    let recd = &setup.recd;
    // A topic named: its own subscription, made while the topic waits for its type.
    recd.rec_json(&[
        "start",
        "--name",
        "asked",
        "--zenoh-domain",
        "38",
        "--no-iceoryx2",
        "--topic",
        "/described",
    ]);
    const COUNT: u64 = 40;
    let node = router.node(&[
        "--domain",
        "38",
        "--topic",
        "/described",
        "--count",
        &COUNT.to_string(),
        "--rate",
        "50",
        "--serve-types",
        reply.path().to_str().unwrap(),
        "--service-hash",
        service_hash,
    ]);
    let published = published(node);
    assert!(wait_written(recd, "asked", "/described", COUNT));

    // recd asked as an rmw_zenoh client calls: the request's CDR, a sample's attachment.
    let queries: Vec<&Value> = (published.samples.iter())
        .filter_map(|l| l.get("query"))
        .collect();
    assert!(!queries.is_empty(), "{:?}", published.samples);
    let request = hex(queries[0]["payload_hex"].as_str().unwrap());
    let mut expected = vec![0, 1, 0, 0];
    expected.extend(20u32.to_le_bytes());
    expected.extend(b"std_msgs/msg/String\0");
    expected.extend(72u32.to_le_bytes());
    expected.extend(described.done["type_hash"].as_str().unwrap().as_bytes());
    expected.extend([0, 1]);
    assert_eq!(request, expected);
    assert_eq!(queries[0]["attachment_hex"].as_str().unwrap().len(), 33 * 2);

    let status = recd.rec_json(&["status", "asked"]);
    assert_eq!(status[0]["problems"], Value::Array(vec![]), "{status:#}");
    let stopped = recd.rec_json(&["stop", "asked"]);
    let recorded = recorded_messages(&stopped_files(&stopped));
    let described_topic: Vec<_> = (recorded.iter())
        .filter(|m| m.topic == "/described")
        .collect();
    assert_eq!(
        described_topic.len() as u64,
        COUNT,
        "every sample, the first too"
    );
    assert_eq!(described_topic[0].schema_name, "std_msgs/msg/String");
    assert_eq!(
        String::from_utf8_lossy(&described_topic[0].schema_data),
        wheel_msg("std_msgs/String")
    );
    let kept = setup.root.path().join(format!(
        "state/types/{}.msg",
        described.done["type_hash"].as_str().unwrap()
    ));
    assert_eq!(
        std::fs::read_to_string(&kept).unwrap(),
        wheel_msg("std_msgs/String")
    );
}

#[test]
fn a_node_that_does_not_answer_for_its_type_is_recorded_whole_without_a_definition() {
    let router = Router::new();
    let setup = ZenohRecd::start_without_definitions(&[&router]);
    let recd = &setup.recd;
    recd.rec_json(&[
        "start",
        "--name",
        "mute",
        "--zenoh-domain",
        "39",
        "--no-iceoryx2",
    ]);
    const COUNT: u64 = 40;
    // It serves no ~/get_type_description (a node older than Iron, or one not spinning).
    let node = router.node(&[
        "--domain",
        "39",
        "--count",
        &COUNT.to_string(),
        "--rate",
        "50",
    ]);
    published(node);
    assert!(wait_written(recd, "mute", "/chatter", COUNT));
    let status = recd.rec_json(&["status", "mute"]);
    let problems = status[0]["problems"].to_string();
    assert!(
        problems.contains("/talker did not answer ~/get_type_description within 5 s"),
        "{status:#}"
    );
    let stopped = recd.rec_json(&["stop", "mute"]);
    let recorded = recorded_messages(&stopped_files(&stopped));
    let chatter: Vec<_> = recorded.iter().filter(|m| m.topic == "/chatter").collect();
    assert_eq!(
        chatter.len() as u64,
        COUNT,
        "every sample, those that waited too"
    );
    assert!(chatter[0].schema_data.is_empty());
    let topic = &stopped[0]["topics"][0];
    assert_eq!(topic["dropped"], 0, "{stopped}");
}
