//! `rec play` of Zenoh (rmw_zenoh) recordings: a file with a channel as recd records one
//! from rmw_zenoh is played into a Zenoh router of Python's `eclipse-zenoh` (none of us
//! wrote it; it listens on a port of loopback of its own, so tests running at once do not
//! meet) that subscribes and watches liveliness tokens as an rmw_zenoh node does. Each
//! message must arrive on the recorded key in the domain played into (or under its
//! remapped name), byte for byte, with rmw_zenoh's attachment (sequence numbers from 1,
//! the time it left, the GID of the publisher's token) after a liveliness token that
//! announces the publisher with the recorded type, type hash and QoS.

#![cfg(feature = "zenoh")]

use std::collections::BTreeMap;
use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use recd_engine::zenoh_wire::{gid_of, Attachment};
use recd_testkit::{binary, wait_bounded, Published, Script};
use serde_json::Value;

const TYPE: &str = "std_msgs::msg::dds_::String_";
const HASH: &str = "RIHS01_df668c740482bbd48fb39d76a70dfd4bd59db1288021743503259e948f6b1a18";
const TEXTS: [&str; 5] = ["hello", "zenoh", "from", "a recording", "!"];
/// One publisher's offer: reliable, volatile, keep last 7, the rest rmw's defaults.
const OFFERED: &str = "- history: keep_last
  depth: 7
  reliability: reliable
  durability: volatile
  deadline:
    sec: 9223372036
    nsec: 854775807
  lifespan:
    sec: 9223372036
    nsec: 854775807
  liveliness: automatic
  liveliness_lease_duration:
    sec: 9223372036
    nsec: 854775807
  avoid_ros_namespace_conventions: false";
/// Its QoS field in an rmw_zenoh token.
const OFFERED_FIELD: &str = "::,7:,:,:,,";

/// A `std_msgs/msg/String` as rmw_zenoh publishes it: XCDR1 little endian, header first.
fn cdr_string(text: &str) -> Vec<u8> {
    let mut cdr = vec![0, 1, 0, 0];
    cdr.extend_from_slice(&(text.len() as u32 + 1).to_le_bytes());
    cdr.extend_from_slice(text.as_bytes());
    cdr.push(0);
    while cdr.len() % 4 != 0 {
        cdr.push(0);
    }
    cdr
}

/// A file as recd records `/chatter` from rmw_zenoh in domain 0: [`TEXTS`] 20 ms apart.
fn zenoh_file(dir: &Path) -> PathBuf {
    let path = dir.join("chatter_zenoh_0001.mcap");
    let mut writer = mcap::WriteOptions::new()
        .profile("ros2")
        .create(BufWriter::new(File::create(&path).unwrap()))
        .unwrap();
    let schema = writer
        .add_schema("std_msgs/msg/String", "ros2msg", b"string data\n")
        .unwrap();
    let metadata = BTreeMap::from(
        [
            ("zenoh.key_expr", format!("0/chatter/{TYPE}/{HASH}")),
            ("zenoh.domain", "0".to_string()),
            ("zenoh.type_name", TYPE.to_string()),
            ("topic_type_hash", HASH.to_string()),
            ("offered_qos_profiles", OFFERED.to_string()),
        ]
        .map(|(k, v)| (k.to_string(), v)),
    );
    let channel = writer
        .add_channel(schema, "/chatter", "cdr", &metadata)
        .unwrap();
    let start = 1_700_000_000_000_000_000u64;
    for (i, text) in TEXTS.iter().enumerate() {
        let time = start + i as u64 * 20_000_000;
        let header = mcap::records::MessageHeader {
            channel_id: channel,
            sequence: i as u32 + 1,
            log_time: time,
            publish_time: time,
        };
        writer
            .write_to_known_channel(&header, &cdr_string(text))
            .unwrap();
    }
    writer.finish().unwrap();
    path
}

/// A loopback port free now.
fn free_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().port()
}

/// The Python router listening on `endpoint`, subscribed to every key, waiting for
/// `count` samples; ready.
fn router(endpoint: &str, count: usize) -> Script {
    let count = count.to_string();
    let script = Script::spawn(
        "zenoh_subscribe.py",
        &["--listen", endpoint, "--count", &count, "--timeout", "60"],
    );
    assert!(
        script.wait_ready(Duration::from_secs(30)),
        "the Zenoh router did not start: {:?}",
        script.lines()
    );
    script
}

