//! Topic health on the real recd and rec, with an iceoryx2 publisher of the Python
//! bindings whose silences and slow spans the tests script: a stall is shown live and
//! logged once, a halved rate is slow, a required topic that never comes is missing and
//! fails `rec stop` (exit 5), and every file carries the health of its span.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use recd_health::{FileHealthSummary, HealthEvent, HealthState, Verdict, HEALTH_CHANNEL};
use recd_testkit::{recorded_queue_depth, Domain, Hogs, Recd, RecdLoad, Script};
use serde_json::Value;

const MS: u64 = 1_000_000;

/// The tests measure times to within 20 ms, and one of them loads both cores: one at a
/// time.
static MACHINE: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn one_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    MACHINE
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// The depth of the publishers' queues (`subscriber_max_buffer_size`), as an integrator
/// configures a recorded service: 320 ms at 50 Hz. With iceoryx2's default of 2, a receive
/// pass one period late on a loaded machine finds a queue full, and `rec stop` exits 4
/// (unknown loss) with nothing lost: not what these tests are about.
const QUEUE_DEPTH: usize = 16;

/// `tests/python/shm_health.py` in `domain`, publishing `services` at 50 Hz into queues
/// of [`QUEUE_DEPTH`].
fn publisher(domain: &Domain, services: &str, seconds: u32, extra: &[&str]) -> Script {
    let seconds = seconds.to_string();
    let depth = QUEUE_DEPTH.to_string();
    let mut args = vec![
        "--prefix",
        &domain.prefix,
        "--services",
        services,
        "--rate",
        "50",
        "--duration",
        &seconds,
        "--linger",
        "0",
        "--buffer",
        &depth,
    ];
    args.extend_from_slice(extra);
    Script::spawn("shm_health.py", &args)
}

/// The health of topic `name` in `rec status SESSION --json`.
fn live_state(recd: &Recd, session: &str, name: &str) -> Option<(HealthState, Value)> {
    let status = recd.rec_json(&["status", session]);
    let topic = status[0]["topics"]
        .as_array()?
        .iter()
        .find(|t| t["name"] == name)?
        .clone();
    let state = serde_json::from_value(topic["health"]["state"].clone()).ok()?;
    Some((state, topic["health"].clone()))
}

/// The `recd/health` messages (with their log times) and the health record of a file.
fn file_health(path: &Path) -> (Vec<(u64, HealthEvent)>, FileHealthSummary) {
    let bytes = std::fs::read(path).unwrap();
    let events = mcap::MessageStream::new(&bytes)
        .unwrap()
        .map(Result::unwrap)
        .filter(|m| m.channel.topic == HEALTH_CHANNEL)
        .map(|m| (m.log_time, serde_json::from_slice(&m.data).unwrap()))
        .collect();
    let summary = mcap::Summary::read(&bytes).unwrap().unwrap();
    let index = summary
        .metadata_indexes
        .iter()
        .find(|i| i.name.starts_with("health/"))
        .expect("a health record");
    let entries: BTreeMap<String, String> = mcap::read::metadata(&bytes, index).unwrap().metadata;
    (events, FileHealthSummary::from_metadata(&entries).unwrap())
}

/// `tests/python/validate_health.py` on `path`: its JSON line.
fn validate_health(path: &Path) -> Value {
    let output = std::process::Command::new(recd_testkit::python())
        .arg(recd_testkit::python_file("validate_health.py"))
        .arg(path)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "validate_health.py: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).unwrap()
}

fn start(recd: &Recd, session: &str, expect: &[&str]) {
    let mut args = vec!["start", "--name", session, "--topic", "h/*"];
    for rule in expect {
        args.extend(["--expect", rule]);
    }
    recd.rec_json(&args);
}

/// `rec stop SESSION`, which must exit 0 with nothing marked `unknown_loss` (the queues
/// hold [`QUEUE_DEPTH`] samples, which the recorded channels say): the session's report
/// and its files.
fn stop(recd: &Recd, session: &str) -> (Value, Vec<PathBuf>) {
    let stopped = recd.stop(session);
    stopped.assert_clean();
    let files = stopped.files();
    for topic in stopped.counts().keys() {
        assert_eq!(
            recorded_queue_depth(&files[0], topic),
            QUEUE_DEPTH,
            "{topic}"
        );
    }
    (stopped.session, files)
}

