//! Rules (`[[rule]]` in recd.toml) on the real recd and rec: a Cyclone DDS publisher (Python
//! `cyclonedds`, over UDP on loopback) of ROS 2 messages defined by `.msg` files of
//! `tests/fixtures/ros2`, and iceoryx2 publishers (Python bindings) of a plain struct and of
//! a topic that falls silent. Each content rule fires exactly at the samples where its
//! condition, evaluated by this test on the recorded messages and their log times, rises
//! and holds for `hold` outside `holdoff` of the previous firing; its incidents name the
//! rule and the values it read, are cut with the rule in their record, and only in the
//! sessions it names; a health rule fires once when its topic stalls. `rec status` shows
//! each rule's counts, and a rule whose expression does not fit its topic's schema as
//! REFUSED. A bad rule stops recd from starting, with a message naming it.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::Duration;

use recd_testkit::{recd_refused, ros2_fixtures, stopped_files, wait_until, Domain, Recd, Script};
use serde_json::{json, Value};

const DDS_DOMAIN: &str = "71";
const MS: u64 = 1_000_000;
/// The channel metadata key of an iceoryx2 topic's user header length.
const USER_HEADER_SIZE: &str = "iceoryx2.user_header.size";

/// The rules of the live test; `typo` reads a field `VehicleStatus` lacks.
const RULES: &str = r#"
[[expect]]
topic = "lidar/*"
max_gap = "300ms"

[[rule]]
name = "hard_brake"
topic = "/vehicle/status"
when = "msg.accel.x < -6.0"
hold = "200ms"
before = "3s"
after = "1s"
holdoff = "60s"
sessions = ["drive*"]

[[rule]]
name = "mode_change"
topic = "/vehicle/status"
when = "msg.mode != prev.mode"
before = "1s"
after = "1s"

[[rule]]
name = "diag_error"
topic = "/diagnostics"
when = "msg.status.exists(s, s.level >= 2)"
before = "1s"
after = "1s"

[[rule]]
name = "speed_shm"
topic = "vehicle/speed"
fields = { speed = "f32@8", gear = "u8@12" }
when = "msg.speed > 30.0 && msg.gear == 4"
before = "1s"
after = "1s"

[[rule]]
name = "lidar_lost"
health = "lidar/*"
states = ["stalled"]
before = "5s"
after = "1s"

[[rule]]
name = "typo"
topic = "/vehicle/status"
when = "msg.acel.x < -6.0"
"#;

/// The content rules: name, topic, hold and holdoff (ns).
const CONTENT: [(&str, &str, u64, u64); 4] = [
    ("hard_brake", "/vehicle/status", 200 * MS, 60_000 * MS),
    ("mode_change", "/vehicle/status", 0, 0),
    ("diag_error", "/diagnostics", 0, 0),
    ("speed_shm", "vehicle/speed", 0, 0),
];

/// One recorded message: its log time and bytes (the user header's first for iceoryx2).
struct Sample {
    log_time: u64,
    data: Vec<u8>,
}

/// The messages of `files` by topic, in file order (recd's health channel left out), and
/// each iceoryx2 topic's user header size.
fn recorded(files: &[PathBuf]) -> (BTreeMap<String, Vec<Sample>>, BTreeMap<String, usize>) {
    let mut topics: BTreeMap<String, Vec<Sample>> = BTreeMap::new();
    let mut headers = BTreeMap::new();
    for file in files {
        let bytes = std::fs::read(file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        for message in mcap::MessageStream::new(&bytes).unwrap() {
            let message = message.unwrap();
            let topic = &message.channel.topic;
            if topic == recd_health::HEALTH_CHANNEL {
                continue;
            }
            if let Some(size) = message.channel.metadata.get(USER_HEADER_SIZE) {
                headers.insert(topic.clone(), size.parse().unwrap());
            }
            topics.entry(topic.clone()).or_default().push(Sample {
                log_time: message.log_time,
                data: message.data.to_vec(),
            });
        }
    }
    (topics, headers)
}

/// A reader of plain little-endian CDR (after its 4-byte encapsulation header), aligning
/// each primitive to its size from the start of the payload, as ROS 2's rmw does.
struct Cdr<'a> {
    payload: &'a [u8],
    pos: usize,
}

