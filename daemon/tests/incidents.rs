//! Incidents of sessions on disk (`rec trigger` on a session that writes everything,
//! `rec incidents`): a ring of files recorded from an iceoryx2 camera, a latched topic and
//! a DDS publisher keeps the files each incident's window overlaps while retention takes
//! the rest, each window is cut into files of its own holding exactly the publishers'
//! messages of the window (the latched topic's message in force first), read by the
//! Python `mcap` package and `@mcap/core`'s indexed reader, uploaded to SeaweedFS before
//! the session's other files; a release lets retention take the files; a pin survives a
//! power cut and the cut is made after it; `--max-age` deletes exactly the files older
//! than it but those an incident pins; an incident beyond `max_pinned_size` is refused;
//! the samples a Cyclone DDS publisher none of us wrote sent within a window are exactly
//! those of its cut, by the publisher's own record of what it sent and when.

use std::collections::hash_map::DefaultHasher;
use std::collections::{BTreeMap, BTreeSet};
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use recd_testkit::{
    assert_cut_is_window, dds_publish, dds_published, ext4_image, finish_load, read_mcap,
    read_with_mcap_core, stopped_files, wait_until, Domain, Mount, Recd, RecdLoad, SeaweedFs,
};
use recd_workload::{blob, proof};
use serde_json::Value;

/// The channel metadata key of an iceoryx2 topic's user header length.
const USER_HEADER_SIZE: &str = "iceoryx2.user_header.size";
/// recd's own health channel, not a publisher's.
const HEALTH: &str = "recd/health";

/// One message of a recorded or cut file, its payload proven by the load generator's
/// byte-proof oracle.
#[derive(Debug, Clone)]
struct Message {
    topic: String,
    /// The publisher's sequence number, from the proof in the payload.
    sequence: u64,
    log_time: u64,
    /// A hash of the whole message (user header and payload).
    digest: u64,
}

/// Every complete message of `path` (a file cut short by a crash, or one being written,
/// is read up to its last complete record), recd's health channel left out; panics on a
/// payload that fails its proof.
fn messages(path: &Path) -> Vec<Message> {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let Ok(stream) = mcap::MessageStream::new(&bytes) else {
        return Vec::new();
    };
    let mut found = Vec::new();
    for message in stream {
        let Ok(message) = message else { break };
        if message.channel.topic == HEALTH {
            continue;
        }
        let sequence = if message.channel.message_encoding == "cdr" {
            let parsed = blob::parse(&message.data).unwrap_or_else(|e| {
                panic!("{}: a DDS sample that is no Blob: {e}", path.display())
            });
            proof::check(parsed.data)
        } else {
            let header: usize = (message.channel.metadata.get(USER_HEADER_SIZE))
                .and_then(|size| size.parse().ok())
                .unwrap_or(0);
            proof::check(&message.data[header.min(message.data.len())..])
        }
        .unwrap_or_else(|e| {
            panic!(
                "{}: a message of {} fails its proof: {e}",
                path.display(),
                message.channel.topic
            )
        });
        let mut hasher = DefaultHasher::new();
        message.data.hash(&mut hasher);
        found.push(Message {
            topic: message.channel.topic.clone(),
            sequence,
            log_time: message.log_time,
            digest: hasher.finish(),
        });
    }
    found
}

/// Per topic, per sequence: the message as `files` hold it (the earliest log time where a
/// split file repeats a latched one).
fn by_sequence(files: &[PathBuf]) -> BTreeMap<String, BTreeMap<u64, Message>> {
    let mut topics: BTreeMap<String, BTreeMap<u64, Message>> = BTreeMap::new();
    for file in files {
        for message in messages(file) {
            let topic = topics.entry(message.topic.clone()).or_default();
            match topic.get(&message.sequence) {
                Some(known) if known.log_time <= message.log_time => {
                    assert_eq!(known.digest, message.digest, "a repeat is the same bytes");
                }
                _ => {
                    topic.insert(message.sequence, message);
                }
            }
        }
    }
    topics
}

fn epoch_ns() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64
}

fn ns(value: &Value, key: &str) -> u64 {
    value[key]
        .as_u64()
        .unwrap_or_else(|| panic!("no {key} in {value}"))
}

/// The incident `id` of `session` as `rec incidents SESSION --json` lists it.
fn incident(recd: &Recd, session: &str, id: &str) -> Value {
    let listed = recd.rec_json(&["incidents", session]);
    (listed.as_array().unwrap().iter())
        .find(|i| i["id"] == id)
        .cloned()
        .unwrap_or_else(|| panic!("no incident {id} in {listed:#}"))
}

/// Waits (bounded: 90 s, generous for a loaded machine) until incident `id` is cut;
/// returns it.
fn wait_cut(recd: &Recd, session: &str, id: &str) -> Value {
    let mut found = Value::Null;
    let cut = wait_until(Duration::from_secs(90), || {
        found = incident(recd, session, id);
        found["cut"] != "waiting"
    });
    assert!(cut, "incident {id} not cut: {found:#}\n{}", recd.log());
    assert_eq!(found["cut"], "cut", "{found:#}\n{}", recd.log());
    found
}

