//! Recording only what matters, as a user asks for it with `rec start`: type filters,
//! rate limits and downsampling over iceoryx2 (`recd-load`) and DDS (Python Cyclone DDS
//! publishers), with every filtered sample counted where the other counts are.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use recd_testkit::{
    dds_publish, dds_published, finish_load, stopped_files, Domain, Recd, RecdLoad,
};
use recd_workload::verify::check_files;
use serde_json::Value;

const MS: u64 = 1_000_000;
/// Samples the load sends on each topic of the rate-limit test.
const SENT: u64 = 180;
/// How many of a topic's first samples may not reach recd: those sent before iceoryx2
/// connected the publisher to recd's subscriber (the load waits 50 ms for that, which a
/// busy machine can outlast).
const MISSED_AT_START: u64 = 10;

/// A stop report's topics by name.
fn topics_of(stopped: &Value) -> BTreeMap<String, Value> {
    stopped["topics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| (t["name"].as_str().unwrap().to_string(), t.clone()))
        .collect()
}

fn count(topic: &Value, key: &str) -> u64 {
    topic[key]
        .as_u64()
        .unwrap_or_else(|| panic!("{key} in {topic}"))
}

/// received = written + dropped + filtered + evicted + paused, nothing pending at stop.
fn assert_balanced(name: &str, topic: &Value) {
    let accounted = ["written", "dropped", "filtered", "evicted", "paused"]
        .iter()
        .map(|key| count(topic, key))
        .sum::<u64>();
    assert_eq!(count(topic, "received"), accounted, "{name}: {topic}");
}

/// The `recorder` Metadata records of the files.
fn recorder_metadata(files: &[impl AsRef<Path>]) -> Vec<BTreeMap<String, String>> {
    let mut records = Vec::new();
    for file in files {
        let bytes = std::fs::read(file).unwrap();
        for record in mcap::read::LinearReader::new(&bytes).unwrap() {
            if let mcap::records::Record::Metadata(metadata) = record.unwrap() {
                if recd_storage::iceoryx2::is_recorder_metadata(&metadata.name) {
                    records.push(metadata.metadata);
                }
            }
        }
    }
    records
}

/// The `filtered` counts of the files' `recorder` metadata, summed per topic.
fn filtered_in_metadata(records: &[BTreeMap<String, String>]) -> BTreeMap<String, u64> {
    let mut filtered = BTreeMap::new();
    for record in records {
        let topics: BTreeMap<String, Value> = serde_json::from_str(&record["topics"]).unwrap();
        for (name, counts) in topics {
            *filtered.entry(name).or_default() += count(&counts, "filtered");
        }
    }
    filtered
}

#[test]
fn a_rate_limit_keeps_one_frame_per_slot_and_downsampling_exactly_every_nth_all_counted() {
    let domain = Domain::new();
    let root = tempfile::tempdir().unwrap();
    let recd = Recd::start(root.path(), &domain);
    recd.rec_json(&[
        "start",
        "--name",
        "thin",
        "--topic",
        "flt/*",
        "--max-rate",
        "flt/camera/*=5",
        "--downsample",
        "flt/small/*=3",
    ]);
    // Sessions that a type filter leaves without these topics: iceoryx2's payload type
    // of recd-load's services is `u8`.
    recd.rec_json(&[
        "start",
        "--name",
        "no-bytes",
        "--topic",
        "flt/*",
        "--exclude-topic-type",
        "u8",
    ]);
    recd.rec_json(&[
        "start",
        "--name",
        "other-type",
        "--topic",
        "flt/*",
        "--topic-type",
        "sensor_msgs/msg/*",
    ]);
    // 6 s of a 30 fps camera, and 180 samples at 60 Hz on a small topic.
    let load = domain.load(
        &RecdLoad::new("flt/")
            .cameras(1)
            .frame_size(100_000)
            .fps(30)
            .small_topics(1)
            .small_rate(60)
            .buffer(16)
            .count(SENT)
            .duration(Duration::from_secs(60))
            .wait_subscribers(1),
    );
    // What a filter set would take, while the load runs.
    let listed = |args: &[&str]| -> Vec<String> {
        let mut command = vec!["topics", "--discovery", "500ms"];
        command.extend_from_slice(args);
        let found = recd.rec_json(&command);
        found["topics"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_string())
            .filter(|name| name.starts_with("flt/"))
            .collect()
    };
    let mut taken = listed(&["--topic-type", "u8"]);
    taken.sort();
    assert_eq!(taken, ["flt/camera/0", "flt/small/0"]);
    assert!(listed(&["--exclude-topic-type", "u*"]).is_empty());
    assert!(listed(&["--topic-type", "sensor_msgs/msg/*"]).is_empty());
    let sent = finish_load(load);
    assert!(sent.topics.iter().all(|t| t.sent == SENT), "{sent:?}");
    std::thread::sleep(Duration::from_millis(300));

    let stopped = recd.rec_json(&["stop", "thin"]);
    let topics = topics_of(&stopped[0]);
    let camera = &topics["flt/camera/0"];
    let small = &topics["flt/small/0"];
    for (name, topic) in &topics {
        assert_balanced(name, topic);
    }
    assert_eq!(count(camera, "lost"), 0, "{camera}");
    assert_eq!(count(camera, "dropped"), 0, "{camera}");
    let kept = count(camera, "written");
    assert!((29..=31).contains(&kept), "6 s at 5 Hz: {camera}");
    let filtered = count(camera, "filtered");
    assert!(
        (SENT - MISSED_AT_START..=SENT).contains(&(kept + filtered)),
        "{camera}"
    );

    let files = stopped_files(&stopped[0]);
    let checks = check_files(&files).unwrap();
    let frames = &checks["flt/camera/0"];
    assert!(frames.bad.is_empty(), "{:?}", frames.bad);
    assert_eq!(frames.messages, kept);
    let closest = frames
        .log_times_ns
        .windows(2)
        .map(|w| w[1] - w[0])
        .min()
        .unwrap();
    println!(
        "30 fps limited to 5 Hz over 6 s: {kept} kept, {filtered} filtered, closest {:.1} ms apart",
        closest as f64 / MS as f64
    );
    assert!(closest >= 190 * MS, "kept frames {} ms apart", closest / MS);

    // Downsampling keeps the 1st, 4th, 7th … sample received, whatever their timing. Only
    // the first samples may not have been received (sent before iceoryx2 connected the
    // publisher to recd's new subscriber: a start-up race of iceoryx2's, not a filter's).
    assert_eq!(count(small, "lost"), 0, "{small}");
    assert_eq!(count(small, "dropped"), 0, "{small}");
    let received = count(small, "received");
    assert!(
        (SENT - MISSED_AT_START..=SENT).contains(&received),
        "{small}"
    );
    let first = SENT - received;
    assert_eq!(
        checks["flt/small/0"].sequences,
        (first..SENT).step_by(3).collect::<Vec<u64>>()
    );
    let small_filtered = received - received.div_ceil(3);
    assert_eq!(count(small, "filtered"), small_filtered);

    // The same counts in the files' metadata and in the catalog, and the rules in the
    // configuration the files keep.
    let records = recorder_metadata(&files);
    let in_files = filtered_in_metadata(&records);
    assert_eq!(in_files["flt/camera/0"], filtered);
    assert_eq!(in_files["flt/small/0"], small_filtered);
    let config: Value = serde_json::from_str(&records[0]["config"]).unwrap();
    let rules = &config["throttles"];
    assert_eq!(rules[0]["topic"], "flt/camera/*", "{config}");
    assert_eq!(rules[0]["max_rate"], 5.0);
    assert_eq!(rules[1]["downsample"], 3);
    let catalog = topics_of(&recd.listed("thin"));
    assert_eq!(count(&catalog["flt/camera/0"], "filtered"), filtered);
    assert_eq!(count(&catalog["flt/small/0"], "filtered"), small_filtered);
    // rec stop says so in words.
    let text = String::from_utf8_lossy(&recd.rec(&["status", "thin"]).stdout).to_string();
    assert!(text.contains("filtered"), "{text}");

    for name in ["no-bytes", "other-type"] {
        let stopped = recd.rec_json(&["stop", name]);
        assert!(
            topics_of(&stopped[0]).is_empty(),
            "{name} records no u8 topic: {stopped}"
        );
    }
}

#[test]
fn rules_that_do_not_parse_are_refused_before_recd_is_asked_and_by_recd() {
    let domain = Domain::new();
    let root = tempfile::tempdir().unwrap();
    let recd = Recd::start(root.path(), &domain);
    for (flag, rule, says) in [
        ("--max-rate", "camera/*", "is not GLOB=VALUE"),
        ("--max-rate", "camera/*=0", "not a positive number"),
        ("--max-rate", "camera/*=fast", "not a positive number"),
        ("--downsample", "/points=0", "whole number of at least 1"),
        ("--downsample", "a[=2", "invalid topic pattern"),
    ] {
        let output = recd.rec(&["start", flag, rule]);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{flag} {rule}: {stderr}");
        assert!(stderr.contains(says), "{flag} {rule}: {stderr}");
    }
    let bad_type = recd.rec(&["start", "--topic-type", "a["]);
    let stderr = String::from_utf8_lossy(&bad_type.stderr);
    assert_eq!(bad_type.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("a["), "{stderr}");
    assert!(recd.rec_json(&["status"]).as_array().unwrap().is_empty());
}

#[test]
fn recd_toml_rules_apply_after_the_sessions_own_and_a_bad_rule_stops_start_up() {
    let domain = Domain::new();
    let root = tempfile::tempdir().unwrap();
    let recd = Recd::start_configured(
        root.path(),
        &domain,
        "[[topic]]\ntopic = \"cfg/small/*\"\ndownsample = 2\n\n[[topic]]\ntopic = \"cfg/*\"\ndownsample = 5\n",
        "",
        &[],
    );
    // The session's own rule comes first for small/0; recd.toml's for the others.
    recd.rec_json(&[
        "start",
        "--name",
        "cfg",
        "--topic",
        "cfg/*",
        "--downsample",
        "cfg/small/0=4",
    ]);
    let sent = finish_load(
        domain.load(
            &RecdLoad::new("cfg/")
                .cameras(0)
                .small_topics(2)
                .small_rate(100)
                .buffer(16)
                .count(40)
                .duration(Duration::from_secs(60))
                .wait_subscribers(1),
        ),
    );
    assert!(sent.topics.iter().all(|t| t.sent == 40), "{sent:?}");
    std::thread::sleep(Duration::from_millis(300));
    let stopped = recd.rec_json(&["stop", "cfg"]);
    let checks = check_files(&stopped_files(&stopped[0])).unwrap();
    assert_eq!(
        checks["cfg/small/0"].sequences,
        (0..40).step_by(4).collect::<Vec<u64>>()
    );
    assert_eq!(
        checks["cfg/small/1"].sequences,
        (0..40).step_by(2).collect::<Vec<u64>>()
    );
    for (name, topic) in &topics_of(&stopped[0]) {
        assert_balanced(name, topic);
    }
    drop(recd);

    let bad = tempfile::tempdir().unwrap();
    let config = bad.path().join("recd.toml");
    std::fs::write(&config, "[[topic]]\ntopic = \"camera/*\"\nmax_rate = -5\n").unwrap();
    let output = std::process::Command::new(recd_testkit::binary("recd"))
        .args(["--config", config.to_str().unwrap(), "--print-config"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success(), "{stderr}");
    assert!(
        stderr.contains("[[topic]]") && stderr.contains("max rate"),
        "{stderr}"
    );
}

#[test]
fn over_dds_type_filters_pick_ros2_types_and_downsampling_keeps_every_third() {
    let root = tempfile::tempdir().unwrap();
    let shm = Domain::new();
    let recd = Recd::start_on_dds_loopback(root.path(), &shm);
    let dds = "31";
    recd.rec_json(&[
        "start",
        "--name",
        "strings",
        "--dds-domain",
        dds,
        "--no-iceoryx2",
        "--topic-type",
        "std_msgs/msg/*",
        "--downsample",
        "/chatter=3",
    ]);
    recd.rec_json(&[
        "start",
        "--name",
        "no-strings",
        "--dds-domain",
        dds,
        "--no-iceoryx2",
        "--exclude-topic-type",
        "std_msgs/msg/String",
    ]);
    let strings = dds_publish(&[
        "--domain", dds, "--kind", "string", "--count", "30", "--rate", "30",
    ]);
    let blobs = dds_publish(&[
        "--domain", dds, "--kind", "blob", "--count", "30", "--rate", "30",
    ]);
    for publisher in [strings, blobs] {
        let published = dds_published(publisher, Duration::from_secs(90));
        assert_eq!(published.done["matched"], true, "{}", published.done);
    }
    std::thread::sleep(Duration::from_millis(500));

    let stopped = recd.rec_json(&["stop", "strings"]);
    let topics = topics_of(&stopped[0]);
    assert_eq!(topics.keys().collect::<Vec<_>>(), ["/chatter"], "{stopped}");
    let chatter = &topics["/chatter"];
    assert_balanced("/chatter", chatter);
    assert_eq!(
        (count(chatter, "written"), count(chatter, "filtered")),
        (10, 20),
        "{chatter}"
    );
    let mut texts = Vec::new();
    for file in stopped_files(&stopped[0]) {
        let bytes = std::fs::read(file).unwrap();
        for message in mcap::MessageStream::new(&bytes).unwrap() {
            let message = message.unwrap();
            if message.channel.topic == "/chatter" {
                // CDR: 4 bytes of encapsulation, the string's length (its NUL included),
                // its bytes.
                let len = u32::from_le_bytes(message.data[4..8].try_into().unwrap()) as usize;
                let text = &message.data[8..8 + len - 1];
                texts.push(String::from_utf8_lossy(text).to_string());
            }
        }
    }
    let expected: Vec<String> = (0..30).step_by(3).map(|i| format!("hello {i}")).collect();
    assert_eq!(texts, expected);

    let stopped = recd.rec_json(&["stop", "no-strings"]);
    let topics = topics_of(&stopped[0]);
    assert_eq!(topics.keys().collect::<Vec<_>>(), ["/blob"], "{stopped}");
    assert_eq!(count(&topics["/blob"], "written"), 30);
    assert_eq!(count(&topics["/blob"], "filtered"), 0);
}
