//! The DDS / ROS 2 source as a user runs it: the real recd and rec, a Cyclone DDS
//! publisher (Python `cyclonedds`, a DDS none of us wrote) over real UDP on loopback
//! only, and the files read back by `rosbags`, `mcap-ros2-support` and the `mcap` crate.
//!
//! Each test uses a DDS domain of its own, so tests running at once do not see each
//! other's topics.

use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::path::PathBuf;
use std::time::Duration;

use recd_testkit::{
    bag_files, dds_publish, dds_published, ddsperf_done, ddsperf_publish, read_ros2,
    recorded_messages, ros2_fixtures, stopped_files, Domain, Published, Recd, RecdLoad,
    RecordedMessage, DDSPERF_TOPIC,
};
use serde_json::Value;

/// recd on a root directory and iceoryx2 domain of its own, removed when dropped.
struct DdsRecd {
    recd: Recd,
    root: tempfile::TempDir,
    shm: Domain,
}

impl DdsRecd {
    /// Starts recd with `recording` lines in its `[recording]` table.
    fn start(recording: &str) -> Self {
        let root = tempfile::tempdir().unwrap();
        let shm = Domain::new();
        let recd = Recd::start_configured(root.path(), &shm, "", recording, &[]);
        Self { recd, root, shm }
    }
}

/// recd's `[recording]` lines for DDS on loopback, with the test message definitions.
fn loopback_recording(with_definitions: bool) -> String {
    let mut lines = "dds_interfaces = [\"127.0.0.1\"]\n".to_string();
    if with_definitions {
        lines += &format!("dds_message_dirs = [{:?}]\n", ros2_fixtures());
    }
    lines
}

/// `count` messages at `rate` Hz on one small iceoryx2 topic, `<prefix>small/0`, once a
/// subscriber is there.
fn small_shm_load(domain: &Domain, prefix: &str, rate: u32, count: u32) -> std::process::Child {
    domain.load(
        &RecdLoad::new(prefix)
            .cameras(0)
            .small_topics(1)
            .small_rate(rate)
            .count(count.into())
            .duration(Duration::from_secs(30))
            .wait_subscribers(1),
    )
}

fn of_topic<'a>(messages: &'a [RecordedMessage], topic: &str) -> Vec<&'a RecordedMessage> {
    messages.iter().filter(|m| m.topic == topic).collect()
}

/// What one Python reader decoded, in file order.
fn decoded_by<'a>(decoded: &'a [Value], reader: &str, topic: &str) -> Vec<&'a Value> {
    decoded
        .iter()
        .filter(|m| m["reader"] == reader && m["topic"] == topic)
        .collect()
}

fn start_session(recd: &Recd, name: &str, domain: u16, topics: &[&str]) {
    let domain = domain.to_string();
    let mut args = vec!["start", "--name", name, "--dds-domain", &domain];
    for topic in topics {
        args.extend(["--topic", topic]);
    }
    recd.rec_json(&args);
}

fn stop_session(recd: &Recd, name: &str) -> Value {
    recd.rec_json(&["stop", name])
}

fn publish(args: &[&str]) -> Published {
    let published = dds_published(dds_publish(args), Duration::from_secs(90));
    assert_eq!(published.done["matched"], true, "{}", published.done);
    published
}

fn status_topic(recd: &Recd, session: &str, topic: &str) -> Option<Value> {
    recd.topic_status(session, topic)
}

fn wait_topic_written(recd: &Recd, session: &str, topic: &str, count: u64) -> bool {
    recd.wait_topic_written(session, topic, count, Duration::from_secs(20))
}

