//! Steering `rec play` from its terminal (issue 29): real `recd` and `rec` processes, the
//! player's stdin and stderr on a pseudo-terminal the test types keys into.
//!
//! - Space pauses and resumes: a pause of P seconds shifts the rest of the timeline by P
//!   (in the copy a second session records, the one long gap is P plus one recorded
//!   interval, no burst after the resume, every message there), the report says how long
//!   it was paused, and the terminal is back in line mode when `rec play` exits.
//! - `--start-paused` sends nothing until a key says so; → (Right arrow) sends exactly one
//!   message per press; Ctrl-C typed on the terminal ends the player with its report
//!   (`cancelled`).
//! - `--clock 100` publishes ROS 2's `/clock` (Cyclone DDS reader in Python, loopback only):
//!   the times are the recording's, advance with wall time at the play rate, and stand
//!   still while paused.
//!
//! The tests time what they observe, so they run one at a time (they hold a lock).

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use recd_testkit::{
    binary, clock_subscribe, finish_load, messages_by_topic, stopped_files, wait_until, Domain,
    Killed, Pty, Recd, RecdLoad, CTRL_C, RIGHT, SPACE,
};
use serde_json::Value;

/// The recorded topic of every test here.
const TOPIC: &str = "steer/small/0";
/// Its rate when recorded.
const HZ: u32 = 50;
/// Its recorded interval, in seconds.
const INTERVAL: f64 = 1.0 / HZ as f64;

static MACHINE: Mutex<()> = Mutex::new(());

fn machine() -> std::sync::MutexGuard<'static, ()> {
    MACHINE
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Records `count` messages of [`TOPIC`] at [`HZ`] from recd-load (which notifies an event
/// service, so that recd stamps each message as it comes) into session `name`; returns the
/// files and, for the topic, each message's digest and log time (ns).
fn record(
    recd: &Recd,
    domain: &Domain,
    name: &str,
    count: u64,
) -> (Vec<PathBuf>, Vec<String>, Vec<u64>) {
    recd.rec_json(&["start", "--name", name, "--topic", "steer/*"]);
    finish_load(
        domain.load(
            &RecdLoad::new("steer/")
                .cameras(0)
                .small_topics(1)
                .small_rate(HZ)
                .count(count)
                .duration(Duration::from_secs(30))
                .notify()
                .wait_subscribers(1),
        ),
    );
    assert!(recd.wait_written(name, count), "{name}: not all recorded");
    let files = stopped_files(&recd.rec_json(&["stop", name]));
    let (mut digests, mut times) = messages_by_topic(&files);
    let digests = digests.remove(TOPIC).expect("the topic was recorded");
    let times = times.remove(TOPIC).unwrap();
    assert_eq!(digests.len() as u64, count, "{name}: recorded messages");
    (files, digests, times)
}

/// What session `name` has written so far, over all its topics, and whether it has
/// [`TOPIC`] (its subscriber is there).
fn written(recd: &Recd, name: &str) -> (u64, bool) {
    let status = recd.rec_json(&["status", name]);
    let topics = status[0]["topics"].as_array().cloned().unwrap_or_default();
    (
        topics.iter().filter_map(|t| t["written"].as_u64()).sum(),
        topics.iter().any(|t| t["name"] == TOPIC),
    )
}

/// `rec play ARGS --json` against `recd`, its stdin and stderr on `pty`, its stdout (the
/// report) piped.
fn play_on(pty: &Pty, recd: &Recd, args: &[&str]) -> Killed {
    let mut command = Command::new(binary("rec"));
    command
        .env("RECD_SOCKET", &recd.socket)
        .arg("play")
        .args(args)
        .arg("--json")
        .stdout(Stdio::piped());
    pty.attach(&mut command);
    Killed::spawn(&mut command)
}

/// Waits for the player (at most `limit`) and parses its report; it must succeed.
fn report_of(player: &mut Killed, pty: &Pty, limit: Duration) -> Value {
    let output = player.finish(limit);
    assert!(
        output.status.success(),
        "rec play failed ({}); terminal:\n{}",
        output.status,
        pty.output()
    );
    serde_json::from_slice(&output.stdout).unwrap_or_else(|e| {
        panic!(
            "rec play --json prints its report ({e}): {}\nterminal:\n{}",
            String::from_utf8_lossy(&output.stdout),
            pty.output()
        )
    })
}

fn sent(report: &Value) -> u64 {
    report["topics"]
        .as_array()
        .unwrap_or_else(|| panic!("a report lists its topics: {report}"))
        .iter()
        .map(|t| t["sent"].as_u64().unwrap_or_else(|| panic!("sent: {t}")))
        .sum()
}

fn seconds(ns: &[u64]) -> Vec<f64> {
    ns.iter().map(|t| *t as f64 / 1e9).collect()
}

/// CLOCK_MONOTONIC in seconds: the clock of the Python scripts' `time.monotonic()`.
fn monotonic_s() -> f64 {
    let mut now = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime(2) fills the timespec we own.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut now) };
    now.tv_sec as f64 + now.tv_nsec as f64 / 1e9
}