fn paths(files: &Value) -> Vec<PathBuf> {
    (files.as_array().unwrap().iter())
        .map(|f| PathBuf::from(f["path"].as_str().unwrap()))
        .collect()
}

/// Whether `path` is an incident's cut file (in the data directory's `incidents/`).
fn is_cut_file(path: &Path) -> bool {
    path.parent()
        .and_then(Path::file_name)
        .is_some_and(|dir| dir == "incidents")
}

/// The session's recording files that are still on disk, oldest first.
fn kept_files(recd: &Recd, session: &str) -> Vec<PathBuf> {
    let listed = recd.listed(session);
    (listed["files"].as_array().unwrap().iter())
        .filter(|f| f["state"] != "deleted" && f["state"] != "missing")
        .map(|f| PathBuf::from(f["path"].as_str().unwrap()))
        .filter(|p| p.exists() && !is_cut_file(p))
        .collect()
}

/// Asserts that the cut files of `incident` hold exactly the messages of its window that
/// the publishers sent, as the session's kept files (`kept`, every file its window
/// overlaps among them) hold them: per topic the same sequences and bytes, contiguous
/// but for what recd counted as dropped or lost (`counted`), all inside the window, the
/// messages just outside it outside; `latched` topics start with their message in force
/// at the window's start. Returns the cut's messages per topic.
fn assert_exact_cut(
    incident: &Value,
    kept: &[PathBuf],
    counted: &BTreeMap<String, u64>,
    latched: &[&str],
) -> BTreeMap<String, Vec<Message>> {
    let (start, end) = (ns(incident, "start_ns"), ns(incident, "end_ns"));
    // Exactly the window's messages as recorded (the same bytes at the same times, the
    // latched topics' message in force first, nothing from elsewhere): the check the
    // sealed cut gets too.
    assert_cut_is_window(&paths(&incident["cut_files"]), kept, (start, end), latched);
    let recorded = by_sequence(kept);
    let mut cut: BTreeMap<String, Vec<Message>> = BTreeMap::new();
    for file in paths(&incident["cut_files"]) {
        for message in messages(&file) {
            cut.entry(message.topic.clone()).or_default().push(message);
        }
    }
    // Beyond that, by the publishers' own record (the sequences their payloads prove):
    // the same messages, contiguous but for what recd counted, the neighbours outside.
    for (topic, held) in &recorded {
        let got = cut.get(topic).cloned().unwrap_or_default();
        // A latched topic's first is the message in force, checked above.
        let skip = usize::from(latched.contains(&topic.as_str())).min(got.len());
        let window = &got[skip..];
        let got_sequences: Vec<u64> = window.iter().map(|m| m.sequence).collect();
        let expected_sequences: Vec<u64> = (held.values())
            .filter(|m| (start..=end).contains(&m.log_time))
            .map(|m| m.sequence)
            .collect();
        assert_eq!(
            got_sequences, expected_sequences,
            "{topic}: the cut holds the window's messages as recorded"
        );
        if let (Some(first), Some(last)) = (window.first(), window.last()) {
            let gaps = last.sequence - first.sequence + 1 - window.len() as u64;
            assert!(
                gaps <= counted.get(topic).copied().unwrap_or(0),
                "{topic}: {gaps} of the publisher's messages missing in the window, {counted:?} counted"
            );
            // The publisher's messages just outside the window, where kept, are outside.
            if let Some(before) = held.range(..first.sequence).next_back() {
                assert!(before.1.log_time < start, "{topic}: {} missing", before.0);
            }
            if let Some(after) = held.range(last.sequence + 1..).next() {
                assert!(after.1.log_time > end, "{topic}: {} missing", after.0);
            }
        }
    }
    cut
}

/// Asserts that the Python `mcap` package and `@mcap/core` (stream and indexed reader)
/// read `file` with `count` messages besides recd's health channel, and that it carries
/// the `incident` record of `incident`; returns that record.
fn assert_readable_with_its_record(file: &Path, count: usize, incident: &Value) -> Value {
    let read = read_mcap(file);
    assert_eq!(
        read["messages"].as_array().unwrap().len(),
        count,
        "{}: Python mcap reads every message",
        file.display()
    );
    let core = &read_with_mcap_core(&[file.to_path_buf()])[0];
    assert_eq!(
        core.indexed_messages,
        Some(core.stream_messages),
        "{}: @mcap/core's indexed reader finds every message through the index",
        file.display()
    );
    assert_eq!(core.indexed_digest.as_deref(), Some(&*core.stream_digest));
    assert!(core.stream_messages >= count as u64);
    let summary = {
        let bytes = std::fs::read(file).unwrap();
        let summary = mcap::Summary::read(&bytes).unwrap().expect("a summary");
        assert!(!summary.chunk_indexes.is_empty(), "chunked and indexed");
        summary.stats.unwrap().message_count
    };
    assert_eq!(summary, core.stream_messages);
    let record = (read["metadata"].as_array().unwrap().iter())
        .find(|m| m["name"] == "incident")
        .unwrap_or_else(|| panic!("{}: no incident record: {read:#}", file.display()))
        .clone();
    let entries = &record["metadata"];
    assert_eq!(entries["id"], incident["id"]);
    assert_eq!(entries["note"], incident["note"]);
    assert_eq!(entries["origin"], incident["origin"]);
    assert_eq!(entries["session"], incident["session"]);
    assert_eq!(entries["time"], ns(incident, "time_ns").to_string());
    let before = ns(incident, "time_ns") - ns(incident, "start_ns");
    let after = ns(incident, "end_ns") - ns(incident, "time_ns");
    assert_eq!(entries["before"], before.to_string());
    assert_eq!(entries["after"], after.to_string());
    record
}