#[test]
fn ros2_strings_are_recorded_byte_exact_and_read_back_by_rosbags_and_mcap_ros2() {
    let setup = DdsRecd::start(&loopback_recording(true));
    let recd = &setup.recd;
    start_session(recd, "chatter", 11, &["/chatter"]);

    let published = publish(&[
        "--domain",
        "11",
        "--topic",
        "rt/chatter",
        "--kind",
        "string",
        "--count",
        "50",
        "--rate",
        "100",
        "--type-hash",
    ]);
    assert_eq!(published.samples.len(), 50);
    assert!(
        wait_topic_written(recd, "chatter", "/chatter", 50),
        "not all 50 written: {:?}",
        status_topic(recd, "chatter", "/chatter")
    );
    let stopped = stop_session(recd, "chatter");
    let files = stopped_files(&stopped);

    let recorded = recorded_messages(&files);
    let chatter = of_topic(&recorded, "/chatter");
    assert_eq!(chatter.len(), 50);
    let first = chatter[0];
    assert_eq!(first.message_encoding, "cdr");
    assert_eq!(first.schema_name, "std_msgs/msg/String");
    assert_eq!(first.schema_encoding, "ros2msg");
    let definition = std::fs::read(ros2_fixtures().join("share/std_msgs/msg/String.msg")).unwrap();
    assert_eq!(first.schema_data, definition);
    assert!(
        first.metadata["topic_type_hash"].starts_with("RIHS01_"),
        "{:?}",
        first.metadata
    );
    let qos = &first.metadata["offered_qos_profiles"];
    assert!(qos.contains("reliability: reliable"), "{qos}");
    assert!(qos.contains("durability: volatile"), "{qos}");
    assert!(chatter.iter().all(|m| m.data[..4] == [0, 1, 0, 0]));

    let decoded = read_ros2(&files[0]);
    for reader in ["rosbags", "mcap_ros2"] {
        let messages = decoded_by(&decoded, reader, "/chatter");
        assert_eq!(messages.len(), 50, "{reader} read {}", messages.len());
        for (message, sample) in messages.iter().zip(&published.samples) {
            assert_eq!(message["data"], sample["data"], "{reader}");
            assert_eq!(message["cdr_sha256"], sample["sha256"], "{reader}");
            assert_eq!(message["type"], "std_msgs/msg/String", "{reader}");
        }
    }
}

#[test]
fn fragmented_multi_megabyte_samples_are_recorded_intact() {
    let setup = DdsRecd::start(&loopback_recording(true));
    let recd = &setup.recd;
    start_session(recd, "big", 12, &[]);

    let published = publish(&[
        "--domain", "12", "--topic", "rt/blob", "--kind", "blob", "--size", "2500000", "--count",
        "20", "--rate", "10",
    ]);
    assert!(
        wait_topic_written(recd, "big", "/blob", 20),
        "not all 20 written: {:?}",
        status_topic(recd, "big", "/blob")
    );
    let counts = status_topic(recd, "big", "/blob").unwrap();
    assert_eq!(counts["lost"], 0);
    assert_eq!(counts["dropped"], 0);
    let files = stopped_files(&stop_session(recd, "big"));
    let decoded = read_ros2(&files[0]);
    for reader in ["rosbags", "mcap_ros2"] {
        let messages = decoded_by(&decoded, reader, "/blob");
        assert_eq!(messages.len(), 20, "{reader}");
        for (message, sample) in messages.iter().zip(&published.samples) {
            assert!(sample["bytes"].as_u64().unwrap() > 2_000_000);
            assert_eq!(message["cdr_sha256"], sample["sha256"], "{reader}");
            assert_eq!(message["data"]["sha256"], sample["data_sha256"], "{reader}");
            assert_eq!(message["data"]["seq"], sample["i"], "{reader}");
        }
    }
}

#[test]
fn xcdr2_writers_late_topics_and_leaving_writers_are_recorded() {
    // No message definitions: the topic is recorded with an empty schema and `rec info`
    // says so.
    let setup = DdsRecd::start(&loopback_recording(false));
    let recd = &setup.recd;
    start_session(recd, "late", 13, &[]);
    std::thread::sleep(Duration::from_millis(500));
    assert!(status_topic(recd, "late", "/late").is_none());

    // A topic that appears after the start, written with XCDR2; its writer then leaves.
    let first = publish(&[
        "--domain", "13", "--topic", "rt/late", "--kind", "string", "--count", "20", "--rate",
        "50", "--xcdr2",
    ]);
    assert!(wait_topic_written(recd, "late", "/late", 20));
    // Another writer comes to the same topic after the first left.
    let second = publish(&[
        "--domain", "13", "--topic", "rt/late", "--kind", "string", "--count", "10", "--rate", "50",
    ]);
    assert!(wait_topic_written(recd, "late", "/late", 30));
    let status = recd.rec_json(&["status", "late"]);
    let problems = status[0]["problems"].to_string();
    assert!(problems.contains("message definition"), "{status}");

    let files = stopped_files(&stop_session(recd, "late"));
    let recorded = recorded_messages(&files);
    let late = of_topic(&recorded, "/late");
    assert_eq!(late.len(), 30);
    let expected: Vec<&Value> = first.samples.iter().chain(&second.samples).collect();
    for (message, sample) in late.iter().zip(&expected) {
        assert_eq!(message.data.len() as u64, sample["bytes"].as_u64().unwrap());
    }
    assert!(
        late[..20].iter().all(|m| m.data[..2] == [0, 7]),
        "XCDR2 header"
    );
    assert!(
        late[20..].iter().all(|m| m.data[..2] == [0, 1]),
        "XCDR1 header"
    );
    assert!(late[0].schema_data.is_empty());

    let info = recd.rec(&["info", files[0].to_str().unwrap()]);
    let info = String::from_utf8_lossy(&info.stdout);
    assert!(
        info.contains("without message definitions") && info.contains("/late"),
        "{info}"
    );
}