#[test]
fn space_pauses_and_resumes_shifting_the_timeline_without_a_burst() {
    let _machine = machine();
    let root = tempfile::tempdir().unwrap();
    let domain = Domain::new();
    let recd = Recd::start(root.path(), &domain);
    let count = 4 * HZ as u64;
    let (_, source, source_times) = record(&recd, &domain, "source", count);

    recd.rec_json(&["start", "--name", "copy", "--topic", "steer/*"]);
    let pty = Pty::open();
    let mut player = play_on(
        &pty,
        &recd,
        &[
            "source",
            "--iceoryx2-prefix",
            &domain.prefix,
            "--wait-subscribers",
            "10s",
        ],
    );
    // A second into the playback (the copy has its first message): pause for 1 s.
    assert!(
        wait_until(Duration::from_secs(15), || written(&recd, "copy").0 > 0),
        "the copy received nothing; terminal:\n{}",
        pty.output()
    );
    std::thread::sleep(Duration::from_secs(1));
    let help = pty.output().lines().next().unwrap_or_default().to_string();
    pty.send(SPACE);
    let paused_at = Instant::now();
    std::thread::sleep(Duration::from_secs(1));
    let during_pause = written(&recd, "copy").0;
    std::thread::sleep(Duration::from_millis(100));
    let still_paused = written(&recd, "copy").0;
    pty.send(SPACE);
    let pause = paused_at.elapsed().as_secs_f64();
    let report = report_of(&mut player, &pty, Duration::from_secs(30));
    // Let the recorder take the last samples before it stops.
    std::thread::sleep(Duration::from_millis(300));
    let copy_files = stopped_files(&recd.rec_json(&["stop", "copy"]));
    let (mut copy, mut copy_times) = messages_by_topic(&copy_files);
    let copy = copy.remove(TOPIC).unwrap_or_default();
    let arrivals = seconds(&copy_times.remove(TOPIC).unwrap_or_default());

    let gaps: Vec<f64> = arrivals.windows(2).map(|w| w[1] - w[0]).collect();
    let longest = gaps
        .iter()
        .enumerate()
        .max_by(|a, b| a.1.total_cmp(b.1))
        .map(|(at, gap)| (at, *gap))
        .expect("the copy has messages");
    let after: Vec<f64> = gaps[longest.0 + 1..].iter().take(10).copied().collect();
    eprintln!(
        "paused {pause:.3} s by the keys, {} s by the report; longest gap {:.3} s after message {}; \
         the 10 intervals after it (ms): {:?}; sent {} of {count}; help: {help:?}",
        report["paused_s"],
        longest.1,
        longest.0,
        after.iter().map(|g| (g * 1e4).round() / 10.0).collect::<Vec<_>>(),
        sent(&report),
    );

    assert!(
        help.contains("pause"),
        "a line of help on the terminal at the start: {help:?}"
    );
    assert_eq!(
        during_pause, still_paused,
        "nothing is sent while paused ({during_pause} written, then {still_paused})"
    );
    assert_eq!(report["cancelled"], false, "{report}");
    assert_eq!(sent(&report), count, "every message sent: {report}");
    assert_eq!(
        copy, source,
        "every message arrives, byte for byte, in order"
    );
    let paused_s = report["paused_s"]
        .as_f64()
        .unwrap_or_else(|| panic!("paused_s in {report}"));
    assert!(
        (paused_s - pause).abs() < 0.15,
        "paused_s {paused_s:.3}: the keys paused for {pause:.3} s"
    );
    // The one long gap is the pause plus the recorded interval it fell into.
    assert!(
        (longest.1 - (pause + INTERVAL)).abs() < 0.1,
        "the gap of the pause is {:.3} s, not {pause:.3} s + {INTERVAL} s",
        longest.1
    );
    let long: Vec<f64> = gaps.iter().copied().filter(|g| *g > 0.25).collect();
    assert_eq!(long.len(), 1, "one long gap only: {long:?}");
    // No burst on resume: the messages after it keep the recorded interval.
    let close = after.iter().filter(|g| **g < INTERVAL / 2.0).count();
    assert!(
        close <= 1,
        "after the resume, {close} of 10 intervals are shorter than half the recorded {INTERVAL} s: {after:?}"
    );
    let resumed = arrivals[longest.0 + 1];
    let in_first_200ms = arrivals
        .iter()
        .filter(|t| **t >= resumed && **t < resumed + 0.2)
        .count();
    assert!(
        in_first_200ms <= (0.2 / INTERVAL) as usize + 2,
        "{in_first_200ms} messages in the 200 ms after the resume (recorded: one per {INTERVAL} s)"
    );
    // The whole timeline is shifted by the pause, nothing more.
    let recorded_span = (source_times[source_times.len() - 1] - source_times[0]) as f64 / 1e9;
    let played_span = arrivals[arrivals.len() - 1] - arrivals[0];
    assert!(
        (played_span - recorded_span - pause).abs() < 0.15,
        "played over {played_span:.3} s: recorded {recorded_span:.3} s + paused {pause:.3} s"
    );
    assert!(
        pty.in_line_mode(),
        "rec play left the terminal in cbreak mode (c_lflag {:#o})",
        pty.local_flags()
    );
}