/// Per topic, what the stop report says recd dropped or lost.
fn counted(stopped: &Value) -> BTreeMap<String, u64> {
    (stopped["topics"].as_array().unwrap().iter())
        .map(|t| {
            let count = |key: &str| t[key].as_u64().unwrap_or(0);
            (
                t["name"].as_str().unwrap().to_string(),
                count("dropped") + count("lost"),
            )
        })
        .collect()
}

fn file_name(path: &Path) -> String {
    path.file_name().unwrap().to_string_lossy().into_owned()
}

/// The sizes of every MCAP file under `dir`, recursively.
fn mcap_bytes(dir: &Path) -> u64 {
    let mut total = 0;
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            total += mcap_bytes(&path);
        } else if path.extension().is_some_and(|e| e == "mcap") {
            total += entry.metadata().unwrap().len();
        }
    }
    total
}

/// One camera `<prefix>camera/0` of `frame_size`-byte frames at `fps`, `count` frames,
/// publishing once recd subscribed.
fn camera_load(prefix: &str, frame_size: usize, fps: u32, count: u64) -> RecdLoad {
    RecdLoad::new(prefix)
        .cameras(1)
        .frame_size(frame_size)
        .fps(fps)
        .count(count)
        .duration(Duration::from_secs(60))
        .wait_subscribers(1)
}

/// The DDS domain of the ring test's publisher (no other test of this binary uses DDS).
const RING_DDS_DOMAIN: &str = "57";
/// The ring test's bound on the recordings.
const RING_MAX_TOTAL: u64 = 20 << 20;

