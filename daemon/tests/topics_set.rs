//! `rec topics-set`: a running session's topics changed three times while 10 iceoryx2
//! topics at 500 Hz are published (`recd-load`): the topics kept lose no sample, a removed
//! topic's last sample precedes its change, an added topic's first follows it, and each
//! change is a marker in the files and the session's selection in the catalog.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use recd_storage::Marker;
use recd_testkit::{
    dds_publish, dds_published, finish_load, python, stopped_files, Domain, Recd, RecdLoad,
};
use recd_workload::verify::check_files;
use serde_json::Value;

/// Samples per topic: 8 s at 500 Hz.
const COUNT: u64 = 4000;

/// Topics 0 to 7 are recorded from the start, 8 and 9 are added later.
fn topic(n: u32) -> String {
    match n {
        0..=7 => format!("ts/small/{n}"),
        _ => format!("ts/late/small/{}", n - 8),
    }
}

/// The markers of `files`, in file order.
fn markers(files: &[PathBuf]) -> Vec<Marker> {
    let mut markers = Vec::new();
    for file in files {
        let bytes = std::fs::read(file).unwrap();
        for record in mcap::read::LinearReader::new(&bytes).unwrap() {
            if let mcap::records::Record::Metadata(metadata) = record.unwrap() {
                markers.extend(Marker::from_record(&metadata.name, &metadata.metadata));
            }
        }
    }
    markers
}

/// The `topics` of session `name`'s recording configuration in the catalog, read by
/// Python's own sqlite3.
fn catalog_topics(state_dir: &Path, name: &str) -> Value {
    let output = Command::new(python())
        .args([
            "-c",
            "import sqlite3, sys; db = sqlite3.connect(sys.argv[1]); \
             print(db.execute('SELECT config FROM sessions WHERE name = ?', (sys.argv[2],)).fetchone()[0])",
        ])
        .arg(state_dir.join("catalog.sqlite"))
        .arg(name)
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let config: Value = serde_json::from_slice(&output.stdout).unwrap();
    config["topics"].clone()
}

/// `rec topics-set` with `args`; the moment the (one) receive thread took it.
fn topics_set(recd: &Recd, args: &[&str]) -> (u64, Value) {
    let mut command = vec!["topics-set", "busy"];
    command.extend_from_slice(args);
    let changed = recd.rec_json(&command);
    let times = changed["times_ns"].as_array().unwrap();
    assert_eq!(times.len(), 1, "one source, one moment: {changed}");
    (times[0].as_u64().unwrap(), changed)
}