impl<'a> Cdr<'a> {
    fn new(data: &'a [u8]) -> Self {
        assert_eq!(&data[..2], &[0, 1], "plain CDR, little-endian");
        Self {
            payload: &data[4..],
            pos: 0,
        }
    }

    fn take<const N: usize>(&mut self) -> [u8; N] {
        self.pos = self.pos.next_multiple_of(N);
        let bytes = self.payload[self.pos..self.pos + N].try_into().unwrap();
        self.pos += N;
        bytes
    }

    fn f64(&mut self) -> f64 {
        f64::from_le_bytes(self.take())
    }

    fn u8(&mut self) -> u8 {
        self.take::<1>()[0]
    }

    fn u32(&mut self) -> u32 {
        u32::from_le_bytes(self.take())
    }

    fn string(&mut self) -> String {
        let len = self.u32() as usize;
        let text = &self.payload[self.pos..self.pos + len - 1];
        self.pos += len;
        String::from_utf8(text.to_vec()).unwrap()
    }
}

/// `recd_rules_test/msg/VehicleStatus`: accel.x and mode.
fn vehicle_status(data: &[u8]) -> (f64, String) {
    let mut cdr = Cdr::new(data);
    let _speed = cdr.f64();
    let (x, _y, _z) = (cdr.f64(), cdr.f64(), cdr.f64());
    let _gear = cdr.u8();
    (x, cdr.string())
}

/// `recd_rules_test/msg/Diag`: the level of each status.
fn diag_levels(data: &[u8]) -> Vec<u8> {
    let mut cdr = Cdr::new(data);
    let count = cdr.u32();
    (0..count)
        .map(|_| {
            let level = cdr.u8();
            let _name = cdr.string();
            level
        })
        .collect()
}

/// The indices of the samples where a rule fires, given each sample's log time and whether
/// its condition holds: on the rising edge (the state before the first sample is false),
/// at the first sample at least `hold` after the one where it became true, with every
/// sample between true; a firing within `holdoff` of the previous one is suppressed and
/// consumes the edge.
fn expected_firings(samples: &[(u64, bool)], hold: u64, holdoff: u64) -> Vec<usize> {
    let mut fired: Vec<usize> = Vec::new();
    let mut last_fire: Option<u64> = None;
    let mut run_start: Option<u64> = None;
    let mut spent = false;
    for (i, &(t, holds)) in samples.iter().enumerate() {
        if !holds {
            run_start = None;
            spent = false;
            continue;
        }
        if spent {
            continue;
        }
        let start = *run_start.get_or_insert(t);
        if t >= start + hold {
            spent = true;
            if last_fire.is_none_or(|last| t - last >= holdoff) {
                last_fire = Some(t);
                fired.push(i);
            }
        }
    }
    fired
}

/// The runs of consecutive samples where the condition holds: (first, last) log times.
fn true_runs(samples: &[(u64, bool)]) -> Vec<(u64, u64)> {
    let mut runs: Vec<(u64, u64)> = Vec::new();
    let mut open = false;
    for &(t, holds) in samples {
        match (holds, open) {
            (true, true) => runs.last_mut().unwrap().1 = t,
            (true, false) => runs.push((t, t)),
            _ => {}
        }
        open = holds;
    }
    runs
}

/// A content rule's expected firing: the sample's log time and the values it read.
struct Expected {
    rule: &'static str,
    topic: &'static str,
    time_ns: u64,
    values: Value,
}