#[test]
fn a_ring_keeps_each_incidents_window_cuts_it_exactly_and_uploads_it_first() {
    let s3 = SeaweedFs::start("recordings");
    let root = tempfile::tempdir().unwrap();
    let domain = Domain::new();
    let credentials = root.path().join("credentials");
    s3.credentials_file(&credentials);
    // Uploads at 1 MiB/s, slower than the 3 MB/s recorded: files wait in the queue, and
    // the cut files go before them.
    let config = format!(
        "max_total_size = \"20MiB\"\n\n[incidents]\nmax_pinned_size = \"16MiB\"\n\n[upload]\nendpoint = {endpoint:?}\nbucket = {bucket:?}\ncredentials_file = {credentials:?}\nvehicle_id = \"car-7\"\nprefix = \"fleet/{{vehicle}}/{{session}}\"\nmax_rate = \"1MiB\"\n",
        endpoint = s3.endpoint,
        bucket = s3.bucket,
    );
    let recd = Recd::start_configured(
        root.path(),
        &domain,
        &config,
        "dds_interfaces = [\"127.0.0.1\"]\n",
        &[],
    );
    recd.rec_json(&[
        "start",
        "--name",
        "ring",
        "--dds-domain",
        RING_DDS_DOMAIN,
        "--max-file-size",
        "1MiB",
        "--max-duration",
        "1s",
    ]);
    // A camera of 30 kB frames at 100 fps (3 MB/s, 90 MB in all: more than four rings
    // of 20 MiB), a latched topic at 10 Hz (iceoryx2 history: late joiners get its last
    // sample), and a DDS topic at 50 Hz from a process of its own.
    let frames = 3000;
    let camera = domain.load(
        &RecdLoad::new("ring/")
            .cameras(1)
            .frame_size(30_000)
            .fps(100)
            .count(frames)
            .buffer(64)
            .duration(Duration::from_secs(120))
            .wait_subscribers(1),
    );
    let latched = domain.load(
        &RecdLoad::new("ring/latched/")
            .cameras(0)
            .small_topics(1)
            .small_rate(10)
            .count(300)
            .history(1)
            .duration(Duration::from_secs(120))
            .wait_subscribers(1),
    );
    let dds = RecdLoad::new("ringdds_")
        .cameras(0)
        .small_topics(1)
        .small_rate(50)
        .small_size(200)
        .count(1500)
        .duration(Duration::from_secs(120))
        .dds(RING_DDS_DOMAIN.parse().unwrap(), "127.0.0.1")
        .spawn();
    let (camera_topic, latched_topic, dds_topic) =
        ("ring/camera/0", "ring/latched/small/0", "/ringdds_small_0");
    let written = |topic: &str| -> u64 {
        let status = recd.rec_json(&["status", "ring"]);
        (status[0]["topics"].as_array().into_iter().flatten())
            .filter(|t| t["name"] == topic)
            .filter_map(|t| t["written"].as_u64())
            .sum()
    };
    // Incident A from `rec trigger`, once every topic is recorded.
    assert!(
        wait_until(Duration::from_secs(60), || {
            written(camera_topic) >= 300 && written(latched_topic) >= 2 && written(dds_topic) >= 100
        }),
        "{}",
        recd.log()
    );
    let a = recd.rec_json(&[
        "trigger",
        "ring",
        "--before",
        "200ms",
        "--after",
        "100ms",
        "--note",
        "hard brake",
    ]);
    let a_id = a["id"].as_str().unwrap().to_string();
    assert_eq!(a["repeated"], false, "{a}");
    assert_eq!(
        ns(&a["incident"], "end_ns") - ns(&a["incident"], "start_ns"),
        300_000_000,
        "{a}"
    );
    assert!(!a["incident"]["pinned_files"].as_array().unwrap().is_empty());

    // Incident B as a fleet trigger gives it: a moment a second ago and an id, repeated.
    let camera_at_b = written(camera_topic) + 300;
    assert!(wait_until(Duration::from_secs(60), || written(
        camera_topic
    ) >= camera_at_b));
    let moment = (epoch_ns() - 1_000_000_000).to_string();
    let fleet = [
        "trigger", "ring", "--at", &moment, "--id", "fleet-42", "--before", "300ms", "--after",
        "200ms",
    ];
    let b = recd.rec_json(&fleet);
    assert_eq!(b["id"], "fleet-42");
    assert_eq!(b["time_ns"].as_u64().unwrap().to_string(), moment);
    let again = recd.rec_json(&fleet);
    assert_eq!(again["repeated"], true, "{again}");

    // Incident C, cut while the session goes on, then released.
    let camera_at_c = written(camera_topic) + 300;
    assert!(wait_until(Duration::from_secs(60), || written(
        camera_topic
    ) >= camera_at_c));
    let c = recd.rec_json(&[
        "trigger", "ring", "--before", "200ms", "--after", "100ms", "--note", "let go", "--wait",
    ]);
    assert_eq!(c["cut"], "cut", "{c}");
    let c_id = c["id"].as_str().unwrap().to_string();
    let c_pinned = paths(&c["pinned_files"]);
    assert!(!c_pinned.is_empty(), "{c}");
    let released = recd.rec(&["incidents", "release", &c_id]);
    assert!(released.status.success(), "{released:?}");
    let again = recd.rec(&["incidents", "release", &c_id]);
    assert!(
        String::from_utf8_lossy(&again.stderr).contains("released already"),
        "{again:?}"
    );

    let sent_camera = finish_load(camera).topics[0].sent;
    let sent_latched = finish_load(latched).topics[0].sent;
    let sent_dds = finish_load(dds).topics[0].sent;
    assert_eq!(
        (sent_camera, sent_latched, sent_dds),
        (frames, 300, 1500),
        "every publisher sent all"
    );
    let all_in = wait_until(Duration::from_secs(30), || {
        let status = recd.rec_json(&["status", "ring"]);
        [
            (camera_topic, sent_camera),
            (latched_topic, sent_latched),
            (dds_topic, sent_dds),
        ]
        .iter()
        .all(|(topic, sent)| {
            (status[0]["topics"].as_array().unwrap().iter())
                .filter(|t| t["name"] == *topic)
                .map(|t| ["written", "dropped", "lost"].map(|k| t[k].as_u64().unwrap_or(0)))
                .any(|[w, d, l]| w + d + l >= *sent)
        })
    });
    assert!(all_in, "{}", recd.log());
    let stopped = recd.rec_json(&["stop", "ring"]);
    let counted = counted(&stopped[0]);

    // Both incidents are cut, into one file per source family, named by id, note,
    // session and source.
    let a = wait_cut(&recd, "ring", &a_id);
    let b = wait_cut(&recd, "ring", "fleet-42");
    let data = root.path().join("data/incidents");
    let names = |incident: &Value| -> BTreeSet<String> {
        paths(&incident["cut_files"])
            .iter()
            .map(|p| {
                assert_eq!(p.parent(), Some(data.as_path()));
                file_name(p)
            })
            .collect()
    };
    assert_eq!(
        names(&a),
        BTreeSet::from([
            format!("{a_id}_hard-brake_ring_dds.mcap"),
            format!("{a_id}_hard-brake_ring_iceoryx2.mcap"),
        ])
    );
    assert_eq!(
        names(&b),
        BTreeSet::from([
            "fleet-42_ring_dds.mcap".to_string(),
            "fleet-42_ring_iceoryx2.mcap".to_string()
        ])
    );
    assert_eq!(a["origin"], "cli");
    assert_eq!(a["note"], "hard brake");
    assert_eq!(b["time_ns"].as_u64().unwrap().to_string(), moment);
    assert_eq!(ns(&b, "start_ns"), ns(&b, "time_ns") - 300_000_000);
    assert_eq!(ns(&b, "end_ns"), ns(&b, "time_ns") + 200_000_000);

    // Retention took more than three rings, never a file an incident pins.
    let listed = recd.listed("ring");
    let deleted: Vec<&Value> = (listed["files"].as_array().unwrap().iter())
        .filter(|f| f["state"] == "deleted")
        .collect();
    let deleted_bytes: u64 = deleted.iter().map(|f| ns(f, "bytes")).sum();
    assert!(
        deleted_bytes >= 3 * RING_MAX_TOTAL,
        "{deleted_bytes} bytes deleted\n{listed:#}"
    );
    let kept = kept_files(&recd, "ring");
    for incident in [&a, &b] {
        let pinned = paths(&incident["pinned_files"]);
        assert!(!pinned.is_empty(), "{incident:#}");
        for file in &pinned {
            assert!(file.exists(), "{} pinned but gone", file.display());
            assert!(kept.contains(file));
        }
    }
    // Nothing beyond the ring: once retention settled, the recordings and cut files are
    // within the bound (pinned files included).
    assert!(
        wait_until(Duration::from_secs(20), || mcap_bytes(
            &root.path().join("data")
        ) <= RING_MAX_TOTAL),
        "{} bytes on disk\n{}",
        mcap_bytes(&root.path().join("data")),
        recd.log()
    );
    let kept = kept_files(&recd, "ring");

    // Each cut holds exactly its window of what the publishers sent.
    for incident in [&a, &b] {
        let cut = assert_exact_cut(incident, &kept, &counted, &[latched_topic]);
        for topic in [camera_topic, dds_topic] {
            assert!(
                cut.get(topic).is_some_and(|m| m.len() > 5),
                "{topic}: {incident:#}"
            );
        }
        assert!(cut[camera_topic].iter().all(|m| m.sequence < sent_camera));
        assert!(cut[dds_topic].iter().all(|m| m.sequence < sent_dds));
        assert!(cut[latched_topic].iter().all(|m| m.sequence < sent_latched));
        for file in paths(&incident["cut_files"]) {
            let count = messages(&file).len();
            let record = assert_readable_with_its_record(&file, count, incident);
            assert_eq!(record["metadata"]["session"], "ring");
        }
    }
    let b_record = read_mcap(&paths(&b["cut_files"])[0]);
    assert!(
        (b_record["metadata"].as_array().unwrap().iter())
            .any(|m| m["name"] == "incident" && m["metadata"]["id"] == "fleet-42"),
        "{b_record:#}"
    );

    // The cut files went up before the session's files queued before them.
    let mut status = Value::Null;
    let cut_files: Vec<PathBuf> = [&a, &b]
        .iter()
        .flat_map(|i| paths(&i["cut_files"]))
        .collect();
    let uploaded = wait_until(Duration::from_secs(120), || {
        status = recd.rec_json(&["upload", "--status"]);
        cut_files.iter().all(|file| {
            (status["files"].as_array().unwrap().iter())
                .any(|e| e["path"] == file.to_str().unwrap() && e["state"] == "uploaded")
        })
    });
    assert!(uploaded, "{status:#}\n{}", recd.log());
    let entries = status["files"].as_array().unwrap();
    for file in &cut_files {
        let entry = (entries.iter())
            .find(|e| e["path"] == file.to_str().unwrap())
            .unwrap();
        let (queued, done) = (
            entry["queued_ns"].as_i64().unwrap(),
            entry["uploaded_ns"].as_i64().unwrap(),
        );
        let session_files = entries
            .iter()
            .filter(|e| !e["path"].as_str().unwrap().contains("/incidents/"));
        // At most the one file under way when the cut was queued ended meanwhile.
        let meanwhile = session_files
            .clone()
            .filter(|e| {
                e["uploaded_ns"]
                    .as_i64()
                    .is_some_and(|u| u > queued && u < done)
            })
            .count();
        assert!(meanwhile <= 1, "{}: {status:#}", file.display());
        // Files queued before it were still waiting when it was uploaded.
        assert!(
            session_files
                .clone()
                .any(|e| e["queued_ns"].as_i64().unwrap() < queued
                    && e["uploaded_ns"].as_i64().is_none_or(|u| u > done)),
            "{}: no session file waited behind it: {status:#}",
            file.display()
        );
    }
    let objects = s3.objects("fleet/car-7/ring/incidents/");
    for incident in [&a, &b] {
        for file in paths(&incident["cut_files"]) {
            let key = format!("fleet/car-7/ring/incidents/{}", file_name(&file));
            let object = (objects.iter())
                .find(|o| o.key == key)
                .unwrap_or_else(|| panic!("no {key} in {objects:?}"));
            assert_eq!(object.size, std::fs::metadata(&file).unwrap().len());
            let meta = &object.metadata;
            assert_eq!(meta["incident"], incident["id"].as_str().unwrap());
            assert_eq!(meta["incident_origin"], "cli");
            assert_eq!(meta["incident_time"], ns(incident, "time_ns").to_string());
            assert_eq!(meta["session"], "ring");
        }
    }

    // The released incident's files went the way of the ring.
    let c = incident(&recd, "ring", &c_id);
    assert_eq!(c["released"]["why"], "released", "{c:#}");
    for file in &c_pinned {
        let pinned_by_others = [&a, &b]
            .iter()
            .any(|i| paths(&i["pinned_files"]).contains(file));
        if !pinned_by_others {
            assert!(!file.exists(), "{} kept after its release", file.display());
        }
    }

    // Released, A's files are retention's again: a second session's load takes them.
    let a_pinned = paths(&a["pinned_files"]);
    let released = recd.rec(&["incidents", "release", &a_id]);
    assert!(released.status.success(), "{released:?}");
    recd.rec_json(&[
        "start",
        "--name",
        "after",
        "--topic",
        "after/*",
        "--no-upload",
        "--max-file-size",
        "1MiB",
    ]);
    let sent = finish_load(domain.load(&camera_load("after/", 100_000, 100, 400)));
    assert_eq!(sent.topics[0].sent, 400);
    let taken = wait_until(Duration::from_secs(30), || {
        a_pinned.iter().all(|file| !file.exists())
    });
    assert!(taken, "{a_pinned:?}\n{}", recd.log());
    for file in paths(&b["pinned_files"]) {
        assert!(file.exists(), "B still pins {}", file.display());
    }
    recd.rec_json(&["stop", "after"]);
}