#[test]
fn a_silence_is_stalled_live_logged_once_and_mapped_in_the_file() {
    let _machine = one_at_a_time();
    let root = tempfile::tempdir().unwrap();
    let domain = Domain::new();
    let recd = Recd::start(root.path(), &domain);
    start(&recd, "stall", &["h/*:max_gap=200ms"]);
    let script = publisher(&domain, "h/a,h/b,h/c,h/d", 8, &["--silence", "h/b:2.0:0.7"]);

    // Watch h/b: stalled during its silence, ok after it.
    let mut seen: Vec<(HealthState, Value)> = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(15);
    while Instant::now() < deadline {
        if let Some(state) = live_state(&recd, "stall", "h/b") {
            let back =
                state.0 == HealthState::Ok && seen.iter().any(|(s, _)| *s == HealthState::Stalled);
            seen.push(state);
            if back {
                break;
            }
        }
        std::thread::sleep(Duration::from_millis(25));
    }
    let stalled = seen
        .iter()
        .find(|(s, _)| *s == HealthState::Stalled)
        .unwrap_or_else(|| panic!("rec status never showed h/b stalled: {seen:?}"));
    assert_eq!(
        seen.last().unwrap().0,
        HealthState::Ok,
        "and ok after: {seen:?}"
    );
    // A second of steady publishing after, then stop while it still publishes.
    std::thread::sleep(Duration::from_secs(1));
    let (_, files) = stop(&recd, "stall");
    let published = script.finish(Duration::from_secs(20));
    let silence = &published.done["silences"][0];
    let last_before = silence["last_before_ns"].as_u64().unwrap();
    let first_after = silence["first_after_ns"].as_u64().unwrap();
    let since = stalled.1["since_ns"].as_u64().unwrap();
    assert!(
        since.abs_diff(last_before) <= 20 * MS,
        "since {since}, last sample {last_before}"
    );

    let log = recd.log();
    let warns: Vec<_> = log
        .lines()
        .filter(|l| l.contains("WARN") && l.contains("topic h/b stalled"))
        .collect();
    let infos: Vec<_> = log
        .lines()
        .filter(|l| l.contains("INFO") && l.contains("topic h/b back after a gap"))
        .collect();
    assert_eq!((warns.len(), infos.len()), (1, 1), "{log}");
    assert!(
        warns[0].contains("session=\"stall\"") || warns[0].contains("session=stall"),
        "{}",
        warns[0]
    );
    for other in ["h/a", "h/c", "h/d"] {
        assert!(!log.contains(&format!("topic {other} stalled")), "{log}");
    }

    assert_eq!(files.len(), 1);
    let (events, health) = file_health(&files[0]);
    let of_b: Vec<_> = events.iter().filter(|(_, e)| e.topic == "h/b").collect();
    assert_eq!(of_b.len(), 2, "{events:?}");
    let (detected_at, to_stalled) = of_b[0];
    assert_eq!(
        (to_stalled.from, to_stalled.to),
        (HealthState::Ok, HealthState::Stalled)
    );
    assert!(
        detected_at - to_stalled.since_ns <= 300 * MS,
        "detected {} ms after the last sample",
        (detected_at - to_stalled.since_ns) / MS
    );
    assert_eq!(of_b[1].1.to, HealthState::Ok);
    let gap = of_b[1].1.gap_ns.unwrap();
    assert!(
        gap.abs_diff(first_after - last_before) <= 20 * MS,
        "gap {gap}"
    );
    assert_eq!(events.len(), 2, "no other topic changed: {events:?}");

    assert_eq!(health.verdict, Verdict::Degraded);
    let b = &health.topics["h/b"];
    assert_eq!(b.gaps, 1);
    let [start, end] = b.gap_map[0];
    assert!(
        start.abs_diff(last_before) <= 20 * MS,
        "gap start {start} vs {last_before}"
    );
    assert!(
        end.abs_diff(first_after) <= 20 * MS,
        "gap end {end} vs {first_after}"
    );
    for other in ["h/a", "h/c", "h/d"] {
        assert_eq!(
            health.topics[other].gaps, 0,
            "{other}: {:?}",
            health.topics[other]
        );
    }
    // Read independently: the Python mcap reader, the schema checked as JSON Schema and
    // every message validated against it.
    let checked = validate_health(&files[0]);
    assert_eq!(checked["messages"], 2, "{checked}");
    assert_eq!(
        checked["to"],
        serde_json::json!(["stalled", "ok"]),
        "{checked}"
    );
    assert_eq!(checked["schema_encoding"], "jsonschema", "{checked}");
    assert_eq!(checked["message_encoding"], "json", "{checked}");
    assert_eq!(checked["verdict"], "degraded", "{checked}");
    // And as Foxglove reads it: @mcap/core, each message validated by ajv.
    let core = recd_testkit::validate_health_with_mcap_core(&files[0]);
    assert_eq!(core["messages"], 2, "{core}");
    assert_eq!(core["to"], serde_json::json!(["stalled", "ok"]), "{core}");
    assert_eq!(core["schema_encoding"], "jsonschema", "{core}");
    let listed = recd.listed("stall");
    assert_eq!(listed["health"], "degraded", "{listed}");
    assert_eq!(listed["files"][0]["health"], "degraded", "{listed}");
}