/// Evaluates each content rule of [`RULES`] on the recorded messages, by this test's own
/// decoding; asserts the scenario the publisher scripted is in them.
fn expected_content_firings(
    topics: &BTreeMap<String, Vec<Sample>>,
    headers: &BTreeMap<String, usize>,
) -> Vec<Expected> {
    let of = |topic: &str| {
        topics
            .get(topic)
            .unwrap_or_else(|| panic!("nothing recorded of {topic}: {:?}", topics.keys()))
    };
    let status: Vec<(u64, f64, String)> = of("/vehicle/status")
        .iter()
        .map(|s| {
            let (x, mode) = vehicle_status(&s.data);
            (s.log_time, x, mode)
        })
        .collect();
    let diag: Vec<(u64, Vec<u8>)> = of("/diagnostics")
        .iter()
        .map(|s| (s.log_time, diag_levels(&s.data)))
        .collect();
    let header = headers["vehicle/speed"];
    let speed: Vec<(u64, f32, u8)> = of("vehicle/speed")
        .iter()
        .map(|s| {
            let payload = &s.data[header..];
            let speed = f32::from_le_bytes(payload[8..12].try_into().unwrap());
            (s.log_time, speed, payload[12])
        })
        .collect();

    let mut expected = Vec::new();
    for (rule, topic, hold, holdoff) in CONTENT {
        let conditions: Vec<(u64, bool)> = match rule {
            "hard_brake" => status.iter().map(|s| (s.0, s.1 < -6.0)).collect(),
            "mode_change" => (0..status.len())
                .map(|i| (status[i].0, i > 0 && status[i].2 != status[i - 1].2))
                .collect(),
            "diag_error" => diag
                .iter()
                .map(|d| (d.0, d.1.iter().any(|&l| l >= 2)))
                .collect(),
            _ => speed
                .iter()
                .map(|s| (s.0, f64::from(s.1) > 30.0 && s.2 == 4))
                .collect(),
        };
        let runs = true_runs(&conditions);
        let fired = expected_firings(&conditions, hold, holdoff);
        // The scenario of rules_publish.py: three dips (the first shorter than hold, the
        // third within holdoff of the second), one mode change, one diagnostics error
        // from some sample on, one crossing of the speed.
        let scripted = if rule == "hard_brake" { 3 } else { 1 };
        assert_eq!(runs.len(), scripted, "{rule}: runs {runs:?}");
        if rule == "hard_brake" && runs[0].1 - runs[0].0 < hold {
            // Unless a stalled machine stretched the short dip past hold.
            assert_eq!(fired.len(), 1, "{rule}: {runs:?} {fired:?}");
        }
        for i in fired {
            let t = conditions[i].0;
            let values = match rule {
                "hard_brake" => json!({"msg.accel.x": status[i].1}),
                "mode_change" => json!({"msg.mode": status[i].2, "prev.mode": status[i - 1].2}),
                "diag_error" => Value::Null, // a list of maps; checked by key
                _ => json!({"msg.speed": f64::from(speed[i].1), "msg.gear": speed[i].2}),
            };
            expected.push(Expected {
                rule,
                topic,
                time_ns: t,
                values,
            });
        }
    }
    expected
}

/// The line of rule `name` in `rec status`'s text, and the line after it.
fn status_lines(status: &str, name: &str) -> (String, String) {
    let lines: Vec<&str> = status.lines().collect();
    let at = (lines.iter())
        .position(|l| l.starts_with(&format!("rule {name} (")))
        .unwrap_or_else(|| panic!("no line of rule {name} in rec status:\n{status}"));
    let next = lines.get(at + 1).copied().unwrap_or_default();
    (lines[at].to_string(), next.to_string())
}

/// The count before `word` (`evaluated`, `fired`, …) in a rule's status line.
fn count(line: &str, word: &str) -> u64 {
    let words: Vec<&str> = line
        .split([' ', ',', ';'])
        .filter(|w| !w.is_empty())
        .collect();
    let at = words.iter().position(|w| *w == word).unwrap();
    words[at - 1]
        .parse()
        .unwrap_or_else(|_| panic!("{word} in {line}"))
}

fn status_text(recd: &Recd) -> String {
    let output = recd.rec(&["status"]);
    assert!(output.status.success(), "rec status failed");
    String::from_utf8(output.stdout).unwrap()
}

/// The `incident` Metadata record of a cut file.
fn incident_record(path: &Path) -> BTreeMap<String, String> {
    let bytes = std::fs::read(path).unwrap();
    let summary = mcap::Summary::read(&bytes).unwrap().expect("a summary");
    let index = (summary.metadata_indexes.iter())
        .find(|i| i.name == "incident")
        .unwrap_or_else(|| panic!("{}: no incident record", path.display()));
    mcap::read::metadata(&bytes, index).unwrap().metadata
}