#[test]
fn start_paused_sends_nothing_and_each_right_arrow_sends_exactly_one_message() {
    let _machine = machine();
    let root = tempfile::tempdir().unwrap();
    let domain = Domain::new();
    let recd = Recd::start(root.path(), &domain);
    let (_, source, _) = record(&recd, &domain, "source", 100);

    recd.rec_json(&["start", "--name", "copy", "--topic", "steer/*"]);
    let pty = Pty::open();
    let mut player = play_on(
        &pty,
        &recd,
        &[
            "source",
            "--start-paused",
            "--iceoryx2-prefix",
            &domain.prefix,
            "--wait-subscribers",
            "10s",
        ],
    );
    // The player is up (its help on the terminal) and the copy subscribed to its service.
    assert!(
        pty.wait_for_output("pause", Duration::from_secs(15)),
        "no help on the terminal: {:?}",
        pty.output()
    );
    assert!(
        wait_until(Duration::from_secs(15), || written(&recd, "copy").1),
        "the copy never subscribed to {TOPIC}"
    );
    std::thread::sleep(Duration::from_secs(1));
    assert_eq!(
        written(&recd, "copy").0,
        0,
        "--start-paused: nothing is sent before a key; terminal: {:?}",
        pty.output()
    );

    let mut seen = Vec::new();
    for step in 1..=2u64 {
        pty.send(RIGHT);
        let arrived = wait_until(Duration::from_secs(5), || written(&recd, "copy").0 >= step);
        // Anything more would have come by now (the recorded interval is 20 ms).
        std::thread::sleep(Duration::from_millis(500));
        let now = written(&recd, "copy").0;
        seen.push(now);
        assert!(
            arrived && now == step,
            "after {step} press(es) of →, the copy has {now} messages (after each press: {seen:?})"
        );
    }

    // Ctrl-C typed on the terminal stops the player, which still reports.
    pty.send(CTRL_C);
    let report = report_of(&mut player, &pty, Duration::from_secs(10));
    std::thread::sleep(Duration::from_millis(300));
    let copy_files = stopped_files(&recd.rec_json(&["stop", "copy"]));
    let (mut copy, _) = messages_by_topic(&copy_files);
    eprintln!("report after two steps and Ctrl-C: {report}");

    assert_eq!(report["cancelled"], true, "{report}");
    assert_eq!(sent(&report), 2, "two steps, two messages: {report}");
    assert!(
        report["paused_s"].as_f64().is_some_and(|p| p > 1.0),
        "paused all along: {report}"
    );
    assert_eq!(
        copy.remove(TOPIC).unwrap_or_default(),
        source[..2],
        "the first two recorded messages, in order"
    );
    assert!(
        pty.in_line_mode(),
        "rec play left the terminal in cbreak mode (c_lflag {:#o})",
        pty.local_flags()
    );
}

