//! Every sample a publisher sent is in the file or in the counts, and every place that
//! shows the counts (`rec stop --json`, `rec list --json`, the file's `recorder`
//! metadata) shows the same; the I/O mode recd chose is said where it is chosen.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use recd_testkit::{finish_load, stopped_files, Domain, Mount, Recd, RecdLoad, Shortfall};
use recd_workload::verify::check_files;
use serde_json::Value;

/// The `recorder` Metadata record of an MCAP file.
fn recorder_metadata(path: &Path) -> BTreeMap<String, String> {
    let bytes = std::fs::read(path).unwrap();
    for record in mcap::read::LinearReader::new(&bytes).unwrap() {
        if let mcap::records::Record::Metadata(metadata) = record.unwrap() {
            if recd_storage::iceoryx2::is_recorder_metadata(&metadata.name) {
                return metadata.metadata;
            }
        }
    }
    panic!("{} has no recorder metadata", path.display())
}

/// Per topic name, the counts a report lists (a `topics` array of stop, list or status).
fn counts_by_name(topics: &Value) -> BTreeMap<String, [u64; 6]> {
    topics
        .as_array()
        .unwrap()
        .iter()
        .map(|t| (t["name"].as_str().unwrap().to_string(), counts_of(t)))
        .collect()
}

fn counts_of(topic: &Value) -> [u64; 6] {
    [
        "received",
        "written",
        "dropped",
        "lost",
        "overflows",
        "bytes_written",
    ]
    .map(|key| {
        topic[key]
            .as_u64()
            .unwrap_or_else(|| panic!("{key} in {topic}"))
    })
}

#[test]
fn io_mode_auto_falls_back_to_buffered_where_o_direct_is_refused_and_says_so() {
    // ramfs refuses O_DIRECT (tmpfs accepts it on current kernels).
    let ramfs = Mount::new("ramfs", "");
    let domain = Domain::new();
    let recd = Recd::start(ramfs.path(), &domain);

    let refused = recd.rec(&["start", "--name", "strict", "--io-mode", "direct"]);
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert_eq!(refused.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("O_DIRECT"), "names the reason: {stderr}");

    let started = recd.rec_json(&["start", "--name", "auto", "--topic", "auto/*"]);
    assert_eq!(started["io_mode"], "buffered");
    let status = recd.rec_json(&["status", "auto"]);
    assert_eq!(status[0]["io_mode"], "buffered");
    let human = String::from_utf8_lossy(&recd.rec(&["status", "auto"]).stdout).to_string();
    assert!(human.contains("buffered I/O"), "{human}");
    assert!(recd.log().contains("io_mode=buffered"), "{}", recd.log());

    let sent = finish_load(
        domain.load(
            &RecdLoad::new("auto/")
                .cameras(1)
                .frame_size(200_000)
                .fps(100)
                .count(20)
                .duration(Duration::from_secs(20))
                .wait_subscribers(1),
        ),
    );
    assert_eq!(sent.topics[0].sent, 20);
    let stopped = recd.rec_json(&["stop", "auto"]);
    let files = stopped_files(&stopped[0]);
    let checks = check_files(&files).unwrap();
    assert_eq!(
        checks["auto/camera/0"].sequences,
        (0..20).collect::<Vec<_>>()
    );
    for file in &files {
        let metadata = recorder_metadata(file);
        assert_eq!(metadata["io_mode"], "buffered");
        let config: Value = serde_json::from_str(&metadata["config"]).unwrap();
        assert_eq!(config["io_mode"], "auto", "what was asked stays beside it");
        // The receive thread's report as of the file's end: scheduled real time (recd
        // runs as root here) and its lateness.
        let receive: Value = serde_json::from_str(&metadata[recd_engine::RECEIVE_THREAD]).unwrap();
        assert_eq!(receive["source"], "iceoryx2");
        assert_eq!(receive["scheduling"], "SCHED_FIFO 10");
        assert!(receive["lateness_max"].is_object(), "{receive}");
    }

    let unknown = recd.rec(&["start", "--io-mode", "fast"]);
    assert_eq!(unknown.status.code(), Some(2), "clap refuses it");
    assert!(String::from_utf8_lossy(&unknown.stderr).contains("fast"));
}

#[test]
fn with_small_queues_and_drops_every_count_agrees_and_adds_up_to_what_was_sent() {
    let domain = Domain::new();
    let root = tempfile::tempdir().unwrap();
    // A handoff of 3 messages and no spill pool: large samples beyond the borrow budget
    // and bursts beyond the handoff are dropped, which is what the counts must show.
    let recd = Recd::start_configured(
        root.path(),
        &domain,
        "",
        "ring_items = 3\nspill_bytes = \"0B\"\nmax_file_size = \"4MiB\"",
        &[],
    );
    recd.rec_json(&["start", "--name", "acct", "--topic", "acct/*"]);
    let count = 150u64;
    let sent = finish_load(
        domain.load(
            &RecdLoad::new("acct/")
                .cameras(2)
                .frame_size(300_000)
                .fps(200)
                .small_topics(3)
                .small_rate(2000)
                .borrowed(2)
                .buffer(2)
                .count(count)
                .duration(Duration::from_secs(30))
                .wait_subscribers(1),
        ),
    );
    assert!(sent.topics.iter().all(|t| t.sent == count), "{sent:?}");
    // Every sample sent is written, dropped or shown lost by its sequence number, except
    // on a topic whose queue was found full: samples overwritten before the first one
    // received show in no sequence gap (the overflow count says that they may exist).
    // rec stop exits 4 exactly where a topic may have lost samples nobody can count.
    let stop = recd.stop("acct");
    let sent_by_topic = (sent.topics.iter())
        .map(|t| (t.service.clone(), t.sent))
        .collect();
    stop.assert_accounted(&sent_by_topic, Shortfall::WhereFoundFull);
    let stopped = &stop.session;
    let files = stopped_files(stopped);
    assert!(files.len() > 1, "the size limit split the recording");

    let reported = counts_by_name(&stopped["topics"]);
    assert_eq!(reported.len(), 5, "{reported:?}");
    let checks = check_files(&files).unwrap();
    let mut not_written = 0;
    for (name, [received, written, dropped, lost, overflows, bytes]) in &reported {
        assert_eq!(
            *received,
            written + dropped,
            "{name}: nothing pending at stop"
        );
        let check = &checks[name];
        assert!(check.bad.is_empty(), "{name}: {:?}", check.bad);
        assert!(check.in_order(), "{name}");
        assert_eq!(
            check.sequences.len() as u64,
            *written,
            "{name}: the file agrees"
        );
        assert!(*bytes > 0, "{name}");
        not_written += dropped + lost + overflows;
    }
    // 2 kHz into queues of 2 samples, a handoff of 3 messages and no spill pool.
    assert!(
        not_written > 0,
        "the test made recd lose some: {reported:?}"
    );

    let listed = recd.rec_json(&["list"]);
    let session = listed
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "acct")
        .unwrap();
    assert_eq!(counts_by_name(&session["topics"]), reported, "catalog");

    let last = files.last().unwrap();
    let in_file: BTreeMap<String, Value> =
        serde_json::from_str(&recorder_metadata(last)["topics"]).unwrap();
    let in_file: BTreeMap<String, [u64; 6]> = in_file
        .into_iter()
        .map(|(name, counts)| (name, counts_of(&counts)))
        .collect();
    assert_eq!(in_file, reported, "the last file's recorder metadata");
}