#[test]
fn rules_fire_exactly_where_their_conditions_rise_and_hold_and_cut_their_incidents() {
    let root = tempfile::tempdir().unwrap();
    let domain = Domain::new();
    let recording = format!(
        "dds_interfaces = [\"127.0.0.1\"]\ndds_message_dirs = [{:?}]\n",
        ros2_fixtures()
    );
    let recd = Recd::start_configured(root.path(), &domain, RULES, &recording, &[]);
    recd.rec_json(&["start", "--name", "drive", "--dds-domain", DDS_DOMAIN]);
    // A session hard_brake does not name (`sessions = ["drive*"]`).
    recd.rec_json(&["start", "--name", "park", "--topic", "park/*"]);

    let publisher = Script::spawn(
        "rules_publish.py",
        &["--domain", DDS_DOMAIN, "--prefix", &domain.prefix],
    );
    let published = publisher.finish(Duration::from_secs(120));
    assert_eq!(published.done["matched"], true, "{}", published.done);
    let lidar_last = published.done["lidar_last_ns"].as_u64().unwrap();

    // The health rule fires once the silent topic stalls (300 ms after its last sample).
    let stalled = wait_until(Duration::from_secs(30), || {
        count(&status_lines(&status_text(&recd), "lidar_lost").0, "fired") >= 1
    });
    assert!(stalled, "{}\n{}", status_text(&recd), recd.log());
    let stopped = recd.rec_json(&["stop", "drive"]);
    let files = stopped_files(&stopped);
    let (topics, headers) = recorded(&files);
    let expected = expected_content_firings(&topics, &headers);

    // Every recorded sample of a rule's topic was evaluated (none skipped), once the rules
    // thread has caught up, and nothing else: the rules' own subscription stands in only
    // for topics no session records, and drive records them all.
    let mut status = String::new();
    let caught_up = wait_until(Duration::from_secs(30), || {
        status = status_text(&recd);
        CONTENT.iter().all(|(rule, topic, ..)| {
            let evaluated = count(&status_lines(&status, rule).0, "evaluated");
            let recorded = topics[*topic].len() as u64;
            evaluated == recorded
        })
    });
    assert!(caught_up, "{status}\nrecorded {:?}", topics.keys());

    // rec incidents: exactly the expected incidents in drive; none of hard_brake in park.
    let listed = recd.rec_json(&["incidents"]);
    let listed = listed.as_array().unwrap();
    let of_session = |session: &str| -> Vec<&Value> {
        (listed.iter())
            .filter(|i| i["session"] == session)
            .collect()
    };
    let drive = of_session("drive");
    for incident in &drive {
        let rule = &incident["rule"];
        assert_eq!(incident["origin"], "rule", "{incident:#}");
        assert_eq!(incident["time_ns"], rule["sample_ns"], "{incident:#}");
        let id = incident["id"].as_str().unwrap();
        assert!(
            id.ends_with(&format!("_{}", rule["rule"].as_str().unwrap())),
            "{id}"
        );
    }
    let live: BTreeSet<(String, u64)> = (drive.iter())
        .filter(|i| i["rule"]["rule"] != "lidar_lost")
        .map(|i| {
            let rule = i["rule"]["rule"].as_str().unwrap().to_string();
            (rule, i["time_ns"].as_u64().unwrap())
        })
        .collect();
    let computed: BTreeSet<(String, u64)> = (expected.iter())
        .map(|e| (e.rule.to_string(), e.time_ns))
        .collect();
    assert_eq!(live, computed, "live firings against the recorded samples");
    for e in &expected {
        let incident = (drive.iter())
            .find(|i| i["rule"]["rule"] == e.rule && i["time_ns"] == e.time_ns)
            .unwrap();
        let rule = &incident["rule"];
        assert_eq!(rule["topic"], e.topic, "{incident:#}");
        if e.values.is_null() {
            let statuses = rule["values"]["msg.status"].as_array().expect("msg.status");
            assert!(statuses.iter().any(|s| s["level"] == 2), "{incident:#}");
        } else {
            assert_eq!(rule["values"], e.values, "{incident:#}");
        }
    }
    assert!(
        of_session("park")
            .iter()
            .all(|i| i["rule"]["rule"] != "hard_brake"),
        "hard_brake names only drive*: {listed:#?}"
    );

    // The health rule: once, in drive, at the start of the silence (a stall's since_ns
    // is the last sample before it).
    let lost: Vec<&&Value> = (drive.iter())
        .filter(|i| i["rule"]["rule"] == "lidar_lost")
        .collect();
    assert_eq!(lost.len(), 1, "{drive:#?}");
    let last_lidar = topics["lidar/front"].last().unwrap().log_time;
    assert_eq!(
        lost[0]["time_ns"], last_lidar,
        "the lidar's last sample was sent at {lidar_last}"
    );
    assert_eq!(lost[0]["rule"]["topic"], "lidar/front");
    assert_eq!(lost[0]["rule"]["values"]["state"], "stalled");
    assert_eq!(lost[0]["rule"]["values"]["session"], "drive");

    // Each incident of drive is cut, with the rule and its values in the cut's record.
    for incident in &drive {
        let id = incident["id"].as_str().unwrap();
        let mut found = Value::Null;
        let cut = wait_until(Duration::from_secs(60), || {
            let all = recd.rec_json(&["incidents", "drive"]);
            found = (all.as_array().unwrap().iter())
                .find(|i| i["id"] == id)
                .cloned()
                .unwrap();
            found["cut"] != "waiting"
        });
        assert!(cut && found["cut"] == "cut", "{found:#}\n{}", recd.log());
        let files = found["cut_files"].as_array().unwrap();
        assert!(!files.is_empty(), "{found:#}");
        // Together they hold exactly the recorded samples inside the window.
        let (start, end) = (found["start_ns"].as_u64(), found["end_ns"].as_u64());
        let (start, end) = (start.unwrap(), end.unwrap());
        let window = |samples: &[Sample]| -> Vec<u64> {
            (samples.iter())
                .map(|s| s.log_time)
                .filter(|t| (start..=end).contains(t))
                .collect()
        };
        let paths: Vec<PathBuf> = (files.iter())
            .map(|f| PathBuf::from(f["path"].as_str().unwrap()))
            .collect();
        let (in_cut, _) = recorded(&paths);
        let cut_windows: BTreeMap<&String, Vec<u64>> = (in_cut.iter())
            .map(|(topic, samples)| (topic, window(samples)))
            .filter(|(_, times)| !times.is_empty())
            .collect();
        let recorded_windows: BTreeMap<&String, Vec<u64>> = (topics.iter())
            .map(|(topic, samples)| (topic, window(samples)))
            .filter(|(_, times)| !times.is_empty())
            .collect();
        assert_eq!(cut_windows, recorded_windows, "{found:#}");
        for file in files {
            let path = PathBuf::from(file["path"].as_str().unwrap());
            assert!(
                path.starts_with(root.path().join("data/incidents")),
                "{path:?}"
            );
            let record = incident_record(&path);
            assert_eq!(record["origin"], "rule", "{record:?}");
            assert_eq!(record["rule"], found["rule"]["rule"], "{record:?}");
            assert_eq!(record["time"], found["time_ns"].to_string(), "{record:?}");
            let values: Value = serde_json::from_str(&record["rule_values"]).unwrap();
            assert_eq!(values, found["rule"]["values"], "{record:?}");
        }
    }

    // rec status: each rule's firings; typo refused at its topic's schema.
    let status = status_text(&recd);
    for (rule, ..) in CONTENT {
        let (line, _) = status_lines(&status, rule);
        let fired = expected.iter().filter(|e| e.rule == rule).count() as u64;
        assert!(line.contains(": watching;"), "{line}");
        assert_eq!(count(&line, "fired"), fired, "{line}");
        assert_eq!(count(&line, "skipped"), 0, "{line}");
        assert_eq!(count(&line, "errors"), 0, "{line}");
    }
    let (line, _) = status_lines(&status, "lidar_lost");
    assert_eq!(count(&line, "fired"), 1, "{line}");
    let (line, problem) = status_lines(&status, "typo");
    assert!(line.contains("REFUSED"), "{status}");
    assert!(
        problem.contains("VehicleStatus has no field \"acel\""),
        "{status}"
    );
    assert_eq!(count(&line, "fired"), 0, "{line}");
    let log = recd.log();
    assert!(
        log.lines()
            .any(|l| l.contains("ERROR") && l.contains("typo") && l.contains("acel")),
        "{log}"
    );

    // rec rules test over the session's files: the live firings, the same counts; typo
    // cannot run on its topic (exit 1).
    let config = root.path().join("recd.toml");
    let offline = recd.rec(&[
        "rules",
        "test",
        "drive",
        "--config",
        config.to_str().unwrap(),
        "--json",
    ]);
    let stderr = String::from_utf8_lossy(&offline.stderr);
    assert_eq!(offline.status.code(), Some(1), "{stderr}");
    let offline: Value = serde_json::from_slice(&offline.stdout).expect("JSON");
    let firings: Vec<(String, u64, Value)> = (offline["firings"].as_array().unwrap().iter())
        .map(|f| {
            let rule = f["rule"].as_str().unwrap().to_string();
            (rule, f["time_ns"].as_u64().unwrap(), f["values"].clone())
        })
        .collect();
    let live_firings: Vec<(String, u64, Value)> = (drive.iter())
        .filter(|i| i["rule"]["rule"] != "lidar_lost")
        .map(|i| {
            let rule = i["rule"]["rule"].as_str().unwrap().to_string();
            (
                rule,
                i["time_ns"].as_u64().unwrap(),
                i["rule"]["values"].clone(),
            )
        })
        .collect();
    let sorted = |mut v: Vec<(String, u64, Value)>| {
        v.sort_by(|a, b| (&a.0, a.1).cmp(&(&b.0, b.1)));
        v
    };
    assert_eq!(sorted(firings), sorted(live_firings), "{offline:#}");
    for tally in offline["rules"].as_array().unwrap() {
        let name = tally["name"].as_str().unwrap();
        if name == "typo" {
            let problem = tally["problem"].as_str().unwrap_or_default();
            assert!(problem.contains("has no field \"acel\""), "{tally}");
            continue;
        }
        let (_, topic, ..) = CONTENT.iter().find(|c| c.0 == name).unwrap();
        assert_eq!(tally["evaluated"], topics[*topic].len(), "{tally}");
        assert_eq!(tally["errors"], 0, "{tally}");
        assert!(tally["problem"].is_null(), "{tally}");
    }
    recd.rec_json(&["stop", "park"]);
}