/// The slope of `y` over `x` (least squares).
fn slope(points: &[(f64, f64)]) -> f64 {
    let n = points.len() as f64;
    let (mx, my) = (
        points.iter().map(|p| p.0).sum::<f64>() / n,
        points.iter().map(|p| p.1).sum::<f64>() / n,
    );
    let sxy: f64 = points.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
    let sxx: f64 = points.iter().map(|p| (p.0 - mx).powi(2)).sum();
    sxy / sxx
}

#[test]
fn clock_publishes_the_recordings_time_at_the_rate_and_stands_still_while_paused() {
    let _machine = machine();
    let root = tempfile::tempdir().unwrap();
    let domain = Domain::new();
    let recd = Recd::start(root.path(), &domain);
    // 6 s recorded, played at twice the speed with /clock at 100 Hz.
    let (_, _, times) = record(&recd, &domain, "source", 6 * HZ as u64);
    let (first, last) = (times[0], times[times.len() - 1]);
    let rate = 2.0;
    let hz = 100.0;

    let subscriber = clock_subscribe(&["--domain", "67", "--idle", "2", "--timeout", "60"]);
    assert!(
        subscriber.wait_ready(Duration::from_secs(30)),
        "the /clock reader did not start"
    );
    let pty = Pty::open();
    let mut player = play_on(
        &pty,
        &recd,
        &[
            "source",
            "--iceoryx2-prefix",
            &domain.prefix,
            "--rate",
            "2",
            "--clock",
            "100",
            "--dds-domain",
            "67",
            "--dds-interface",
            "127.0.0.1",
        ],
    );
    // Once /clock arrives (discovery takes a moment), a while of playing, then a pause.
    let flowing = wait_until(Duration::from_secs(10), || {
        subscriber
            .lines()
            .iter()
            .filter(|l| l["ns"].is_u64())
            .count()
            >= 20
    });
    assert!(
        flowing,
        "no /clock from rec play --clock 100 within 10 s; terminal:\n{}",
        pty.output()
    );
    std::thread::sleep(Duration::from_millis(300));
    let paused_at = monotonic_s();
    pty.send(SPACE);
    std::thread::sleep(Duration::from_secs(1));
    let resumed_at = monotonic_s();
    pty.send(SPACE);
    let report = report_of(&mut player, &pty, Duration::from_secs(30));
    let clock = subscriber.finish(Duration::from_secs(30));

    let period_ns = (rate / hz * 1e9) as u64;
    let samples: Vec<(f64, u64)> = clock
        .samples
        .iter()
        .map(|s| (s["t"].as_f64().unwrap(), s["ns"].as_u64().unwrap()))
        .collect();
    let before: Vec<(f64, f64)> = samples
        .iter()
        .filter(|s| s.0 < paused_at && s.0 > paused_at - 0.4)
        .map(|s| (s.0, s.1 as f64 / 1e9))
        .collect();
    let during: Vec<u64> = samples
        .iter()
        .filter(|s| s.0 > paused_at + 0.2 && s.0 < resumed_at)
        .map(|s| s.1)
        .collect();
    let after: Vec<(f64, f64)> = samples
        .iter()
        .filter(|s| s.0 > resumed_at + 0.05 && s.1 + period_ns < last)
        .map(|s| (s.0, s.1 as f64 / 1e9))
        .collect();
    let publish_hz = match (before.first(), before.last()) {
        (Some(a), Some(b)) if b.0 > a.0 => (before.len() - 1) as f64 / (b.0 - a.0),
        _ => 0.0,
    };
    eprintln!(
        "{} /clock samples ({:.1} Hz before the pause): {} before the pause, {} during, {} after; \
         slopes {:.3} before, {:.3} after; recording {first}..{last}; report paused_s {}",
        samples.len(),
        publish_hz,
        before.len(),
        during.len(),
        after.len(),
        slope(&before),
        slope(&after),
        report["paused_s"]
    );

    assert_eq!(clock.done["matched"], true, "{}", clock.done);
    for sample in &clock.samples {
        assert_eq!(
            sample["header"], "00010000",
            "XCDR1 little endian: {sample}"
        );
        assert_eq!(sample["bytes"], 12, "header, sec, nanosec: {sample}");
    }
    // The recording's time: within its first and last log time, give or take one period
    // of the clock (at the rate).
    for (t, ns) in &samples {
        assert!(
            *ns + period_ns >= first && *ns <= last + period_ns,
            "/clock {ns} at {t:.3} s is outside the recording ({first}..{last})"
        );
    }
    assert!(
        samples.windows(2).all(|w| w[1].1 >= w[0].1),
        "/clock never goes back"
    );
    // Until the last message is sent, however far ahead of it the file was read: within
    // a few of the clock's periods (a busy machine wakes its thread late).
    let latest = samples.last().map_or(0, |s| s.1);
    assert!(
        latest + 5 * period_ns >= last,
        "/clock stopped {:.3} s of the recording before its last message",
        last.saturating_sub(latest) as f64 / 1e9
    );
    // Advancing with wall time at the rate, before and after the pause.
    assert!(
        before.len() >= 20 && after.len() >= 20,
        "{} and {} samples",
        before.len(),
        after.len()
    );
    for (what, points) in [("before", &before), ("after", &after)] {
        let s = slope(points);
        assert!(
            (s / rate - 1.0).abs() < 0.05,
            "{what} the pause /clock advanced {s:.3} s per second, at --rate {rate}"
        );
    }
    assert!(
        (publish_hz / hz - 1.0).abs() < 0.25,
        "/clock published at {publish_hz:.1} Hz, asked {hz}"
    );
    // Standing still while paused, and the pause not counted.
    assert!(
        during.windows(2).all(|w| w[0] == w[1]),
        "/clock changed while paused: {during:?}"
    );
    // (The last sample before the pause, the first after the resume.)
    let (last_before, first_after) = (before[before.len() - 1], after[0]);
    let advanced = first_after.1 - last_before.1;
    let playing = (paused_at - last_before.0) + (first_after.0 - resumed_at);
    assert!(
        (advanced - rate * playing).abs() < 0.1,
        "across the pause /clock advanced {advanced:.3} s; {playing:.3} s were played at --rate {rate}"
    );
}