#[test]
fn topics_kept_lose_nothing_across_three_changes_and_each_change_is_in_the_file() {
    let domain = Domain::new();
    let root = tempfile::tempdir().unwrap();
    let recd = Recd::start(root.path(), &domain);
    recd.rec_json(&["start", "--name", "busy", "--topic", "ts/small/*"]);
    let load = |prefix: &str, topics: usize, wait_subscribers: usize| {
        domain.load(
            &RecdLoad::new(prefix)
                .cameras(0)
                .small_topics(topics)
                .small_rate(500)
                .buffer(64)
                .count(COUNT)
                .duration(Duration::from_secs(60))
                .wait_subscribers(wait_subscribers),
        )
    };
    // The topics recorded from the start wait for recd; those added later do not.
    let loads = [load("ts/", 8, 1), load("ts/late/", 2, 0)];
    let pause = || std::thread::sleep(Duration::from_millis(1500));
    pause();
    let (removed_at, changed) = topics_set(&recd, &["--remove", "ts/small/0"]);
    assert_eq!(changed["exclude"], serde_json::json!(["ts/small/0"]));
    pause();
    let (added_at, changed) = topics_set(&recd, &["--add", "ts/late/small/0"]);
    assert_eq!(
        changed["topics"],
        serde_json::json!(["ts/small/*", "ts/late/small/0"])
    );
    pause();
    let (swapped_at, _) = topics_set(
        &recd,
        &["--remove", "ts/small/1", "--add", "ts/late/small/1"],
    );
    let config = catalog_topics(&root.path().join("state"), "busy");
    assert_eq!(
        (&config["include"], &config["exclude"]),
        (
            &serde_json::json!(["ts/small/*", "ts/late/small/0", "ts/late/small/1"]),
            &serde_json::json!(["ts/small/0", "ts/small/1"])
        ),
        "the catalog keeps the selection as changed: {config}"
    );
    for load in loads {
        let sent = finish_load(load);
        assert!(sent.topics.iter().all(|t| t.sent == COUNT), "{sent:?}");
    }
    std::thread::sleep(Duration::from_millis(300));
    let stopped = recd.rec_json(&["stop", "busy"]);

    let files = stopped_files(&stopped[0]);
    let checks = check_files(&files).unwrap();
    let counts: BTreeMap<String, &Value> = (stopped[0]["topics"].as_array().unwrap().iter())
        .map(|t| (t["name"].as_str().unwrap().to_string(), t))
        .collect();
    for n in 2..=7 {
        let name = topic(n);
        let check = &checks[&name];
        assert!(check.bad.is_empty(), "{name}: {:?}", check.bad);
        assert_eq!(
            check.sequences,
            (0..COUNT).collect::<Vec<_>>(),
            "{name} kept: every sample, no gap across the changes"
        );
        assert_eq!(
            (&counts[&name]["lost"], &counts[&name]["dropped"]),
            (&Value::from(0), &Value::from(0))
        );
    }
    let first_log = |n: u32| checks[&topic(n)].log_times_ns[0];
    let last_log = |n: u32| *checks[&topic(n)].log_times_ns.last().unwrap();
    let contiguous = |n: u32| {
        let sequences = &checks[&topic(n)].sequences;
        sequences.windows(2).all(|w| w[1] == w[0] + 1)
    };
    for (n, at) in [(0, removed_at), (1, swapped_at)] {
        assert!(last_log(n) < at, "{} ends before its removal", topic(n));
        assert_eq!(checks[&topic(n)].sequences[0], 0, "{}", topic(n));
        assert!(contiguous(n), "{} lost nothing until removed", topic(n));
    }
    for (n, at) in [(8, added_at), (9, swapped_at)] {
        assert!(first_log(n) > at, "{} starts after its addition", topic(n));
        assert!(contiguous(n), "{} lost nothing once added", topic(n));
        assert_eq!(*checks[&topic(n)].sequences.last().unwrap(), COUNT - 1);
    }
    // The removed topics' counts are final: what was received was written.
    for n in [0, 1] {
        let name = topic(n);
        assert_eq!(
            counts[&name]["received"], counts[&name]["written"],
            "{name}"
        );
        assert_eq!(
            counts[&name]["written"].as_u64().unwrap(),
            checks[&name].messages
        );
    }
    println!(
        "removed {} after {} samples, {} after {}; added {} from sample {}, {} from {}",
        topic(0),
        checks[&topic(0)].messages,
        topic(1),
        checks[&topic(1)].messages,
        topic(8),
        checks[&topic(8)].sequences[0],
        topic(9),
        checks[&topic(9)].sequences[0]
    );

    let markers = markers(&files);
    let changes: Vec<(u64, &str)> = (markers.iter())
        .filter(|m| m.text.starts_with("topics-set:"))
        .map(|m| (m.time_ns, m.text.as_str()))
        .collect();
    assert_eq!(
        changes,
        [
            (removed_at, "topics-set: -ts/small/0"),
            (added_at, "topics-set: +ts/late/small/0"),
            (swapped_at, "topics-set: +ts/late/small/1 -ts/small/1"),
        ]
    );
}

#[test]
fn a_change_that_names_nothing_or_no_session_is_refused_and_changes_nothing() {
    let domain = Domain::new();
    let root = tempfile::tempdir().unwrap();
    let recd = Recd::start(root.path(), &domain);
    let refused = |args: &[&str]| {
        let output = recd.rec(args);
        assert_eq!(output.status.code(), Some(1), "{output:?}");
        String::from_utf8_lossy(&output.stderr).to_string()
    };
    let stderr = refused(&["topics-set", "nobody", "--add", "x"]);
    assert!(stderr.contains("nobody"), "{stderr}");
    recd.rec_json(&["start", "--name", "idle", "--topic", "ts/*"]);
    let stderr = refused(&["topics-set", "idle"]);
    assert!(stderr.contains("--add"), "{stderr}");
    let stderr = refused(&["topics-set", "idle", "--add", "a["]);
    assert!(stderr.contains("a["), "{stderr}");
    let config = catalog_topics(&root.path().join("state"), "idle");
    assert_eq!(config["include"], serde_json::json!(["ts/*"]));
    assert!(
        config
            .get("exclude")
            .is_none_or(|e| e == &serde_json::json!([])),
        "{config}"
    );
    recd.rec_json(&["stop", "idle"]);
}