#[test]
fn after_a_power_cut_the_pin_holds_and_the_window_is_cut() {
    let domain = Domain::new();
    let work = tempfile::tempdir().unwrap();
    let image = work.path().join("disk.img");
    ext4_image(&image, 256);
    let disk = Mount::at(&work.path().join("disk"), &image, "ext4", "loop");
    let mut recd = Recd::start_with(
        disk.path(),
        &domain,
        "min_free_space = \"16MiB\"\n[incidents]\nmax_pinned_size = \"128MiB\"",
        &[],
    );
    recd.rec_json(&[
        "start",
        "--name",
        "cut",
        "--topic",
        "cut/*",
        "--max-file-size",
        "2MiB",
    ]);
    let load = domain.load_in_own_group(&camera_load("cut/", 30_000, 100, 6000));
    // 3 MB/s: about 12 MB before the incident, in files of 2 MiB.
    assert!(recd.wait_written("cut", 400), "{}", recd.log());
    let taken = recd.rec_json(&["trigger", "cut", "--before", "1s", "--after", "8s"]);
    let id = taken["id"].as_str().unwrap().to_string();
    let (start, end) = (
        ns(&taken["incident"], "start_ns"),
        ns(&taken["incident"], "end_ns"),
    );
    // The power cut comes before the window's end.
    assert!(wait_until(Duration::from_secs(30), || epoch_ns()
        > start + 2_500_000_000));
    assert!(
        epoch_ns() < end,
        "the test was too slow to cut before the window's end"
    );
    recd.signal_and_wait(libc::SIGKILL, Duration::from_secs(5));
    let killed_ns = epoch_ns();
    let copy = work.path().join("after-the-cut.img");
    std::fs::copy(&image, &copy).unwrap();
    recd_testkit::kill_group(load);
    drop(recd);
    drop(disk);

    // "Reboot" with a bound the files that are left far exceed.
    let rebooted = Mount::at(&work.path().join("disk"), &copy, "ext4", "loop");
    let recd = Recd::start_with(
        rebooted.path(),
        &domain,
        "min_free_space = \"16MiB\"\nmax_total_size = \"4MiB\"",
        &[],
    );
    let cut = wait_cut(&recd, "cut", &id);
    assert_eq!(cut["released"], Value::Null);
    let pinned = paths(&cut["pinned_files"]);
    assert!(pinned.len() >= 2, "{cut:#}");
    // Retention took every file the window does not overlap, and none it does, though
    // what is left is beyond the bound. A file the catalog knew but the power cut left off
    // the disk (killed between the two) is missing, not deleted: there was nothing to take.
    assert!(
        wait_until(Duration::from_secs(20), || {
            let listed = recd.listed("cut");
            (listed["files"].as_array().unwrap().iter())
                .map(|f| (f, PathBuf::from(f["path"].as_str().unwrap())))
                .filter(|(_, path)| !pinned.contains(path) && !is_cut_file(path))
                .map(|(f, _)| f)
                .all(|f| f["state"] == "deleted" || f["state"] == "missing")
        }),
        "{:#}\n{}",
        recd.listed("cut"),
        recd.log()
    );
    let listed = recd.listed("cut");
    assert!(
        (listed["files"].as_array().unwrap().iter()).any(|f| f["state"] == "deleted"),
        "{listed:#}"
    );
    for file in &pinned {
        assert!(file.exists(), "{} pinned but deleted", file.display());
    }
    let on_disk: u64 = pinned
        .iter()
        .map(|f| std::fs::metadata(f).unwrap().len())
        .sum();
    assert!(on_disk > 4 << 20, "the pins hold beyond max_total_size");

    // The cut holds the window's messages up to the last the disk kept.
    let kept = kept_files(&recd, "cut");
    let cut_messages = assert_exact_cut(&cut, &kept, &BTreeMap::new(), &[]);
    let camera = &cut_messages["cut/camera/0"];
    let last = camera.last().unwrap().log_time;
    assert!(
        last > ns(&cut, "time_ns") && last < killed_ns,
        "the window's messages after T up to the crash are in the cut"
    );
    let recorded = by_sequence(&kept);
    let newest = recorded["cut/camera/0"].values().map(|m| m.log_time).max();
    assert_eq!(Some(last), newest, "up to the last message the disk kept");
    let file = &paths(&cut["cut_files"])[0];
    assert_readable_with_its_record(file, camera.len(), &cut);
}