#[test]
fn a_session_of_shared_memory_and_dds_writes_a_ros2_bag_beside_its_iceoryx2_files() {
    let setup = DdsRecd::start(&loopback_recording(true));
    let recd = &setup.recd;
    let prefix = format!("mixed{}/", std::process::id());
    let selection = [format!("{prefix}*"), "/chatter".to_string()];
    recd.rec_json(&[
        "start",
        "--name",
        "mixed",
        "--dds-domain",
        "14",
        "--max-duration",
        "1s",
        "--topic",
        &selection[0],
        "--topic",
        &selection[1],
    ]);

    let load = small_shm_load(&setup.shm, &prefix, 20, 60);
    let published = publish(&[
        "--domain",
        "14",
        "--topic",
        "rt/chatter",
        "--kind",
        "string",
        "--count",
        "60",
        "--rate",
        "20",
    ]);
    let report = recd_testkit::finish_load(load);
    assert_eq!(report.topics.iter().map(|t| t.sent).sum::<u64>(), 60);
    assert!(recd.wait_written("mixed", 120));
    let files = stopped_files(&stop_session(recd, "mixed"));

    // A file per source family per split: DDS files hold the ROS 2 topic alone.
    let name = |f: &PathBuf| f.file_name().unwrap().to_string_lossy().into_owned();
    let (dds, shm): (Vec<PathBuf>, Vec<PathBuf>) = files
        .iter()
        .cloned()
        .partition(|f| name(f).contains("_dds_"));
    assert!(
        shm.iter().all(|f| name(f).contains("_iceoryx2_")),
        "{files:?}"
    );
    assert!(
        dds.len() >= 2 && shm.len() >= 2,
        "split by duration: {files:?}"
    );
    let shm_topic = format!("{prefix}small/0");
    let from_dds = recorded_messages(&dds);
    assert_eq!(from_dds.len(), 60, "nothing but /chatter in the DDS files");
    assert_eq!(of_topic(&from_dds, "/chatter").len(), 60);
    let from_shm = recorded_messages(&shm);
    assert_eq!(
        from_shm.len(),
        60,
        "nothing but {shm_topic} in the iceoryx2 files"
    );
    assert_eq!(of_topic(&from_shm, &shm_topic).len(), 60);

    // The directory is a ROS 2 bag of the DDS files: rosbags reads every message,
    // byte for byte, in order.
    let bag = setup.root.path().join("data/mixed");
    let metadata = std::fs::read_to_string(bag.join("metadata.yaml")).unwrap();
    assert!(!metadata.contains("_iceoryx2_"), "{metadata}");
    let from_bag = read_ros2(&bag);
    let chatter = decoded_by(&from_bag, "rosbags", "/chatter");
    assert_eq!(chatter.len(), 60);
    for (message, sample) in chatter.iter().zip(&published.samples) {
        assert_eq!(message["cdr_sha256"], sample["sha256"]);
    }
}

