//! Remote control over DDS on the real recd and rec, each test in a network namespace
//! of its own (loopback only): three recorders triggered at one moment by an
//! independent controller (Cyclone DDS' Python bindings speaking eProsima DDS Record &
//! Replay's contract) and by `rec fleet`; rosbag2's pause and resume services called
//! the way rmw_cyclonedds calls them; a fleet trigger at a past moment and a remote event
//! making incidents of a session on disk, the status carrying them; a start that changes
//! a running session's topics;
//! remote control off changing nothing; bad commands
//! refused while recd keeps serving; a `fleet = true` rule firing on one recorder making
//! the same incident on another.

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use recd_testkit::{
    cyclone_loopback_config, finish_load, python, python_file, read_mcap, stopped_files,
    wait_bounded, wait_until, Domain, NetNs, Recd, RecdLoad,
};
use serde_json::{json, Value};

/// The DDS domain of the control topics (the namespace keeps it to the test).
const CONTROL_DOMAIN: &str = "5";

fn epoch_ns() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64
}

/// A recd in `netns` with `[remote_control]` lines `remote`.
fn start_recd(root: &Path, domain: &Domain, netns: &NetNs, remote: &str) -> Recd {
    let wrapper = netns.wrapper();
    let wrapper: Vec<&str> = wrapper.iter().map(String::as_str).collect();
    let config = format!(
        "[remote_control]\ndomain = {CONTROL_DOMAIN}\nstatus_interval = \"1s\"\n{remote}\n"
    );
    // [remote_control] goes after [recording], which start_wrapped writes last.
    Recd::start_wrapped(root, domain, &wrapper, "", &format!("\n{config}"), &[])
}

/// One recd in a namespace of its own, with what must outlive it.
struct Lone {
    recd: Recd,
    _domain: Domain,
    netns: NetNs,
    _root: tempfile::TempDir,
}

/// [`Lone`] recd with `[remote_control]` lines `remote`, recording session `name` (with
/// `start_args`) of a 100 Hz topic of its own publisher for `seconds`.
fn lone(
    remote: &str,
    name: &str,
    start_args: &[&str],
    seconds: u64,
) -> (Lone, std::process::Child) {
    let netns = NetNs::new();
    let root = tempfile::tempdir().unwrap();
    let domain = Domain::new();
    let recd = start_recd(root.path(), &domain, &netns, remote);
    let mut args = vec!["start", "--name", name];
    args.extend_from_slice(start_args);
    recd.rec_json(&args);
    let load = small_load(&domain, &format!("{name}/"), seconds);
    let lone = Lone {
        recd,
        _domain: domain,
        netns,
        _root: root,
    };
    (lone, load)
}

/// Waits until `session`'s pre-trigger buffer spans `seconds`.
fn wait_buffered(recd: &Recd, session: &str, seconds: f64) {
    let filled = wait_until(Duration::from_secs(20), || {
        recd.rec_json(&["status", session])[0]["buffer"]["span_s"].as_f64() >= Some(seconds)
    });
    assert!(filled, "the buffer of {session} did not fill");
}

/// A 100 Hz small topic under `prefix` for `seconds`.
fn small_load(domain: &Domain, prefix: &str, seconds: u64) -> std::process::Child {
    domain.load(
        &RecdLoad::new(prefix)
            .cameras(0)
            .small_topics(1)
            .small_rate(100)
            .count(100 * seconds)
            .duration(Duration::from_secs(seconds + 20))
            .wait_subscribers(1),
    )
}