#[test]
fn over_dds_a_removed_topic_stops_and_comes_back_and_the_kept_one_loses_nothing() {
    let root = tempfile::tempdir().unwrap();
    let shm = Domain::new();
    let recd = Recd::start_on_dds_loopback(root.path(), &shm);
    let dds = "35";
    recd.rec_json(&[
        "start",
        "--name",
        "busy",
        "--dds-domain",
        dds,
        "--no-iceoryx2",
    ]);
    let publish = |kind: &str| {
        dds_publish(&[
            "--domain", dds, "--kind", kind, "--count", "80", "--rate", "20",
        ])
    };
    let publishers = [publish("string"), publish("blob")];
    std::thread::sleep(Duration::from_millis(1500));
    let (removed_at, _) = topics_set(&recd, &["--remove", "/blob"]);
    std::thread::sleep(Duration::from_millis(1000));
    let (added_at, _) = topics_set(&recd, &["--add", "/blob"]);
    for publisher in publishers {
        let published = dds_published(publisher, Duration::from_secs(90));
        assert_eq!(published.done["matched"], true, "{}", published.done);
    }
    std::thread::sleep(Duration::from_millis(500));
    let stopped = recd.rec_json(&["stop", "busy"]);
    let counts: BTreeMap<String, &Value> = (stopped[0]["topics"].as_array().unwrap().iter())
        .map(|t| (t["name"].as_str().unwrap().to_string(), t))
        .collect();
    let chatter = counts["/chatter"];
    assert_eq!(
        (&chatter["written"], &chatter["lost"]),
        (&Value::from(80), &Value::from(0)),
        "the kept topic: {chatter}"
    );
    let mut blob_times = Vec::new();
    let mut blob_seqs = Vec::new();
    for file in stopped_files(&stopped[0]) {
        let bytes = std::fs::read(file).unwrap();
        for message in mcap::MessageStream::new(&bytes).unwrap() {
            let message = message.unwrap();
            if message.channel.topic == "/blob" {
                // CDR: 4 bytes of encapsulation, then the blob's int32 seq.
                let seq = u32::from_le_bytes(message.data[4..8].try_into().unwrap());
                blob_times.push(message.log_time);
                blob_seqs.push(seq);
            }
        }
    }
    let before = blob_times.iter().filter(|&&t| t < removed_at).count();
    let after = blob_times.iter().filter(|&&t| t > added_at).count();
    assert!(before > 0 && after > 0, "{blob_times:?}");
    assert_eq!(
        before + after,
        blob_times.len(),
        "none between removal ({removed_at}) and addition ({added_at})"
    );
    // Each sample once: what a writer sends the new reader of what the old one had (its
    // history) is not recorded twice.
    assert!(
        blob_seqs.windows(2).all(|w| w[0] < w[1]),
        "the blob's samples in order, none twice: {blob_seqs:?}"
    );
    let (kept_before, kept_after) = blob_seqs.split_at(before);
    assert_eq!(kept_before, (0..before as u32).collect::<Vec<_>>());
    assert_eq!(*kept_after.last().unwrap(), 79);
    let blob = counts["/blob"];
    assert_eq!(blob["written"].as_u64().unwrap(), blob_times.len() as u64);
    assert!(blob_times.len() < 80, "{blob}");
    assert_eq!(
        blob["lost"], 0,
        "what was not subscribed to is not lost: {blob}"
    );
    assert_eq!(blob["received"], blob["written"], "{blob}");
    println!("/blob: {before} samples before its removal, {after} after it came back (of 80)");
}

#[test]
fn an_iceoryx2_topic_removed_and_added_back_continues_on_its_channel_without_repeats() {
    let domain = Domain::new();
    let root = tempfile::tempdir().unwrap();
    let recd = Recd::start(root.path(), &domain);
    recd.rec_json(&["start", "--name", "busy", "--topic", "back/*"]);
    let load = domain.load(
        &RecdLoad::new("back/")
            .cameras(0)
            .small_topics(1)
            .small_rate(200)
            .buffer(64)
            .count(800)
            .duration(Duration::from_secs(60))
            .wait_subscribers(1),
    );
    std::thread::sleep(Duration::from_millis(1000));
    let (removed_at, _) = topics_set(&recd, &["--remove", "back/small/0"]);
    std::thread::sleep(Duration::from_millis(1000));
    let (added_at, changed) = topics_set(&recd, &["--add", "back/small/0"]);
    assert!(
        changed["exclude"].as_array().unwrap().is_empty(),
        "{changed}"
    );
    assert_eq!(finish_load(load).topics[0].sent, 800);
    std::thread::sleep(Duration::from_millis(300));
    let stopped = recd.rec_json(&["stop", "busy"]);
    let topics = stopped[0]["topics"].as_array().unwrap();
    assert_eq!(topics.len(), 1, "one topic, one status entry: {stopped}");
    let checks = check_files(&stopped_files(&stopped[0])).unwrap();
    let check = &checks["back/small/0"];
    assert!(check.bad.is_empty(), "{:?}", check.bad);
    let times = &check.log_times_ns;
    let before = times.iter().filter(|&&t| t < removed_at).count();
    let after = times.iter().filter(|&&t| t > added_at).count();
    assert!(before > 0 && after > 0 && before + after == times.len());
    assert!(
        check.sequences.windows(2).all(|w| w[0] < w[1]),
        "none twice: {:?}",
        check.sequences
    );
    assert_eq!(
        check.sequences[..before],
        (0..before as u64).collect::<Vec<_>>()
    );
    assert_eq!(*check.sequences.last().unwrap(), 799);
    assert_eq!(topics[0]["lost"], 0, "{stopped}");
    assert_eq!(topics[0]["received"], topics[0]["written"], "{stopped}");
}