#[test]
fn definitions_missing_at_recording_are_filled_in_by_reindex_from_msg_files() {
    // Recorded without .msg files, as on an ECU without ROS installed.
    let setup = DdsRecd::start(&loopback_recording(false));
    let recd = &setup.recd;
    start_session(recd, "bare", 23, &["/chatter"]);
    let published = publish(&[
        "--domain",
        "23",
        "--topic",
        "rt/chatter",
        "--kind",
        "string",
        "--count",
        "30",
        "--rate",
        "100",
    ]);
    assert!(wait_topic_written(recd, "bare", "/chatter", 30));
    let files = stopped_files(&stop_session(recd, "bare"));
    assert!(recorded_messages(&files)[0].schema_data.is_empty());

    // A file reindexed elsewhere finds the definition through AMENT_PREFIX_PATH.
    let copy = setup.root.path().join("copy.mcap");
    let reindexed = std::process::Command::new(recd_testkit::binary("rec"))
        .env("AMENT_PREFIX_PATH", ros2_fixtures())
        .args(["reindex", "--json", "-o"])
        .arg(&copy)
        .arg(&files[0])
        .output()
        .unwrap();
    assert!(reindexed.status.success(), "{reindexed:?}");
    let report: Value = serde_json::from_slice(&reindexed.stdout).unwrap();
    assert_eq!(
        report["definitions_added"],
        serde_json::json!(["std_msgs/msg/String"])
    );
    assert!(!recorded_messages(&[copy])[0].schema_data.is_empty());

    // The session, in place, with --msg-path: rosbags then decodes every message through
    // the directory, and rec info no longer lists the topic as undefined.
    let fixtures = ros2_fixtures();
    let reindexed = recd.rec(&["reindex", "bare", "--msg-path", fixtures.to_str().unwrap()]);
    assert!(reindexed.status.success(), "{reindexed:?}");
    let text = String::from_utf8_lossy(&reindexed.stdout);
    assert!(
        text.contains("message definitions added: std_msgs/msg/String"),
        "{text}"
    );
    let recorded = recorded_messages(&files);
    let definition = String::from_utf8_lossy(&recorded[0].schema_data).into_owned();
    assert!(definition.contains("\nstring data"), "{definition}");
    let bag = files[0].parent().unwrap();
    let decoded = read_ros2(bag);
    let chatter = decoded_by(&decoded, "rosbags", "/chatter");
    assert_eq!(chatter.len(), 30);
    for (message, sample) in chatter.iter().zip(&published.samples) {
        assert_eq!(message["data"], sample["data"]);
    }
    let info = recd.rec(&["info", "bare"]);
    let info = String::from_utf8_lossy(&info.stdout);
    assert!(!info.contains("without message definitions"), "{info}");
}

#[test]
fn rec_topics_lists_both_sources_with_type_publishers_and_rate_and_writes_nothing() {
    let setup = DdsRecd::start(&loopback_recording(true));
    let recd = &setup.recd;
    let prefix = format!("offer{}/", std::process::id());
    let load = small_shm_load(&setup.shm, &prefix, 100, 400);
    let publisher = dds_publish(&[
        "--domain",
        "24",
        "--topic",
        "rt/chatter",
        "--kind",
        "string",
        "--count",
        "200",
        "--rate",
        "50",
    ]);
    let found = recd.rec_json(&[
        "topics",
        "--dds-domain",
        "24",
        "--discovery",
        "2s",
        "--window",
        "1s",
    ]);
    recd_testkit::finish_load(load);
    dds_published(publisher, Duration::from_secs(90));

    let topic = |name: &str| {
        found["topics"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["name"] == name)
            .cloned()
            .unwrap_or_else(|| panic!("{name} not in {found}"))
    };
    let chatter = topic("/chatter");
    assert_eq!(chatter["type_name"], "std_msgs/msg/String");
    assert_eq!(chatter["service"], "dds:rt/chatter");
    let small = topic(&format!("{prefix}small/0"));
    for listed in [&chatter, &small] {
        assert_eq!(listed["publishers"], 1, "{listed}");
        assert!(listed["messages_per_s"].as_f64().unwrap() > 0.0, "{listed}");
        assert!(listed["bytes_per_s"].as_f64().unwrap() > 0.0, "{listed}");
    }
    // Nothing was recorded.
    assert_eq!(recd.rec_json(&["list"]), serde_json::json!([]));
    let data = setup.root.path().join("data");
    assert!(!data.exists() || std::fs::read_dir(&data).unwrap().next().is_none());
}

/// Session `name` records DDS domain `domain` only, with `files` (how it splits and keeps
/// its files), while `count` 1 MB blobs are published on `/blob` at `rate` Hz; returns
/// once all are written.
fn record_blobs(
    recd: &Recd,
    (name, domain): (&str, &str),
    (count, rate): (u64, &str),
    files: &[&str],
) -> Published {
    let start = [
        "start",
        "--name",
        name,
        "--dds-domain",
        domain,
        "--no-iceoryx2",
    ];
    recd.rec_json(&[&start[..], files].concat());
    let published = publish(&[
        "--domain",
        domain,
        "--topic",
        "rt/blob",
        "--kind",
        "blob",
        "--size",
        "1000000",
        "--count",
        &count.to_string(),
        "--rate",
        rate,
    ]);
    assert!(
        wait_topic_written(recd, name, "/blob", count),
        "not all {count} written: {:?}",
        status_topic(recd, name, "/blob")
    );
    published
}