#[test]
fn max_age_deletes_exactly_the_files_older_than_it_but_those_an_incident_pins() {
    let domain = Domain::new();
    let root = tempfile::tempdir().unwrap();
    let recd = Recd::start(root.path(), &domain);
    let max_age = 3_000_000_000u64;
    recd.rec_json(&[
        "start",
        "--name",
        "aged",
        "--topic",
        "aged/*",
        "--max-age",
        "3s",
        "--max-duration",
        "1s",
    ]);
    let load = domain.load(&camera_load("aged/", 10_000, 50, 500));
    assert!(recd.wait_written("aged", 100), "{}", recd.log());
    let taken = recd.rec_json(&["trigger", "aged", "--before", "500ms", "--after", "500ms"]);
    let id = taken["id"].as_str().unwrap().to_string();

    // Each file's newest message, read while the file is there; each deletion checked
    // against it as soon as it is seen.
    let mut last_log: BTreeMap<PathBuf, u64> = BTreeMap::new();
    let mut seen_deleted: BTreeSet<PathBuf> = BTreeSet::new();
    let mut watch = |recd: &Recd| {
        let listed = recd.listed("aged");
        let now = epoch_ns();
        for file in listed["files"].as_array().unwrap() {
            let path = PathBuf::from(file["path"].as_str().unwrap());
            if file["state"] == "complete" && !last_log.contains_key(&path) {
                if let Ok(bytes) = std::fs::read(&path) {
                    let summary = mcap::Summary::read(&bytes).unwrap().unwrap();
                    last_log.insert(path.clone(), summary.stats.unwrap().message_end_time);
                }
            }
            if file["state"] == "deleted" && seen_deleted.insert(path.clone()) {
                if let Some(last) = last_log.get(&path) {
                    assert!(
                        last + max_age <= now,
                        "{} deleted {} ms after its newest message",
                        path.display(),
                        (now - last) / 1_000_000
                    );
                }
            }
        }
    };
    let mut load = Some(load);
    while load.as_mut().unwrap().try_wait().unwrap().is_none() {
        watch(&recd);
        std::thread::sleep(Duration::from_millis(100));
    }
    finish_load(load.take().unwrap());
    let cut = wait_cut(&recd, "aged", &id);
    let pinned = paths(&cut["pinned_files"]);
    assert!(!pinned.is_empty());

    // With the load over, every file ages past max_age: all go but the one being
    // written and those the incident pins.
    let settled = wait_until(Duration::from_secs(30), || {
        watch(&recd);
        let listed = recd.listed("aged");
        let writing: Vec<PathBuf> = recd.rec_json(&["status", "aged"])[0]["current_files"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| PathBuf::from(f.as_str().unwrap()))
            .collect();
        (listed["files"].as_array().unwrap().iter()).all(|f| {
            let path = PathBuf::from(f["path"].as_str().unwrap());
            is_cut_file(&path)
                || (f["state"] == "deleted") != (pinned.contains(&path) || writing.contains(&path))
        })
    });
    assert!(settled, "{:#}\n{}", recd.listed("aged"), recd.log());
    assert!(seen_deleted.len() >= 5, "{seen_deleted:?}");
    let log = recd.log();
    for file in &seen_deleted {
        assert!(
            log.lines()
                .any(|l| l.contains("older than the session's --max-age")
                    && l.contains(&*file.to_string_lossy())),
            "{} deleted for its age: {log}",
            file.display()
        );
    }
    for file in &pinned {
        assert!(file.exists());
        let last = last_log.get(file).copied().unwrap_or(0);
        assert!(last + max_age < epoch_ns() || last == 0);
    }
    recd.rec_json(&["stop", "aged"]);
}

