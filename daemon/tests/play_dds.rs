//! `rec play` of DDS / ROS 2 recordings: sessions recorded from a Cyclone DDS publisher
//! (Python `cyclonedds`) are played to Cyclone DDS subscribers started first, over real
//! UDP on loopback only. Each sample must arrive as the publisher sent it (the raw bytes
//! Cyclone received, encapsulation included), in order, with the recorded pacing, on the
//! recorded (or remapped) DDS names and QoS.
//!
//! Each test uses DDS domains of its own, so tests running at once do not see each
//! other's topics.

use std::path::PathBuf;
use std::process::Child;
use std::time::Duration;

use recd_testkit::{
    arrival_times, assert_paced_like, dds_publish, dds_published, dds_subscribe, messages_by_topic,
    pacing, script_done, stopped_files, Domain, Published, Recd, RecdLoad,
};
use serde_json::Value;

/// recd recording DDS on loopback, with a root directory and iceoryx2 domain of its own.
struct Setup {
    recd: Recd,
    _root: tempfile::TempDir,
    shm: Domain,
}

impl Setup {
    fn start() -> Self {
        let root = tempfile::tempdir().unwrap();
        let shm = Domain::new();
        let recd = Recd::start_on_dds_loopback(root.path(), &shm);
        Self {
            recd,
            _root: root,
            shm,
        }
    }

    /// Records what `publishers` publish on DDS `domain` into session `name` (topics
    /// `topics`); returns the session's files and what each publisher published.
    fn record(
        &self,
        name: &str,
        domain: u16,
        topics: &[&str],
        publishers: Vec<Child>,
    ) -> (Vec<PathBuf>, Vec<Published>) {
        let domain = domain.to_string();
        let mut args = vec!["start", "--name", name, "--dds-domain", &domain];
        for topic in topics {
            args.extend(["--topic", topic]);
        }
        self.recd.rec_json(&args);
        let published: Vec<Published> = publishers
            .into_iter()
            .map(|p| dds_published(p, Duration::from_secs(90)))
            .collect();
        for p in &published {
            assert_eq!(p.done["matched"], true, "{}", p.done);
        }
        let sent: usize = published.iter().map(|p| p.samples.len()).sum();
        assert!(self.recd.wait_written(name, sent as u64));
        let stopped = self.recd.rec_json(&["stop", name]);
        (stopped_files(&stopped), published)
    }

    /// `rec play ARGS --dds-interface 127.0.0.1 --wait-subscribers 20s`; its JSON report.
    fn play(&self, args: &[&str]) -> Value {
        let mut all = vec!["play"];
        all.extend_from_slice(args);
        all.extend([
            "--dds-interface",
            "127.0.0.1",
            "--iceoryx2-prefix",
            &self.shm.prefix,
            "--wait-subscribers",
            "20s",
        ]);
        self.recd.rec_json(&all)
    }
}

/// Log times (ns) in seconds.
fn seconds(times: &[u64]) -> Vec<f64> {
    times.iter().map(|t| *t as f64 / 1e9).collect()
}

fn digests(samples: &[Value]) -> Vec<&str> {
    samples
        .iter()
        .map(|s| s["sha256"].as_str().unwrap())
        .collect()
}

fn played<'a>(report: &'a Value, topic: &str) -> &'a Value {
    report["topics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == topic)
        .unwrap_or_else(|| panic!("{topic} not in {report}"))
}

#[test]
fn ros2_and_keyed_topics_arrive_at_independent_subscribers_as_sent_and_on_time() {
    let setup = Setup::start();
    let (files, published) = setup.record(
        "source",
        60,
        &["/chatter", "Keyed"],
        vec![
            dds_publish(&[
                "--domain", "60", "--kind", "string", "--count", "100", "--rate", "50",
            ]),
            dds_publish(&[
                "--domain", "60", "--kind", "keyed", "--count", "30", "--rate", "15",
            ]),
        ],
    );

    // Played into another domain, to subscribers that were there first.
    let chatter = dds_subscribe(&["--domain", "61", "--kind", "string", "--count", "100"]);
    let keyed = dds_subscribe(&["--domain", "61", "--kind", "keyed", "--count", "30"]);
    let report = setup.play(&["source", "--dds-domain", "61"]);
    let chatter = script_done(chatter, Duration::from_secs(60));
    let keyed = script_done(keyed, Duration::from_secs(60));

    assert_eq!(played(&report, "/chatter")["sent"], 100, "{report}");
    assert_eq!(played(&report, "Keyed")["sent"], 30, "{report}");
    // Byte for byte (Cyclone's raw sample, encapsulation header first), in order.
    assert_eq!(digests(&chatter.samples), digests(&published[0].samples));
    assert_eq!(digests(&keyed.samples), digests(&published[1].samples));
    let texts: Vec<&Value> = keyed.samples.iter().map(|s| &s["data"]).collect();
    let sent: Vec<&Value> = published[1].samples.iter().map(|s| &s["data"]).collect();
    assert_eq!(texts, sent, "every key's samples, in order");

    // At the recorded pace.
    let recorded = seconds(&messages_by_topic(&files).1["/chatter"]);
    assert_paced_like(&recorded, &arrival_times(&chatter.samples));

    // Twice as fast: half the span.
    let chatter = dds_subscribe(&["--domain", "61", "--kind", "string", "--count", "100"]);
    setup.play(&[
        "source",
        "--dds-domain",
        "61",
        "--topic",
        "/chatter",
        "--rate",
        "2",
    ]);
    let chatter = script_done(chatter, Duration::from_secs(60));
    assert_eq!(digests(&chatter.samples), digests(&published[0].samples));
    let ratio = pacing(&arrival_times(&chatter.samples)).0 / pacing(&recorded).0;
    assert!(
        (0.45..0.55).contains(&ratio),
        "--rate 2 played {ratio:.3} of the span"
    );
}