#[test]
fn a_dds_session_directory_is_a_ros2_bag_across_splits_and_after_reindex() {
    let setup = DdsRecd::start(&loopback_recording(true));
    let recd = &setup.recd;
    let published = record_blobs(
        recd,
        ("bag", "22"),
        (24, "20"),
        &["--max-file-size", "4MiB"],
    );
    let files = stopped_files(&stop_session(recd, "bag"));
    assert!(files.len() >= 4, "split into {} files", files.len());
    let bag = files[0].parent().unwrap().to_path_buf();
    let metadata = std::fs::read_to_string(bag.join("metadata.yaml")).unwrap();
    assert!(metadata.contains("storage_identifier: mcap"), "{metadata}");
    for file in &files {
        let name = file.file_name().unwrap().to_str().unwrap();
        assert!(
            metadata.contains(&format!("- \"{name}\"")),
            "{name} not in {metadata}"
        );
    }

    // rosbags opens the directory through metadata.yaml and reads every message in order,
    // byte for byte; again after the session was reindexed.
    for pass in ["recorded", "reindexed"] {
        let decoded = read_ros2(&bag);
        let messages = decoded_by(&decoded, "rosbags", "/blob");
        assert_eq!(messages.len(), 24, "{pass}");
        for (message, sample) in messages.iter().zip(&published.samples) {
            assert_eq!(message["cdr_sha256"], sample["sha256"], "{pass}");
            assert_eq!(message["data"]["seq"], sample["i"], "{pass}");
        }
        if pass == "recorded" {
            std::fs::remove_file(bag.join("metadata.yaml")).unwrap();
            let reindexed = recd.rec(&["reindex", "bag"]);
            assert!(reindexed.status.success(), "{reindexed:?}");
        }
    }
}

#[test]
fn a_ring_of_dds_files_stays_a_ros2_bag_of_the_files_left() {
    let setup = DdsRecd::start(&loopback_recording(true));
    let recd = &setup.recd;
    let bounds = ["--max-file-size", "1MiB", "--max-files", "3"];
    let published = record_blobs(recd, ("ring", "23"), (16, "10"), &bounds);
    let bag = setup.root.path().join("data/ring");
    let on_disk = || {
        let mut names: Vec<String> = std::fs::read_dir(&bag)
            .unwrap()
            .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|name| name.ends_with(".mcap"))
            .collect();
        names.sort();
        names
    };
    // Retention keeps the ring at each load sample, about once a second.
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while on_disk().len() > 3 && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(100));
    }
    let files = stopped_files(&stop_session(recd, "ring"));
    let kept = on_disk();
    assert!(
        kept.len() <= 3 && files.len() > kept.len(),
        "the ring kept {kept:?} of {files:?}"
    );

    // metadata.yaml lists the files left, and only those: rosbags opens the directory
    // and reads the newest samples, byte for byte, in order.
    assert_eq!(bag_files(&bag), kept);
    let decoded = read_ros2(&bag);
    let messages = decoded_by(&decoded, "rosbags", "/blob");
    assert!(
        !messages.is_empty() && messages.len() < 16,
        "{}",
        messages.len()
    );
    let newest = &published.samples[16 - messages.len()..];
    for (message, sample) in messages.iter().zip(newest) {
        assert_eq!(message["cdr_sha256"], sample["sha256"]);
        assert_eq!(message["data"]["seq"], sample["i"]);
    }
}