#[test]
fn an_incident_beyond_max_pinned_size_is_refused_naming_the_bound() {
    let domain = Domain::new();
    let root = tempfile::tempdir().unwrap();
    let recd = Recd::start_with(
        root.path(),
        &domain,
        "[incidents]\nmax_pinned_size = \"64KiB\"",
        &[],
    );
    recd.rec_json(&["start", "--name", "tight", "--topic", "tight/*"]);
    let load = domain.load(&camera_load("tight/", 10_000, 50, 100));
    assert!(recd.wait_written("tight", 50), "{}", recd.log());
    let refused = recd.rec(&["trigger", "tight", "--before", "1s", "--after", "1s"]);
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(!refused.status.success(), "{stderr}");
    assert!(stderr.contains("max_pinned_size"), "{stderr}");
    finish_load(load);
    let incidents = recd.rec_json(&["incidents"]);
    assert_eq!(incidents, serde_json::json!([]), "nothing is pinned");
    assert!(!root.path().join("data/incidents").exists());
    let stopped = recd.rec_json(&["stop", "tight"]);
    assert!(!stopped_files(&stopped).is_empty());
}

/// The DDS domain of the independent publisher's test.
const PYTHON_DDS_DOMAIN: &str = "58";
/// The longest a sample of the Python publisher takes to reach recd's files on loopback,
/// as this test assumes it (generous for a loaded 2-core machine).
const LATENCY_NS: u64 = 2_000_000_000;