#[test]
fn a_halved_rate_is_slow_live_and_in_the_file() {
    let _machine = one_at_a_time();
    let root = tempfile::tempdir().unwrap();
    let domain = Domain::new();
    let recd = Recd::start(root.path(), &domain);
    start(&recd, "slow", &["h/*:40hz,max_gap=500ms"]);
    let script = publisher(&domain, "h/a,h/b", 8, &["--slow", "h/b:1.5:2.0"]);
    let mut seen = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(15);
    while Instant::now() < deadline {
        if let Some((state, _)) = live_state(&recd, "slow", "h/b") {
            let back = state == HealthState::Ok && seen.contains(&HealthState::Slow);
            seen.push(state);
            if back {
                break;
            }
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(seen.contains(&HealthState::Slow), "never slow: {seen:?}");
    assert_eq!(seen.last(), Some(&HealthState::Ok), "{seen:?}");
    let (_, files) = stop(&recd, "slow");
    drop(script);
    let (events, health) = file_health(&files[0]);
    let changes: Vec<_> = events
        .iter()
        .map(|(_, e)| (e.topic.as_str(), e.to))
        .collect();
    assert_eq!(
        changes,
        [("h/b", HealthState::Slow), ("h/b", HealthState::Ok)]
    );
    assert!(
        health.topics["h/b"].slow_windows >= 1,
        "{:?}",
        health.topics["h/b"]
    );
    assert_eq!(
        health.topics["h/a"].slow_windows, 0,
        "{:?}",
        health.topics["h/a"]
    );
    assert_eq!(health.verdict, Verdict::Degraded);
}

#[test]
fn a_required_topic_that_never_comes_is_missing_and_fails_rec_stop() {
    let _machine = one_at_a_time();
    let root = tempfile::tempdir().unwrap();
    let domain = Domain::new();
    let recd = Recd::start(root.path(), &domain);
    start(&recd, "lacking", &["h/never:required", "h/a:required"]);
    let _script = publisher(&domain, "h/a", 20, &[]);
    let missing = recd_testkit::wait_until(Duration::from_secs(10), || {
        let status = recd.rec_json(&["status", "lacking"]);
        status[0]["required"].as_array().is_some_and(|r| {
            r.iter()
                .any(|r| r["pattern"] == "h/never" && r["state"] == "missing")
        })
    });
    assert!(
        missing,
        "h/never never missing: {}",
        recd.rec_json(&["status", "lacking"])
    );
    let text = String::from_utf8(recd.rec(&["status", "lacking"]).stdout).unwrap();
    assert!(text.contains("missing: h/never"), "{text}");
    let output = recd.rec(&["stop", "lacking"]);
    assert_eq!(
        output.status.code(),
        Some(5),
        "{}",
        String::from_utf8_lossy(&output.stdout)
    );
    let text = String::from_utf8(output.stdout).unwrap();
    assert!(text.contains("h/never"), "{text}");
    assert!(!text.contains("h/a: missing"), "{text}");
    let files = recd.listed("lacking")["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| PathBuf::from(f["path"].as_str().unwrap()))
        .collect::<Vec<_>>();
    let (events, health) = file_health(&files[0]);
    assert_eq!(health.verdict, Verdict::Missing);
    assert_eq!(health.missing, ["h/never"]);
    assert!(events
        .iter()
        .any(|(_, e)| e.topic == "h/never" && e.to == HealthState::Missing));
    assert_eq!(recd.listed("lacking")["health"], "missing");

    // Everything it requires came: rec stop exits 0.
    start(&recd, "complete", &["h/a:required"]);
    std::thread::sleep(Duration::from_millis(6000));
    let (stopped, _) = stop(&recd, "complete");
    assert_eq!(stopped["health"]["verdict"], "ok", "{stopped}");
}

/// Waits until topic `name` of `session` was seen stalled and then ok again.
fn wait_stall_and_back(recd: &Recd, session: &str, name: &str) {
    let mut stalled = false;
    let back = recd_testkit::wait_until(Duration::from_secs(15), || {
        match live_state(recd, session, name).map(|(state, _)| state) {
            Some(HealthState::Stalled) => stalled = true,
            Some(HealthState::Ok) if stalled => return true,
            _ => {}
        }
        false
    });
    assert!(back, "{name} never stalled and came back");
}

#[test]
fn a_trigger_window_carries_the_health_of_its_span_only() {
    let _machine = one_at_a_time();
    let root = tempfile::tempdir().unwrap();
    let domain = Domain::new();
    let recd = Recd::start(root.path(), &domain);
    recd.rec_json(&[
        "start",
        "--name",
        "pre",
        "--topic",
        "h/*",
        "--pre-trigger",
        "10s",
        "--expect",
        "h/*:max_gap=200ms",
    ]);
    let _script = publisher(&domain, "h/a,h/b", 12, &["--silence", "h/b:1.5:0.7"]);
    wait_stall_and_back(&recd, "pre", "h/b");
    std::thread::sleep(Duration::from_millis(1500));
    // A window over the silence, then one after it.
    let over = recd.rec_json(&[
        "trigger", "pre", "--before", "4s", "--after", "0s", "--wait",
    ]);
    std::thread::sleep(Duration::from_millis(1500));
    let after = recd.rec_json(&[
        "trigger", "pre", "--before", "1s", "--after", "0s", "--wait",
    ]);
    stop(&recd, "pre");
    let path = |triggered: &Value| PathBuf::from(triggered["files"][0]["path"].as_str().unwrap());
    let (_, over) = file_health(&path(&over));
    let (_, after) = file_health(&path(&after));
    assert_eq!(over.topics["h/b"].gaps, 1, "{:?}", over.topics["h/b"]);
    assert_eq!(over.verdict, Verdict::Degraded);
    assert_eq!(after.topics["h/b"].gaps, 0, "{:?}", after.topics["h/b"]);
    assert_eq!(after.topics["h/a"].gaps, 0);
    assert_eq!(after.verdict, Verdict::Ok);
    // About a second of 50 Hz: its span only.
    let samples = after.topics["h/b"].samples;
    assert!((40..=60).contains(&samples), "{samples}");
}

#[test]
fn a_paused_span_is_no_gap() {
    let _machine = one_at_a_time();
    let root = tempfile::tempdir().unwrap();
    let domain = Domain::new();
    let recd = Recd::start(root.path(), &domain);
    start(&recd, "pausing", &["h/*:max_gap=200ms"]);
    let _script = publisher(&domain, "h/a,h/b", 12, &[]);
    assert!(recd.wait_written("pausing", 50));
    recd.rec_json(&["pause", "pausing"]);
    std::thread::sleep(Duration::from_millis(1000));
    recd.rec_json(&["resume", "pausing"]);
    std::thread::sleep(Duration::from_millis(1000));
    let (stopped, files) = stop(&recd, "pausing");
    let paused: u64 = (stopped["topics"].as_array().unwrap().iter())
        .map(|t| t["paused"].as_u64().unwrap())
        .sum();
    assert!(
        paused > 50,
        "a second of both topics was not written: {paused}"
    );
    let (events, health) = file_health(&files[0]);
    assert!(events.is_empty(), "the topics kept publishing: {events:?}");
    for topic in ["h/a", "h/b"] {
        assert_eq!(
            health.topics[topic].gaps, 0,
            "{topic}: {:?}",
            health.topics[topic]
        );
    }
    assert_eq!(health.verdict, Verdict::Ok);
}

#[test]
fn steady_topics_on_a_busy_machine_raise_no_alarm() {
    let _machine = one_at_a_time();
    let root = tempfile::tempdir().unwrap();
    let domain = Domain::new();
    let recd = Recd::start(root.path(), &domain);
    // No rule: every topic learns its own expectation.
    start(&recd, "steady", &[]);
    let _hogs = Hogs::cpu(2);
    let mut load = domain.load_in_own_group(
        &RecdLoad::new("h/steady/")
            .cameras(2)
            .frame_size(640 * 480 * 3)
            .fps(30)
            .small_topics(20)
            .small_rate(500)
            .count(1_000_000)
            .duration(Duration::from_secs(90))
            .wait_subscribers(1),
    );
    std::thread::sleep(Duration::from_secs(60));
    let status = recd.rec_json(&["status", "steady"]);
    // recd-load's queues: 16 frames, 256 small messages (sequence numbers count any loss).
    let stopped = recd.stop("steady");
    let _ = load.kill();
    let _ = load.wait();
    stopped.assert_clean();
    let files = stopped.files();
    let topics = status[0]["topics"].as_array().unwrap();
    assert_eq!(topics.len(), 22, "{status}");
    for topic in topics {
        let health = &topic["health"];
        assert_eq!(health["state"], "ok", "learnt and ok: {topic}");
        assert_eq!(
            (health["stalls"].as_u64(), health["slow_spells"].as_u64()),
            (Some(0), Some(0)),
            "{topic}"
        );
    }
    let log = recd.log();
    assert!(
        !log.contains(" stalled: no sample") && !log.contains(" slow: fewer than"),
        "{log}"
    );
    for file in &files {
        let (events, health) = file_health(file);
        assert!(events.is_empty(), "no state change: {events:?}");
        assert_eq!(health.verdict, Verdict::Ok, "{health:?}");
    }
}