#[test]
fn an_out_of_range_domain_is_refused_before_anything_is_recorded() {
    let setup = DdsRecd::start(&loopback_recording(false));
    let recd = &setup.recd;
    // rec refuses it itself...
    let output = recd.rec(&["start", "--name", "bad", "--dds-domain", "300"]);
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("300"), "{stderr}");
    // ...and recd too, when another client asks.
    let mut stream = UnixStream::connect(&recd.socket).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    stream
        .write_all(b"{\"version\":1,\"request\":\"start\",\"name\":\"bad\",\"dds_domain\":300}\n")
        .unwrap();
    let mut reply = String::new();
    BufReader::new(stream).read_line(&mut reply).unwrap();
    let reply: Value = serde_json::from_str(&reply).unwrap();
    assert_eq!(reply["response"], "error", "{reply}");
    assert!(reply.to_string().contains("DDS domain 300"), "{reply}");
    assert!(!setup.root.path().join("data/bad").exists());
    // A session with no source at all is refused too.
    let output = recd.rec(&["start", "--name", "none", "--no-iceoryx2"]);
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("nothing to record"), "{stderr}");
    // recd still serves.
    assert!(recd.rec(&["list"]).status.success());
}

#[test]
fn a_best_effort_writer_joining_a_reliable_topic_is_recorded_and_gaps_are_counted() {
    let setup = DdsRecd::start(&loopback_recording(true));
    let recd = &setup.recd;
    start_session(recd, "mixedqos", 15, &["/chatter"]);

    // A reliable writer first: the reader is made reliable.
    let reliable = dds_publish(&[
        "--domain",
        "15",
        "--topic",
        "rt/chatter",
        "--kind",
        "string",
        "--count",
        "40",
        "--rate",
        "20",
    ]);
    assert!(recd_testkit::wait_until(Duration::from_secs(20), || {
        status_topic(recd, "mixedqos", "/chatter").is_some_and(|t| t["written"].as_u64() > Some(5))
    }));
    // A best-effort writer does not match a reliable reader: recd makes the reader anew.
    let best_effort = publish(&[
        "--domain",
        "15",
        "--topic",
        "rt/chatter",
        "--kind",
        "string",
        "--count",
        "10",
        "--rate",
        "20",
        "--best-effort",
    ]);
    let reliable = dds_published(reliable, Duration::from_secs(90));
    assert_eq!(reliable.samples.len() + best_effort.samples.len(), 50);
    // Every sample is either written or counted as lost (the reliable writer's samples
    // sent while the new reader was not matched yet).
    assert!(recd_testkit::wait_until(Duration::from_secs(20), || {
        status_topic(recd, "mixedqos", "/chatter")
            .is_some_and(|t| t["written"].as_u64().unwrap() + t["lost"].as_u64().unwrap() >= 50)
    }));
    let counts = status_topic(recd, "mixedqos", "/chatter").unwrap();
    // The replaced reader's complaint about the newcomer is not the topic's problem.
    let status = recd.rec_json(&["status", "mixedqos"]);
    assert!(
        !status[0]["problems"].to_string().contains("does not match"),
        "{status}"
    );
    let files = stopped_files(&stop_session(recd, "mixedqos"));
    let recorded = recorded_messages(&files);
    let chatter = of_topic(&recorded, "/chatter");
    assert_eq!(chatter.len() as u64, counts["written"].as_u64().unwrap());
    assert!(chatter.len() >= 10 + 5, "{counts}");
    let qos = &chatter[0].metadata["offered_qos_profiles"];
    assert!(qos.contains("reliability: reliable"), "{qos}");
}