/// `rec play FILE ARGS --json`, bounded.
fn rec_play(dir: &Path, file: &Path, args: &[&str]) -> Output {
    let child = Command::new(binary("rec"))
        .env("RECD_SOCKET", dir.join("no-recd.sock"))
        .arg("play")
        .arg(file)
        .args(args)
        .arg("--json")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("rec starts");
    wait_bounded(child, Duration::from_secs(60))
}

fn now_ns() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn unhex(text: &str) -> Vec<u8> {
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).unwrap())
        .collect()
}

/// What the router saw: the data samples and the token changes, with their places in
/// the order it saw everything.
struct Seen {
    samples: Vec<(usize, Value)>,
    tokens: Vec<(usize, Value)>,
}

fn seen(published: &Published) -> Seen {
    assert_eq!(published.done["timed_out"], false, "{}", published.done);
    let lines = published.samples.iter().cloned().enumerate();
    let (samples, tokens): (Vec<_>, Vec<_>) = lines.partition(|(_, l)| l.get("sample").is_some());
    Seen { samples, tokens }
}

/// Checks that the router got [`TEXTS`] on `key` as one rmw_zenoh publisher announced
/// for `ros_topic` in `domain` sends them, sent between `before` and `after`.
fn assert_sent_as_rmw_zenoh(
    seen: &Seen,
    key: &str,
    domain: &str,
    ros_topic: &str,
    sent: (u64, u64),
) {
    assert_eq!(seen.samples.len(), TEXTS.len(), "{:?}", seen.samples);
    let mut gids = Vec::new();
    let mut times = Vec::new();
    for (i, ((_, sample), text)) in seen.samples.iter().zip(TEXTS).enumerate() {
        assert_eq!(sample["key"], key, "{sample}");
        assert_eq!(sample["kind"], "put", "{sample}");
        assert_eq!(
            sample["payload"],
            hex(&cdr_string(text)),
            "byte for byte: {sample}"
        );
        let attachment = unhex(sample["attachment"].as_str().expect("an attachment"));
        assert_eq!(attachment.len(), 33, "rmw_zenoh's layout: {sample}");
        let sequence = i64::from_le_bytes(attachment[0..8].try_into().unwrap());
        assert_eq!(sequence, i as i64 + 1, "sequence numbers from 1: {sample}");
        let time = i64::from_le_bytes(attachment[8..16].try_into().unwrap()) as u64;
        assert!(
            sent.0 <= time && time <= sent.1,
            "sent now, not when recorded: {sample}"
        );
        assert_eq!(attachment[16], 0x10, "the GID's length: {sample}");
        let parsed = Attachment::from_bytes(&attachment).expect("recd's reader reads it");
        assert_eq!(parsed.sequence, sequence as u64);
        gids.push(parsed.gid);
        times.push(time);
    }
    assert!(
        gids.windows(2).all(|g| g[0] == g[1]),
        "one publisher: {gids:?}"
    );
    assert!(times.windows(2).all(|t| t[0] <= t[1]), "{times:?}");
    // Recorded 20 ms apart: played at that pace.
    let span = (times[times.len() - 1] - times[0]) as f64 / 1e9;
    assert!((0.06..0.5).contains(&span), "{span} s for 80 ms recorded");

    let put = |kind: &str| -> Vec<(usize, String)> {
        seen.tokens
            .iter()
            .filter(|(_, t)| t["kind"] == kind)
            .map(|(at, t)| (*at, t["token"].as_str().unwrap().to_string()))
            .collect()
    };
    let publishers: Vec<(usize, String)> = put("put")
        .into_iter()
        .filter(|(_, t)| t.contains("/MP/"))
        .collect();
    assert_eq!(publishers.len(), 1, "{:?}", seen.tokens);
    let (announced_at, token) = &publishers[0];
    let chunks: Vec<&str> = token.split('/').collect();
    assert_eq!(chunks.len(), 13, "{token}");
    assert_eq!(&chunks[..2], ["@ros2_lv", domain], "{token}");
    let zid = chunks[2];
    assert_eq!(
        &chunks[3..9],
        ["0", "1", "MP", "%", "%", "rec_play"],
        "{token}"
    );
    assert_eq!(chunks[9], ros_topic.replace('/', "%"), "{token}");
    assert_eq!(&chunks[10..], [TYPE, HASH, OFFERED_FIELD], "{token}");
    assert_eq!(
        gid_of(token),
        gids[0],
        "the GID is the XXH3-128 of the token"
    );
    let node = format!("@ros2_lv/{domain}/{zid}/0/0/NN/%/%/rec_play");
    assert!(
        put("put").iter().any(|(_, t)| *t == node),
        "{:?}",
        seen.tokens
    );
    let first_sample = seen.samples[0].0;
    assert!(
        *announced_at < first_sample,
        "announced before the first message"
    );
    // Not "after the last message": Zenoh sends declarations at its Control priority,
    // ahead of data still queued at Data priority, so a subscriber may see a publisher
    // leave before its last samples arrive (rmw_zenoh's publishers alike). That every
    // sample arrived is checked above.
    let gone = put("delete");
    assert!(
        gone.iter().any(|(at, t)| t == token && at > announced_at),
        "the publisher leaves the graph when the playback ends: {:?}",
        seen.tokens
    );
}

