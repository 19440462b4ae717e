//! recd's `/metrics` as a real Prometheus scrapes it: `promtool check metrics` accepts the
//! text format, Prometheus is served OpenMetrics and reads it, and what it stored for
//! every topic is exactly what `rec stop` then reports. An incident taken and one refused
//! for want of room show in the incidents' families, as `rec incidents` lists them.

use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use recd_testkit::{
    finish_load, http_get, http_request, wait_bounded, wait_until, Domain, Prometheus, Recd,
    RecdLoad, SCRAPE_INTERVAL,
};
use serde_json::Value;

/// The counts compared, as `rec stop --json` names them, and the metric of each.
const COUNTS: [(&str, &str); 5] = [
    ("received", "recd_messages_received_total"),
    ("written", "recd_messages_written_total"),
    ("dropped", "recd_messages_dropped_total"),
    ("lost", "recd_messages_lost_total"),
    ("bytes_written", "recd_written_bytes_total"),
];

/// Per topic name, the counts of a `topics` array (of `rec status` or `rec stop`).
fn counts_by_topic(topics: &Value) -> BTreeMap<String, [u64; 5]> {
    (topics.as_array().expect("a topics array").iter())
        .map(|topic| {
            let name = topic["name"].as_str().expect("a topic has a name");
            let counts = COUNTS.map(|(key, _)| {
                topic[key]
                    .as_u64()
                    .unwrap_or_else(|| panic!("{key} in {topic}"))
            });
            (name.to_string(), counts)
        })
        .collect()
}

/// A sample's value in a query result, which must be a whole number.
fn whole(sample: &Value) -> u64 {
    let text = sample["value"][1].as_str().expect("a value as text");
    let value: f64 = text.parse().expect("a number");
    assert!(
        value >= 0.0 && value.fract() == 0.0,
        "{value} is no count: {sample}"
    );
    value as u64
}

/// Per `topic` label, the value of each sample of an instant query's result.
fn by_topic(result: &Value) -> BTreeMap<String, u64> {
    let mut values = BTreeMap::new();
    for sample in result.as_array().expect("a result array") {
        let topic = sample["metric"]["topic"].as_str().expect("a topic label");
        let earlier = values.insert(topic.to_string(), whole(sample));
        assert!(earlier.is_none(), "two series of topic {topic}: {result}");
    }
    values
}

/// Exit status and output of `promtool check metrics` given `text`.
fn promtool_check_metrics(text: &str) -> (std::process::ExitStatus, String) {
    let mut child = Command::new("promtool")
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("promtool runs (installed by scripts/setup)");
    (child.stdin.take().unwrap())
        .write_all(text.as_bytes())
        .unwrap();
    let output = wait_bounded(child, Duration::from_secs(20));
    let said = String::from_utf8_lossy(&output.stdout).to_string()
        + &String::from_utf8_lossy(&output.stderr);
    (output.status, said)
}

/// The bound on pinned bytes (`max_pinned_size = "20MiB"`): room for an incident taken
/// before the load, none once the file it pins has grown past it (about 60 MB/s).
const PINNED_LIMIT: u64 = 20 << 20;

/// The value of the sample `series` (name and labels) in the 0.0.4 text `text`.
fn sample(text: &str, series: &str) -> Option<f64> {
    (text.lines())
        .find_map(|line| line.strip_prefix(&format!("{series} ")))
        .and_then(|value| value.parse().ok())
}

fn unix_now() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs_f64()
}