#[test]
fn latched_and_xcdr2_topics_keep_their_qos_and_encapsulation_and_remaps_rename() {
    let setup = Setup::start();
    let (_, published) = setup.record(
        "qos",
        62,
        &["/map", "/blob"],
        vec![
            dds_publish(&[
                "--domain",
                "62",
                "--topic",
                "rt/map",
                "--kind",
                "string",
                "--count",
                "3",
                "--rate",
                "10",
                "--transient-local",
            ]),
            dds_publish(&[
                "--domain", "62", "--kind", "blob", "--size", "3000", "--xcdr2", "--count", "20",
                "--rate", "40",
            ]),
        ],
    );

    // A transient-local reader matches only a transient-local writer; the remapped name
    // is a ROS topic on the wire too (rt/…).
    let map = dds_subscribe(&[
        "--domain",
        "63",
        "--topic",
        "rt/map_replayed",
        "--kind",
        "string",
        "--count",
        "3",
        "--transient-local",
    ]);
    let blob = dds_subscribe(&["--domain", "63", "--kind", "blob", "--count", "20"]);
    let report = setup.play(&[
        "qos",
        "--dds-domain",
        "63",
        "--remap",
        "/map:=/map_replayed",
    ]);
    let map = script_done(map, Duration::from_secs(60));
    let blob = script_done(blob, Duration::from_secs(60));
    assert_eq!(played(&report, "/map")["sent"], 3, "{report}");
    assert_eq!(digests(&map.samples), digests(&published[0].samples));
    // XCDR2 stays XCDR2 (00 07 …): the digests cover the encapsulation header.
    assert_eq!(digests(&blob.samples), digests(&published[1].samples));

    let unknown = setup.recd.rec(&[
        "play",
        "qos",
        "--remap",
        "/nowhere:=/x",
        "--dds-domain",
        "63",
    ]);
    assert_eq!(unknown.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&unknown.stderr);
    assert!(
        stderr.contains("--remap /nowhere:=/x: the recording has no topic /nowhere"),
        "{stderr}"
    );
    let merged = setup.recd.rec(&[
        "play",
        "qos",
        "--remap",
        "/map:=/blob",
        "--dds-domain",
        "63",
    ]);
    assert_eq!(merged.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&merged.stderr);
    assert!(stderr.contains("would both play as /blob"), "{stderr}");
}

#[test]
fn a_mixed_session_plays_both_families_merged_by_time() {
    let setup = Setup::start();
    let prefix = format!("mixedplay{}/", std::process::id());
    let shm_topic = format!("{prefix}small/0");
    let selection = format!("{prefix}*");
    let start = |name: &str, domain: &str| {
        setup.recd.rec_json(&[
            "start",
            "--name",
            name,
            "--dds-domain",
            domain,
            "--max-duration",
            "1s",
            "--topic",
            &selection,
            "--topic",
            "/chatter",
        ]);
    };
    start("mixed", "64");
    let load = setup.shm.load(
        &RecdLoad::new(&prefix)
            .cameras(0)
            .small_topics(1)
            .small_rate(20)
            .count(50)
            .duration(Duration::from_secs(30))
            .wait_subscribers(1),
    );
    let published = dds_published(
        dds_publish(&[
            "--domain", "64", "--kind", "string", "--count", "50", "--rate", "20",
        ]),
        Duration::from_secs(90),
    );
    recd_testkit::finish_load(load);
    assert!(setup.recd.wait_written("mixed", 100));
    let source = stopped_files(&setup.recd.rec_json(&["stop", "mixed"]));
    assert!(source.len() >= 4, "two families, split: {source:?}");

    // The copy records both families from the player.
    start("copy", "65");
    let report = setup.play(&["mixed", "--dds-domain", "65"]);
    assert_eq!(played(&report, "/chatter")["sent"], 50, "{report}");
    assert_eq!(played(&report, &shm_topic)["sent"], 50, "{report}");
    assert!(setup.recd.wait_written("copy", 100));
    let copy = stopped_files(&setup.recd.rec_json(&["stop", "copy"]));

    let (copied, copy_times) = messages_by_topic(&copy);
    let (chatter, shm) = (
        seconds(&copy_times["/chatter"]),
        seconds(&copy_times[&shm_topic]),
    );
    assert_eq!((chatter.len(), shm.len()), (50, 50));
    assert_eq!(copied["/chatter"], digests(&published.samples));
    // Played side by side as recorded, not one family after the other: the copy takes
    // as long as the source, and its two topics start as far apart as they did.
    let (_, source_times) = messages_by_topic(&source);
    let (source_chatter, source_shm) = (
        seconds(&source_times["/chatter"]),
        seconds(&source_times[&shm_topic]),
    );
    let source_span = span_of_both(&source_chatter, &source_shm);
    let copy_span = span_of_both(&chatter, &shm);
    assert!(
        (copy_span / source_span - 1.0).abs() < 0.25,
        "copy spans {copy_span:.2} s, source {source_span:.2} s"
    );
    let source_offset = source_chatter[0] - source_shm[0];
    let copy_offset = chatter[0] - shm[0];
    assert!(
        (copy_offset - source_offset).abs() < 0.2,
        "first /chatter after the first shared-memory message: {copy_offset:.3} s in the copy, {source_offset:.3} s in the source"
    );
}

/// Seconds from the first to the last of two topics' times.
fn span_of_both(a: &[f64], b: &[f64]) -> f64 {
    let first = a[0].min(b[0]);
    let last = a[a.len() - 1].max(b[b.len() - 1]);
    last - first
}