/// Runs the Cyclone controller in `netns` with `args`; its JSON lines.
fn controller(netns: &NetNs, args: &[&str], limit: Duration) -> Vec<Value> {
    let child = netns
        .command(python())
        .arg(python_file("dds_recorder_control.py"))
        .args(args)
        .env("CYCLONEDDS_URI", cyclone_loopback_config())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the controller starts");
    let output = wait_bounded(child, limit);
    let stdout = String::from_utf8_lossy(&output.stdout);
    let lines: Vec<Value> = stdout
        .lines()
        .map(|line| serde_json::from_str(line).expect("JSON lines"))
        .collect();
    assert!(
        output.status.success(),
        "controller {args:?} failed ({}): {stdout}\n{}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    lines
}

/// The replies among a controller's lines.
fn replies(lines: &[Value]) -> Vec<&Value> {
    lines
        .iter()
        .filter(|line| line["info"]["reply"].is_object())
        .collect()
}

/// Writes `command` with `args` (text) and waits for the replies of `expect` recorders;
/// every status line the controller printed.
fn send(netns: &NetNs, command: &str, args: &str, expect: usize) -> Vec<Value> {
    let expect = expect.to_string();
    controller(
        netns,
        &[
            "command",
            "--domain",
            CONTROL_DOMAIN,
            "--command",
            command,
            "--args",
            args,
            "--expect",
            &expect,
            "--timeout",
            "15",
        ],
        Duration::from_secs(60),
    )
}

/// Sends `command` with `args` once and returns the replies (`expect` recorders).
fn command(netns: &NetNs, command: &str, args: &Value, expect: usize) -> Vec<Value> {
    let lines = send(netns, command, &args.to_string(), expect);
    replies(&lines).into_iter().cloned().collect()
}

fn rec_in(netns: &NetNs, args: &[&str]) -> Value {
    let output = netns
        .command(recd_testkit::binary("rec"))
        .arg("--dds-domain")
        .arg(CONTROL_DOMAIN)
        .args(args)
        .output()
        .expect("rec runs");
    assert!(
        output.status.success(),
        "rec {args:?}: {}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).expect("JSON")
}

/// The log times of `path`'s messages and its trigger records.
fn window_of(path: &str) -> (Vec<u64>, Vec<Value>) {
    let read = read_mcap(Path::new(path));
    let times = (read["messages"].as_array().unwrap().iter())
        .map(|m| m["log_time"].as_u64().unwrap())
        .collect();
    let triggers = (read["metadata"].as_array().unwrap().iter())
        .filter(|m| m["name"] == "trigger")
        .map(|m| m["metadata"].clone())
        .collect();
    (times, triggers)
}

/// Asserts the messages of `path` fill [start, end], edges within a poll period.
fn assert_window(path: &str, start: u64, end: u64) {
    let (times, _) = window_of(path);
    let edge = 30_000_000;
    assert!(!times.is_empty(), "{path} is empty");
    assert!(times.iter().all(|&t| (start..=end).contains(&t)), "{path}");
    assert!(
        times[0] < start + edge,
        "{path}: first {} start {start}",
        times[0]
    );
    let last = *times.last().unwrap();
    assert!(last + edge > end, "{path}: last {last} end {end}");
}

#[test]
fn three_recorders_trigger_at_one_moment_once_per_id() {
    let netns = NetNs::new();
    let roots: Vec<_> = (0..3).map(|_| tempfile::tempdir().unwrap()).collect();
    let domains: Vec<Domain> = (0..3).map(|_| Domain::new()).collect();
    let recds: Vec<Recd> = (0..3)
        .map(|i| {
            start_recd(
                roots[i].path(),
                &domains[i],
                &netns,
                &format!("enabled = true\nrecorder = \"ecu{i}\""),
            )
        })
        .collect();
    let loads: Vec<_> = (0..3)
        .map(|i| {
            recds[i].rec_json(&["start", "--name", "ring", "--pre-trigger", "3s"]);
            small_load(&domains[i], "fleet/", 12)
        })
        .collect();
    for recd in &recds {
        wait_buffered(recd, "ring", 2.0);
    }

    // One event 200 ms ahead of its write, written twice (1 s apart) with one id: each
    // recorder writes one file whose window is cut around the moment, and answers both.
    let args = json!({"before": 1, "after": "300ms", "note": "brake", "id": "t-1"});
    let lines = controller(
        &netns,
        &[
            "command",
            "--domain",
            CONTROL_DOMAIN,
            "--command",
            "event",
            "--args",
            &args.to_string(),
            "--trigger-in",
            "0.2",
            "--expect",
            "3",
            "--repeat",
            "2",
            "--repeat-interval",
            "1",
            "--timeout",
            "15",
        ],
        Duration::from_secs(60),
    );
    let moment = lines[0]["trigger_ns"].as_u64().expect("the moment first");
    let answers = replies(&lines);
    assert_eq!(answers.len(), 6, "{lines:#?}");
    let mut recorders: Vec<&str> = Vec::new();
    for answer in &answers {
        let reply = &answer["info"]["reply"];
        assert_eq!(reply["ok"], true, "{answer}");
        assert_eq!(reply["id"], "t-1");
        assert_eq!(reply["trigger_ns"], moment);
        assert_eq!(answer["current"], "PAUSED", "buffering until an event");
        recorders.push(answer["info"]["recorder"].as_str().unwrap());
    }
    recorders.sort();
    assert_eq!(recorders, ["ecu0", "ecu0", "ecu1", "ecu1", "ecu2", "ecu2"]);
    let repeated = answers
        .iter()
        .filter(|a| a["info"]["reply"]["repeated"] == true)
        .count();
    assert_eq!(repeated, 3, "the second command wrote nothing new");
    // The first answers came once the moment, 200 ms after the write, had come.
    for answer in answers
        .iter()
        .filter(|a| a["info"]["reply"]["repeated"] != true)
    {
        assert!(answer["latency_s"].as_f64().unwrap() >= 0.19, "{answer}");
    }
    let (start, end) = (moment - 1_000_000_000, moment + 300_000_000);
    std::thread::sleep(Duration::from_millis(600));
    for recd in &recds {
        let files = recd.listed("ring")["files"].clone();
        assert_eq!(files.as_array().unwrap().len(), 1, "one file: {files}");
        let path = files[0]["path"].as_str().unwrap();
        assert_window(path, start, end);
        let (_, triggers) = window_of(path);
        assert_eq!(triggers[0]["id"], "t-1");
        assert_eq!(triggers[0]["time"], moment.to_string());
        assert!(triggers[0]["clock_sync"]
            .as_str()
            .unwrap()
            .contains("kernel"));
    }
    // Every remote command is logged with where it came from.
    assert!(recds[0].log().contains("remote command origin=GUID"));

    // rec fleet: the three listed, then triggered at one moment.
    let listed = rec_in(&netns, &["fleet", "status", "--json"]);
    let mut names: Vec<&str> = (listed.as_array().unwrap().iter())
        .map(|r| r["info"]["recorder"].as_str().unwrap())
        .collect();
    names.sort();
    assert_eq!(names, ["ecu0", "ecu1", "ecu2"], "{listed}");
    assert!(listed[0]["info"]["sessions"][0]["topics"].is_object());
    // Each topic carries its health state (learnt from its 100 Hz: unchecked, then ok).
    for recorder in listed.as_array().unwrap() {
        for topic in recorder["info"]["sessions"][0]["topics"]
            .as_object()
            .unwrap()
            .values()
        {
            let state = topic["health"]
                .as_str()
                .unwrap_or_else(|| panic!("{topic}"));
            assert!(["ok", "unchecked"].contains(&state), "{topic}");
        }
    }
    let triggered = rec_in(
        &netns,
        &[
            "fleet", "trigger", "--before", "500ms", "--after", "200ms", "--json",
        ],
    );
    assert!(
        triggered["silent"].as_array().unwrap().is_empty(),
        "{triggered}"
    );
    let answers = triggered["answers"].as_array().unwrap();
    assert_eq!(answers.len(), 3, "{triggered}");
    let moment = triggered["trigger_ns"].as_u64().unwrap();
    std::thread::sleep(Duration::from_millis(400));
    for answer in answers {
        assert_eq!(answer["ok"], true, "{answer}");
        let path = answer["files"][0].as_str().unwrap();
        assert_window(path, moment - 500_000_000, moment + 200_000_000);
    }
    for load in loads {
        finish_load(load);
    }
}

#[test]
fn a_fleet_trigger_at_a_moment_makes_one_incident_of_a_session_on_disk() {
    let (lone, load) = lone("enabled = true", "drive", &[], 8);
    let (recd, netns) = (&lone.recd, &lone.netns);
    assert!(recd.wait_written("drive", 200));
    // A moment a second back, inside what the session wrote; sent twice with one id.
    let at = epoch_ns() - 1_000_000_000;
    let at_text = at.to_string();
    let fleet_trigger = || {
        rec_in(
            netns,
            &[
                "fleet",
                "trigger",
                "--at",
                &at_text,
                "--id",
                "brake-7",
                "--before",
                "2s",
                "--after",
                "500ms",
                "--note",
                "hard brake",
                "--json",
            ],
        )
    };
    for repeated in [false, true] {
        let triggered = fleet_trigger();
        let answers = triggered["answers"].as_array().unwrap();
        assert_eq!(answers.len(), 1, "{triggered}");
        assert_eq!(answers[0]["ok"], true, "{triggered}");
        assert_eq!(answers[0]["repeated"], repeated, "{triggered}");
        assert_eq!(answers[0]["incident"], "brake-7", "{triggered}");
        assert_eq!(triggered["trigger_ns"].as_u64(), Some(at), "{triggered}");
    }
    let listed = recd.rec_json(&["incidents", "drive"]);
    let incidents = listed.as_array().unwrap();
    assert_eq!(incidents.len(), 1, "one incident however often: {listed}");
    let incident = &incidents[0];
    assert_eq!(incident["id"], "brake-7", "{listed}");
    assert_eq!(incident["origin"], "fleet", "{listed}");
    assert_eq!(incident["note"], "hard brake", "{listed}");
    assert_eq!(
        incident["time_ns"].as_u64(),
        Some(at),
        "T is the moment given"
    );
    assert_eq!(incident["start_ns"].as_u64(), Some(at - 2_000_000_000));
    assert_eq!(incident["end_ns"].as_u64(), Some(at + 500_000_000));
    assert!(
        !incident["pinned_files"].as_array().unwrap().is_empty(),
        "its window overlaps the session's file: {listed}"
    );

    // A controller's event without a moment and id: an incident of origin remote, now.
    let before = epoch_ns();
    let answers = command(netns, "event", &json!({"note": "operator"}), 1);
    let reply = &answers[0]["info"]["reply"];
    assert_eq!(reply["ok"], true, "{reply}");
    let made = reply["incident"]
        .as_str()
        .unwrap_or_else(|| panic!("{reply}"));
    let listed = recd.rec_json(&["incidents", "drive"]);
    let remote = (listed.as_array().unwrap().iter())
        .find(|i| i["id"] == made)
        .unwrap_or_else(|| panic!("{made} in {listed}"));
    assert_eq!(remote["origin"], "remote", "{listed}");
    assert!(remote["time_ns"].as_u64() >= Some(before), "{listed}");

    // The status carries both, newest first.
    let carried = wait_until(Duration::from_secs(10), || {
        let status = rec_in(netns, &["fleet", "status", "--json"]);
        let incidents = status[0]["info"]["incidents"].clone();
        incidents[0]["id"] == made
            && incidents[1]["id"] == "brake-7"
            && incidents[1]["origin"] == "fleet"
            && incidents[1]["time_ns"].as_u64() == Some(at)
    });
    assert!(carried, "{}", rec_in(netns, &["fleet", "status", "--json"]));
    finish_load(load);
}

#[test]
fn a_fleet_rule_firing_on_one_recorder_makes_its_incident_on_another_too() {
    let netns = NetNs::new();
    let roots: Vec<_> = (0..2).map(|_| tempfile::tempdir().unwrap()).collect();
    let domains: Vec<Domain> = (0..2).map(|_| Domain::new()).collect();
    // ecu0 watches its own topic; ecu1 has no rule of its own.
    let rule = "\n[[rule]]\nname = \"seq300\"\ntopic = \"drive/small/0\"\nfields = { seq = \"u64@0\" }\nwhen = \"msg.seq == 300\"\nbefore = \"2s\"\nafter = \"500ms\"\nfleet = true\n";
    let recds: Vec<Recd> = (0..2)
        .map(|i| {
            let remote = format!(
                "enabled = true\nrecorder = \"ecu{i}\"\n{}",
                if i == 0 { rule } else { "" }
            );
            start_recd(roots[i].path(), &domains[i], &netns, &remote)
        })
        .collect();
    let loads: Vec<_> = (0..2)
        .map(|i| {
            recds[i].rec_json(&["start", "--name", "drive"]);
            small_load(&domains[i], "drive/", 6)
        })
        .collect();
    // Sequence 300 comes 3 s into ecu0's 100 Hz topic.
    let fired = wait_until(Duration::from_secs(40), || {
        let listed = recds[1].rec_json(&["incidents", "drive"]);
        !listed.as_array().unwrap().is_empty()
    });
    assert!(fired, "{}\n{}", recds[0].log(), recds[1].log());
    let own = recds[0].rec_json(&["incidents", "drive"]);
    let own = own.as_array().unwrap();
    assert_eq!(
        own.len(),
        1,
        "ecu0 hears its own fleet event and keeps one: {own:#?}"
    );
    assert_eq!(own[0]["origin"], "rule", "{own:#?}");
    assert_eq!(own[0]["rule"]["values"]["msg.seq"], 300, "{own:#?}");
    let other = recds[1].rec_json(&["incidents", "drive"]);
    let other = other.as_array().unwrap();
    assert_eq!(other.len(), 1, "{other:#?}");
    assert_eq!(other[0]["origin"], "fleet", "{other:#?}");
    for key in ["id", "time_ns", "start_ns", "end_ns"] {
        assert_eq!(other[0][key], own[0][key], "{key}: {own:#?} {other:#?}");
    }
    assert!(
        other[0]["note"]
            .as_str()
            .unwrap()
            .starts_with("rule seq300 on "),
        "{other:#?}"
    );
    for load in loads {
        finish_load(load);
    }
}

#[test]
fn ros2_pause_and_resume_services_drive_a_session() {
    let remote = "enabled = true\nros2_node = \"recd_a\"";
    let (lone, load) = lone(remote, "drive", &[], 6);
    let (recd, netns) = (&lone.recd, &lone.netns);
    assert!(recd.wait_written("drive", 50));
    let call = |service: &str| {
        let lines = controller(
            netns,
            &[
                "service",
                "--domain",
                CONTROL_DOMAIN,
                "--node",
                "recd_a",
                "--service",
                service,
            ],
            Duration::from_secs(40),
        );
        lines.last().unwrap()["reply"].clone()
    };
    call("pause");
    assert_eq!(call("is_paused")["paused"], true);
    std::thread::sleep(Duration::from_millis(700));
    call("resume");
    assert_eq!(call("is_paused")["paused"], false);
    assert_eq!(finish_load(load).topics[0].sent, 600);
    let stopped = recd.rec_json(&["stop", "drive"]);
    let topic = &stopped[0]["topics"][0];
    let count = |key: &str| topic[key].as_u64().unwrap();
    assert!(count("paused") > 30, "{topic}");
    assert_eq!(count("written") + count("paused"), 600, "{topic}");
    assert!(recd.log().contains("ROS 2 service call"), "{}", recd.log());
}

#[test]
fn a_start_with_topics_to_remove_changes_a_running_sessions_topics() {
    let (lone, load) = lone("enabled = true", "drive", &[], 6);
    let (recd, netns) = (&lone.recd, &lone.netns);
    assert!(recd.wait_written("drive", 50));
    let replies = command(
        netns,
        "start",
        &json!({"session": "drive", "remove_topics": ["drive/*"]}),
        1,
    );
    assert_eq!(replies[0]["info"]["reply"]["ok"], true, "{replies:?}");
    let received = || recd.rec_json(&["status", "drive"])[0]["topics"][0]["received"].clone();
    let at_change = received();
    std::thread::sleep(Duration::from_millis(500));
    assert_eq!(received(), at_change, "the topic is recorded no more");
    assert_eq!(finish_load(load).topics[0].sent, 600);
    let stopped = recd.rec_json(&["stop", "drive"]);
    let read = read_mcap(&stopped_files(&stopped[0])[0]);
    let markers = read["metadata"].to_string();
    assert!(markers.contains("topics-set: -drive/*"), "{markers}");
}

#[test]
fn remote_control_off_changes_nothing_and_says_so_once() {
    let (lone, load) = lone("status = true", "ring", &["--pre-trigger", "3s"], 5);
    let (recd, netns) = (&lone.recd, &lone.netns);
    wait_buffered(recd, "ring", 0.5);
    for id in ["a", "b"] {
        let answers = command(netns, "event", &json!({"id": id}), 1);
        let reply = &answers[0]["info"]["reply"];
        assert_eq!(reply["ok"], false, "{reply}");
        assert!(
            reply["error"]
                .as_str()
                .unwrap()
                .contains("remote control is off"),
            "{reply}"
        );
        assert_eq!(answers[0]["info"]["control"], false);
    }
    let answers = command(netns, "stop", &json!({}), 1);
    assert_eq!(answers[0]["info"]["reply"]["ok"], false);
    assert!(recd.listed("ring")["files"].as_array().unwrap().is_empty());
    assert_eq!(
        recd.rec_json(&["status", "ring"]).as_array().unwrap().len(),
        1
    );
    let told = "remote control is off ([remote_control] enabled = false): it and any later";
    assert_eq!(recd.log().matches(told).count(), 1, "{}", recd.log());
    finish_load(load);
}

#[test]
fn bad_commands_are_refused_and_recd_keeps_serving() {
    let remote = "enabled = true\nallow = [\"event\", \"pause\"]";
    let (lone, load) = lone(remote, "ring", &["--pre-trigger", "2s"], 10);
    let (recd, netns) = (&lone.recd, &lone.netns);
    wait_buffered(recd, "ring", 1.0);
    let refused = |command_name: &str, args: &str, expected: &str| {
        let lines = send(netns, command_name, args, 1);
        let answers = replies(&lines);
        assert_eq!(answers.len(), 1, "{command_name} {args}: {lines:?}");
        let reply = &answers[0]["info"]["reply"];
        assert_eq!(reply["ok"], false, "{reply}");
        let error = reply["error"].as_str().unwrap();
        assert!(error.contains(expected), "{command_name} {args}: {error}");
        assert_eq!(answers[0]["previous"], answers[0]["current"]);
    };
    refused("explode", "", "unknown command \"explode\"");
    refused("event", "{\"before\": ", "malformed args");
    refused("event", "{\"befor\": 1}", "unknown field `befor`");
    refused("stop", "", "stop is not allowed on this recorder");
    let old = (epoch_ns() - 30_000_000_000).to_string();
    refused(
        "event",
        &format!("{{\"trigger_ns\": {old}, \"id\": \"old\"}}"),
        "but the buffer holds only the last",
    );
    assert!(recd.listed("ring")["files"].as_array().unwrap().is_empty());
    // Still serving: a good event writes its file.
    let answers = command(netns, "event", &json!({"before": "500ms", "id": "ok"}), 1);
    assert_eq!(answers[0]["info"]["reply"]["ok"], true, "{:?}", answers);
    assert_eq!(recd.listed("ring")["files"].as_array().unwrap().len(), 1);
    finish_load(load);
}