#[test]
fn a_bad_rule_stops_recd_from_starting_with_a_message_naming_it() {
    let root = tempfile::tempdir().unwrap();
    let rule = |name: &str, body: &str| format!("[[rule]]\nname = {name:?}\n{body}\n");
    let bad = [
        (
            rule("unparsed", "topic = \"/a\"\nwhen = \"msg.x <\""),
            "does not parse",
        ),
        (
            rule("stranger", "topic = \"/a\"\nwhen = \"other.x > 1\""),
            "unknown variable \"other\"",
        ),
        (
            rule("okay", "health = \"lidar/*\"\nstates = [\"ok\"]"),
            "\"ok\" is not a state",
        ),
        (
            rule(
                "bad_kind",
                "topic = \"s\"\nfields = { speed = \"f33@8\" }\nwhen = \"msg.speed > 1.0\"",
            ),
            "fields.speed",
        ),
        (
            rule(
                "undeclared",
                "topic = \"s\"\nfields = { speed = \"f32@8\" }\nwhen = \"msg.gear == 4\"",
            ),
            "no field \"gear\"",
        ),
        (
            rule("twice", "topic = \"/a\"\nwhen = \"msg.x > 1\"")
                + &rule("twice", "topic = \"/b\"\nwhen = \"msg.x > 1\""),
            "used by more than one",
        ),
        (
            rule(
                "fleety",
                "topic = \"/a\"\nwhen = \"msg.x > 1\"\nfleet = true",
            ),
            "remote_control",
        ),
    ];
    for (i, (rules, problem)) in bad.iter().enumerate() {
        let name = rules.split('"').nth(1).unwrap();
        let config = root.path().join(format!("bad{i}.toml"));
        std::fs::write(
            &config,
            format!(
                "socket = {:?}\ndata_dir = {:?}\n\n{rules}",
                root.path().join(format!("recd{i}.sock")),
                root.path().join("data"),
            ),
        )
        .unwrap();
        let stderr = recd_refused(&config);
        assert!(
            stderr.contains(&format!("\"{name}\"")) && stderr.contains(problem),
            "{name}: {problem:?} not in {stderr}"
        );
        assert!(
            !root.path().join(format!("recd{i}.sock")).exists(),
            "{name}"
        );
    }
}