/// The sequence number of a sample of `tests/python/dds_publish.py --kind blob --size
/// 1000`, its data checked against the pattern the publisher writes.
fn python_blob_sequence(cdr: &[u8]) -> u64 {
    assert!(cdr.len() >= 12, "a Blob sample of {} bytes", cdr.len());
    let seq = u32::from_le_bytes(cdr[4..8].try_into().unwrap()) as u64;
    let len = u32::from_le_bytes(cdr[8..12].try_into().unwrap()) as usize;
    assert_eq!(len, 1000, "sample {seq}");
    let data = &cdr[12..12 + len];
    let expected: Vec<u8> = (0..len)
        .map(|j| ((7 * j as u64 + seq) & 0xff) as u8)
        .collect();
    assert_eq!(data, &expected[..], "sample {seq}'s bytes");
    seq
}

#[test]
fn an_independent_publishers_samples_of_the_window_are_exactly_in_its_cut() {
    let domain = Domain::new();
    let root = tempfile::tempdir().unwrap();
    let recd = Recd::start_on_dds_loopback(root.path(), &domain);
    recd.rec_json(&[
        "start",
        "--name",
        "py",
        "--dds-domain",
        PYTHON_DDS_DOMAIN,
        "--no-iceoryx2",
        "--max-duration",
        "1s",
    ]);
    // A Cyclone DDS publisher none of us wrote: 800 samples at 100 Hz, each with the wall
    // clock it was written at.
    let publisher = dds_publish(&[
        "--domain",
        PYTHON_DDS_DOMAIN,
        "--topic",
        "rt/blob",
        "--kind",
        "blob",
        "--size",
        "1000",
        "--count",
        "800",
        "--rate",
        "100",
    ]);
    // Its record is read as it comes: a full pipe would stall it.
    let publisher = std::thread::spawn(move || dds_published(publisher, Duration::from_secs(90)));
    let written = || {
        let status = recd.rec_json(&["status", "py"]);
        (status[0]["topics"].as_array().unwrap().iter())
            .map(|t| t["written"].as_u64().unwrap_or(0))
            .sum::<u64>()
    };
    assert!(
        wait_until(Duration::from_secs(60), || written() >= 300),
        "the publisher's samples do not arrive: {:#}\n{}",
        recd.rec_json(&["status", "py"]),
        recd.log()
    );
    let taken = recd.rec_json(&[
        "trigger", "py", "--before", "3s", "--after", "2s", "--id", "py-1",
    ]);
    assert_eq!(taken["incident"]["id"], "py-1", "{taken}");
    let published = publisher.join().expect("the publisher's reader");
    assert_eq!(published.done["matched"], true, "{}", published.done);
    let incident = wait_cut(&recd, "py", "py-1");
    let stopped = recd.rec_json(&["stop", "py"]);
    let missing_allowed: u64 = counted(&stopped[0]).values().sum();
    let (start, end) = (ns(&incident, "start_ns"), ns(&incident, "end_ns"));

    let cut = paths(&incident["cut_files"]);
    assert_eq!(cut.len(), 1, "one DDS file: {incident:#}");
    assert!(file_name(&cut[0]).ends_with("_py_dds.mcap"), "{cut:?}");
    let bytes = std::fs::read(&cut[0]).unwrap();
    let mut in_cut = BTreeSet::new();
    for message in mcap::MessageStream::new(&bytes).unwrap() {
        let message = message.unwrap();
        if message.channel.topic == HEALTH {
            continue;
        }
        assert!(
            (start..=end).contains(&message.log_time),
            "a message logged outside the window"
        );
        let seq = python_blob_sequence(&message.data);
        assert!(in_cut.insert(seq), "sample {seq} twice in the cut");
    }
    // Against the publisher's own record: a sample written after the window's end cannot
    // be in it (recd logs a sample when it receives it); one written within the window
    // early enough to arrive before its end must be; one written well before its start
    // must not.
    let mut missing = Vec::new();
    for sample in &published.samples {
        let (i, sent) = (sample["i"].as_u64().unwrap(), ns(sample, "t_ns"));
        if sent > end || sent + LATENCY_NS < start {
            assert!(
                !in_cut.contains(&i),
                "sample {i} sent outside the window is in the cut"
            );
        } else if sent >= start && sent + LATENCY_NS <= end && !in_cut.contains(&i) {
            missing.push(i);
        }
    }
    assert!(
        missing.len() as u64 <= missing_allowed,
        "samples of the window missing from the cut: {missing:?} (recd counted {missing_allowed} dropped or lost)"
    );
    assert!(in_cut.len() >= 250, "about 5 s of 100 Hz: {}", in_cut.len());
    assert_readable_with_its_record(&cut[0], in_cut.len() + bytes_health(&bytes), &incident);
}

/// Messages of recd's health channel in an MCAP file's bytes.
fn bytes_health(bytes: &[u8]) -> usize {
    mcap::MessageStream::new(bytes)
        .unwrap()
        .filter_map(Result::ok)
        .filter(|m| m.channel.topic == HEALTH)
        .count()
}