#[test]
fn prometheus_stores_for_every_topic_the_counts_rec_stop_reports() {
    let began = Instant::now();
    let domain = Domain::new();
    let root = tempfile::tempdir().unwrap();
    let recd = Recd::start_with(
        root.path(),
        &domain,
        "[http]\nlisten = \"127.0.0.1:0\"\n\n[incidents]\nmax_pinned_size = \"20MiB\"\n",
        &[],
    );
    let address = recd.http_address();
    // Its target must be known when it starts: recd first.
    let prometheus = Prometheus::scraping(address);

    recd.rec_json(&["start", "--name", "m", "--topic", "hm/*"]);
    // An incident of the second before the load: it pins the session's one file.
    let taken = recd.rec_json(&["trigger", "m", "--before", "1s", "--note", "metrics"]);
    let id = taken["incident"]["id"]
        .as_str()
        .unwrap_or_else(|| panic!("{taken}"))
        .to_string();
    let load = domain.load(
        &RecdLoad::new("hm/")
            .cameras(2)
            .frame_size(1_000_000)
            .fps(30)
            .small_topics(10)
            .small_size(200)
            .small_rate(100)
            .duration(Duration::from_secs(8))
            .wait_subscribers(1),
    );

    // While it records: every topic has written something, and both formats are sound.
    let all_writing = wait_until(Duration::from_secs(20), || {
        let status = recd.rec_json(&["status", "m"]);
        let topics = status[0]["topics"].as_array().cloned().unwrap_or_default();
        topics.len() == 12 && topics.iter().all(|t| t["written"].as_u64() > Some(0))
    });
    assert!(
        all_writing,
        "not all 12 topics are written: {}",
        recd.rec_json(&["status", "m"])
    );
    // Once the pinned file has grown past the bound, another incident is refused, naming it.
    let grown = wait_until(Duration::from_secs(20), || {
        recd.rec_json(&["status", "m"])[0]["bytes_written"].as_u64() > Some(2 * PINNED_LIMIT)
    });
    assert!(grown, "{}", recd.rec_json(&["status", "m"]));
    let refused = recd.rec(&["trigger", "m", "--before", "1s"]);
    let said = String::from_utf8_lossy(&refused.stderr);
    assert!(
        !refused.status.success() && said.contains("max_pinned_size"),
        "{}: {said}{}",
        refused.status,
        String::from_utf8_lossy(&refused.stdout)
    );

    // Once their rates are learnt (2 s), topics have a health too: all families present.
    let mut text = http_get(address, "/metrics");
    let healthy = wait_until(Duration::from_secs(10), || {
        text = http_get(address, "/metrics");
        (text.body.lines())
            .filter(|line| line.starts_with("recd_topic_health{session=\"m\""))
            .count()
            == 12
    });
    assert!(healthy, "not every topic has a health: {}", text.body);
    for (series, value) in [
        ("recd_incidents_total{origin=\"cli\"}", 1.0),
        ("recd_incidents_total{origin=\"page\"}", 0.0),
        ("recd_incidents_refused_total{origin=\"cli\"}", 1.0),
        ("recd_incidents_refused_total{origin=\"fleet\"}", 0.0),
        ("recd_incidents_pinned", 1.0),
        ("recd_pinned_limit_bytes", PINNED_LIMIT as f64),
    ] {
        assert_eq!(
            sample(&text.body, series),
            Some(value),
            "{series}: {}",
            text.body
        );
    }
    let pinned = sample(&text.body, "recd_pinned_bytes").expect("recd_pinned_bytes");
    assert!(
        pinned > PINNED_LIMIT as f64,
        "the file the incident pins grew past the bound: {pinned}"
    );
    assert!(
        sample(&text.body, "recd_incidents_waiting_to_cut").is_some(),
        "{}",
        text.body
    );
    assert_eq!(text.status, 200, "{}", text.body);
    assert!(
        (text.header("content-type")).is_some_and(|t| t.starts_with("text/plain; version=0.0.4")),
        "{:?}",
        text.headers
    );
    assert!(
        text.body
            .contains("recd_messages_written_total{session=\"m\",topic=\"hm/camera/0\"}"),
        "{}",
        text.body
    );
    let (status, said) = promtool_check_metrics(&text.body);
    assert!(
        status.success(),
        "promtool check metrics: {status}\n{said}\non:\n{}",
        text.body
    );
    let open = http_request(
        address,
        "GET",
        "/metrics",
        &[("Accept", "application/openmetrics-text; version=1.0.0")],
        b"",
    )
    .unwrap();
    assert_eq!(open.status, 200, "{}", open.body);
    assert!(
        (open.header("content-type"))
            .is_some_and(|t| t.starts_with("application/openmetrics-text")),
        "{:?}",
        open.headers
    );
    assert!(open.body.ends_with("# EOF\n"), "{}", open.body);
    // Prometheus reads what it is served while the session records.
    let recording = wait_until(Duration::from_secs(10), || {
        (prometheus
            .query("recd_sessions{state=\"recording\"}")
            .as_array())
        .is_some_and(|r| r.len() == 1 && whole(&r[0]) == 1)
    });
    assert!(
        recording,
        "Prometheus saw no recording session: {}\nits log:\n{}",
        prometheus.query("{__name__=~\"recd_.*|up\"}"),
        prometheus.log()
    );

    let sent = finish_load(load);
    assert_eq!(sent.topics.len(), 12, "{sent:?}");
    // The publishers are gone: wait until recd's counts stop moving (the same over half a
    // second), then for a scrape that began after that.
    let mut last = (BTreeMap::new(), Instant::now());
    let stable = wait_until(Duration::from_secs(20), || {
        let counts = counts_by_topic(&recd.rec_json(&["status", "m"])[0]["topics"]);
        if counts != last.0 {
            last = (counts, Instant::now());
        }
        last.1.elapsed() >= Duration::from_millis(500)
    });
    assert!(stable, "recd's counts kept moving: {:?}", last.0);
    // A scrape may be served a snapshot up to 250 ms old: one that began a second after
    // the counts settled saw them settled.
    let settled = unix_now();
    let scraped = wait_until(SCRAPE_INTERVAL * 10, || {
        (prometheus.query("timestamp(up{job=\"recd\"})").as_array())
            .and_then(|r| r.first()?["value"][1].as_str()?.parse::<f64>().ok())
            .is_some_and(|at| at > settled + 1.0)
    });
    assert!(
        scraped,
        "Prometheus scraped no more: {}\nits log:\n{}",
        prometheus.query("up"),
        prometheus.log()
    );

    let up = prometheus.query("up{job=\"recd\"}");
    assert_eq!(up.as_array().map(Vec::len), Some(1), "{up}");
    assert_eq!(whole(&up[0]), 1, "the target is up: {up}");
    let folded = prometheus.query("recd_metrics_topics_folded");
    assert_eq!(whole(&folded[0]), 0, "{folded}");
    let stored = COUNTS
        .map(|(_, metric)| by_topic(&prometheus.query(&format!("{metric}{{session=\"m\"}}"))));
    let unknown_loss = by_topic(&prometheus.query("recd_unknown_loss{session=\"m\"}"));
    let health = by_topic(&prometheus.query("recd_topic_health{session=\"m\"}"));

    // recd-load's queues (16 frames, 256 small messages, with sequence numbers) leave
    // nothing that nobody can count: rec stop exits 0.
    let stop = recd.stop("m");
    stop.assert_clean();
    let stopped = &stop.session;
    let reported = counts_by_topic(&stopped["topics"]);
    assert_eq!(reported.len(), 12, "{stopped}");
    let topics: BTreeSet<&String> = reported.keys().collect();
    for (index, ((key, metric), series)) in COUNTS.iter().zip(&stored).enumerate() {
        assert_eq!(
            series.keys().collect::<BTreeSet<_>>(),
            topics,
            "the topics of {metric} in Prometheus and of rec stop"
        );
        for (topic, counts) in &reported {
            assert_eq!(
                series[topic], counts[index],
                "{metric} of {topic} in Prometheus, {key} in rec stop: {stopped}"
            );
        }
    }
    for topic in (stopped["topics"].as_array().unwrap()).iter() {
        let name = topic["name"].as_str().unwrap();
        let expected = u64::from(topic["unknown_loss"] == true);
        assert_eq!(unknown_loss.get(name), Some(&expected), "{topic}");
        let state = topic["health"]["state"].as_str().expect("a health state");
        let expected = ["ok", "slow", "stalled", "missing"]
            .iter()
            .position(|s| *s == state)
            .map(|value| value as u64);
        assert_eq!(health.get(name).copied(), expected, "{topic}");
    }
    let written: u64 = reported.values().map(|c| c[1]).sum();
    assert!(written > 0, "{stopped}");

    // The incident is cut once its window is written (by the stop at the latest): none
    // waits, it still pins, and Prometheus stored it as recd counted it.
    let cut = wait_until(Duration::from_secs(30), || {
        let text = http_get(address, "/metrics").body;
        sample(&text, "recd_incidents_waiting_to_cut") == Some(0.0)
    });
    let listed = recd.rec_json(&["incidents", "m"]);
    assert!(cut, "the incident is still waiting to be cut: {listed}");
    assert_eq!(listed.as_array().map(Vec::len), Some(1), "{listed}");
    assert_eq!(listed[0]["id"], id.as_str(), "{listed}");
    assert_eq!(listed[0]["origin"], "cli", "{listed}");
    assert_eq!(listed[0]["cut"], "cut", "{listed}");
    let incidents = prometheus.query("recd_incidents_total{origin=\"cli\"}");
    assert_eq!(whole(&incidents[0]), 1, "{incidents}");
    let refused = prometheus.query("recd_incidents_refused_total{origin=\"cli\"}");
    assert_eq!(whole(&refused[0]), 1, "{refused}");

    // The session's series end with it (Prometheus marks them stale at the next scrape).
    let ended = wait_until(SCRAPE_INTERVAL * 10, || {
        (prometheus
            .query("recd_messages_written_total{session=\"m\"}")
            .as_array())
        .is_some_and(Vec::is_empty)
    });
    assert!(
        ended,
        "{}",
        prometheus.query("recd_messages_written_total{session=\"m\"}")
    );
    eprintln!("http_metrics: {:.1} s", began.elapsed().as_secs_f64());
}