fn report(output: &Output) -> Value {
    assert!(
        output.status.success(),
        "rec play failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).expect("rec play prints JSON")
}

/// One replay into a router of its own (see [`play_into_router`]).
struct PlayedInto {
    /// `rec play`'s report.
    played: Value,
    /// What the router's subscriber saw.
    seen: Seen,
    /// When the replay began and ended, ns since the Unix epoch.
    window: (u64, u64),
    /// The router's endpoint.
    endpoint: String,
}

/// Plays `file` with `args`, connected to a router of its own whose subscriber it waits
/// for (up to 20 s), and collects what the router saw.
fn play_into_router(dir: &Path, file: &Path, args: &[&str]) -> PlayedInto {
    let endpoint = format!("tcp/127.0.0.1:{}", free_port());
    let router = router(&endpoint, TEXTS.len());
    let before = now_ns();
    let mut all = args.to_vec();
    all.extend(["--zenoh-connect", &endpoint, "--wait-subscribers", "20s"]);
    let played = report(&rec_play(dir, file, &all));
    let after = now_ns();
    let seen = seen(&router.finish(Duration::from_secs(30)));
    PlayedInto {
        played,
        seen,
        window: (before, after),
        endpoint,
    }
}

#[test]
fn a_zenoh_recording_plays_as_rmw_zenoh_publishes_into_the_domain_given() {
    let dir = tempfile::tempdir().unwrap();
    let file = zenoh_file(dir.path());
    let PlayedInto {
        played,
        seen,
        window,
        ..
    } = play_into_router(dir.path(), &file, &["--zenoh-domain", "5"]);

    let topics = played["topics"].as_array().unwrap();
    assert_eq!(topics.len(), 1, "{played}");
    assert_eq!(topics[0]["name"], "/chatter", "{played}");
    assert_eq!(topics[0]["sent"], 5, "{played}");
    assert_eq!(topics[0]["failed"], 0, "{played}");
    assert_eq!(played["skipped"], serde_json::json!({}), "{played}");
    // Subscribed to every key: only domain 5's came, none of the recorded domain 0.
    let key = format!("5/chatter/{TYPE}/{HASH}");
    assert_sent_as_rmw_zenoh(&seen, &key, "5", "/chatter", window);
}

#[test]
fn a_remapped_topic_plays_under_its_new_name_and_no_zenoh_leaves_it_out() {
    let dir = tempfile::tempdir().unwrap();
    let file = zenoh_file(dir.path());
    let args = ["--zenoh-domain", "7", "--remap", "/chatter:=/robot/talk"];
    let PlayedInto {
        played,
        seen,
        window,
        endpoint,
    } = play_into_router(dir.path(), &file, &args);
    assert_eq!(played["topics"][0]["sent"], 5, "{played}");
    let key = format!("7/robot/talk/{TYPE}/{HASH}");
    assert_sent_as_rmw_zenoh(&seen, &key, "7", "/robot/talk", window);

    let left_out = rec_play(
        dir.path(),
        &file,
        &["--no-zenoh", "--zenoh-connect", &endpoint],
    );
    assert!(!left_out.status.success());
    let stderr = String::from_utf8_lossy(&left_out.stderr);
    assert!(
        stderr.contains("nothing to play: /chatter (left out by --no-zenoh)"),
        "{stderr}"
    );
}