#[test]
fn plain_keyed_dds_topics_keep_their_dds_names_and_internal_ros_topics_are_skipped() {
    let setup = DdsRecd::start(&loopback_recording(true));
    let recd = &setup.recd;
    start_session(recd, "plain", 16, &[]);

    // A keyed writer is only matched by a keyed reader.
    let keyed = publish(&[
        "--domain", "16", "--kind", "keyed", "--count", "30", "--rate", "100",
    ]);
    assert_eq!(keyed.samples.len(), 30);
    // ROS's parameter events are not recorded unless selected: no reader ever matches.
    let internal = dds_published_unmatched(&[
        "--domain",
        "16",
        "--topic",
        "rt/parameter_events",
        "--kind",
        "string",
        "--count",
        "1",
        "--wait-match",
        "3",
    ]);
    assert!(internal.contains("no reader matched"), "{internal}");
    assert!(wait_topic_written(recd, "plain", "Keyed", 30));

    let status = recd.rec_json(&["status", "plain"]);
    let names: Vec<&str> = status[0]["topics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["Keyed"], "{status}");
    let files = stopped_files(&stop_session(recd, "plain"));
    let recorded = recorded_messages(&files);
    let keyed_messages = of_topic(&recorded, "Keyed");
    assert_eq!(keyed_messages.len(), 30);
    assert_eq!(keyed_messages[0].schema_name, "recd_test::Keyed");
    assert_eq!(keyed_messages[0].schema_encoding, "omgidl");
    for (message, sample) in keyed_messages.iter().zip(&keyed.samples) {
        assert_eq!(message.data.len() as u64, sample["bytes"].as_u64().unwrap());
        let text = String::from_utf8_lossy(&message.data);
        assert!(text.contains(sample["data"].as_str().unwrap()), "{text}");
    }
}

/// Runs a publisher that must find no reader; returns its diagnostics.
fn dds_published_unmatched(args: &[&str]) -> String {
    let output = recd_testkit::wait_bounded(dds_publish(args), Duration::from_secs(60));
    assert_eq!(output.status.code(), Some(3), "expected no reader to match");
    String::from_utf8_lossy(&output.stderr).into_owned()
}

#[test]
fn transient_local_history_from_before_the_start_is_recorded() {
    let setup = DdsRecd::start(&loopback_recording(true));
    let recd = &setup.recd;
    // The writer publishes before any recorder exists and stays for late joiners.
    let early = dds_publish(&[
        "--domain",
        "17",
        "--topic",
        "rt/map",
        "--kind",
        "string",
        "--count",
        "5",
        "--rate",
        "0",
        "--transient-local",
        "--wait-match",
        "0",
        "--linger",
        "8",
    ]);
    std::thread::sleep(Duration::from_millis(1500));
    start_session(recd, "latched", 17, &["/map"]);
    assert!(
        wait_topic_written(recd, "latched", "/map", 5),
        "{:?}",
        status_topic(recd, "latched", "/map")
    );
    let early = dds_published(early, Duration::from_secs(60));
    let files = stopped_files(&stop_session(recd, "latched"));
    let recorded = recorded_messages(&files);
    let map = of_topic(&recorded, "/map");
    assert_eq!(map.len(), 5);
    let qos = &map[0].metadata["offered_qos_profiles"];
    assert!(qos.contains("durability: transient_local"), "{qos}");
    let decoded = read_ros2(&files[0]);
    let texts: Vec<&Value> = decoded_by(&decoded, "rosbags", "/map")
        .iter()
        .map(|m| &m["data"])
        .collect();
    let sent: Vec<&Value> = early.samples.iter().map(|s| &s["data"]).collect();
    assert_eq!(texts, sent);
}

#[test]
fn a_burst_of_small_samples_is_recorded_without_loss_by_the_default_history() {
    // The default history holds the burst in bytes: however late the receive thread
    // runs (the tests share two cores), a reliable writer's samples wait in it.
    let recording = loopback_recording(true);
    let setup = DdsRecd::start(&recording);
    let recd = &setup.recd;
    start_session(recd, "burst", 18, &[]);
    // As fast as the publisher can write: the reader's history and the socket buffer
    // absorb it.
    let burst = publish(&[
        "--domain", "18", "--topic", "rt/burst", "--kind", "string", "--count", "3000", "--rate",
        "0",
    ]);
    assert_eq!(burst.samples.len(), 3000);
    let settled = wait_topic_written(recd, "burst", "/burst", 3000);
    let counts = status_topic(recd, "burst", "/burst").unwrap();
    assert!(settled, "{counts}");
    assert_eq!(counts["lost"], 0, "{counts}");
    assert_eq!(counts["dropped"], 0, "{counts}");
}

#[test]
fn a_fragmented_dds_load_leaves_the_log_quiet() {
    // 64 KiB samples at 1 kHz come in fragments: rustdds logs an INFO line per
    // HEARTBEAT_FRAG, which recd's default filter must keep out of the journal.
    let setup = DdsRecd::start(&loopback_recording(false));
    let recd = &setup.recd;
    start_session(recd, "quiet", 21, &[]);
    let before = recd.log().lines().count();
    ddsperf_done(
        ddsperf_publish(21, 5, "1kHz", "64k"),
        Duration::from_secs(30),
    );
    let counts = status_topic(recd, "quiet", DDSPERF_TOPIC).expect("the topic is recorded");
    assert!(counts["written"].as_u64().unwrap() > 1000, "{counts}");
    stop_session(recd, "quiet");
    let log = recd.log();
    let lines = log.lines().count() - before;
    assert!(lines < 100, "{lines} log lines:\n{log}");
}
