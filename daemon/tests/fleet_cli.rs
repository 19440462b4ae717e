//! `rec fleet --broker` against a real recd on Debian's Mosquitto (MQTT 5, TLS, client
//! certificates made by openssl): the operator's `vehicles` lists the vehicle online with
//! the oldest moment it holds, and `find` finds it for a window inside what it recorded,
//! not for one before it nor for a topic it did not record; what recd retains is read
//! independently with Mosquitto's own `mosquitto_sub`.

use std::process::Output;
use std::time::Duration;

use recd_testkit::{finish_load, wait_until, ClientCert, Domain, Mosquitto, Recd, RecdLoad};
use serde_json::Value;

/// `[fleet]` for `broker` as vehicle `car-1`, holdings at most every second.
fn fleet_config(broker: &Mosquitto, vehicle: &ClientCert) -> String {
    format!(
        "[fleet]\nbroker = {url:?}\nvehicle = \"car-1\"\nca_file = {ca:?}\ncert_file = {cert:?}\nkey_file = {key:?}\nholdings_period = \"1s\"\n",
        url = broker.url(),
        ca = broker.ca(),
        cert = vehicle.cert,
        key = vehicle.key,
    )
}

/// `rec fleet --broker … ARGS` as the operator.
fn fleet(recd: &Recd, broker: &Mosquitto, operator: &ClientCert, args: &[&str]) -> Output {
    let mut all = broker.operator_args(operator);
    all.extend(["--listen", "1s"].iter().chain(args).map(|a| a.to_string()));
    let all: Vec<&str> = all.iter().map(String::as_str).collect();
    recd.rec(&all)
}

/// [`fleet`]'s JSON, asserting success.
fn fleet_json(recd: &Recd, broker: &Mosquitto, operator: &ClientCert, args: &[&str]) -> Value {
    let output = fleet(recd, broker, operator, args);
    assert!(
        output.status.success(),
        "rec fleet {args:?}: {}\n{}",
        String::from_utf8_lossy(&output.stderr),
        broker.log()
    );
    serde_json::from_slice(&output.stdout).expect("rec fleet prints JSON")
}

#[test]
fn the_operator_lists_the_vehicle_and_finds_what_it_recorded_from_retained_holdings() {
    let broker = Mosquitto::start();
    let vehicle = broker.client("car-1");
    let operator = broker.client("operator");
    let root = tempfile::tempdir().unwrap();
    let domain = Domain::new();
    let recd = Recd::start_with(root.path(), &domain, &fleet_config(&broker, &vehicle), &[]);
    recd.rec_json(&["start", "--name", "drive", "--topic", "cam/*"]);
    let sent: u64 = (finish_load(domain.load(&RecdLoad::one_camera("cam/", 200_000, 15))).topics)
        .iter()
        .map(|t| t.sent)
        .sum();
    assert!(recd.wait_written("drive", sent), "{}", recd.log());
    recd.rec_json(&["stop", "drive"]);

    // The stopped session's holdings (with its topics), as mosquitto_sub reads them.
    let mut holdings = Value::Null;
    let retained = wait_until(Duration::from_secs(30), || {
        holdings = (broker.retained(&operator, "recd/car-1/holdings"))
            .and_then(|text| serde_json::from_str(&text).ok())
            .unwrap_or(Value::Null);
        holdings["sessions"][0]["recording"] == false
    });
    assert!(retained, "{holdings}\n{}\n{}", broker.log(), recd.log());
    let span = &holdings["sessions"][0]["spans"][0];
    let (from, to) = (
        span["from_ns"].as_u64().unwrap(),
        span["to_ns"].as_u64().unwrap(),
    );
    assert!(to > from, "{holdings}");

    let vehicles = fleet_json(&recd, &broker, &operator, &["vehicles", "--json"]);
    let listed = vehicles.as_array().expect("an array");
    assert_eq!(listed.len(), 1, "{vehicles}");
    let car = &listed[0];
    assert_eq!(car["vehicle"], "car-1", "{vehicles}");
    assert_eq!(car["online"], true, "{vehicles}");
    assert_eq!(car["version"], env!("CARGO_PKG_VERSION"), "{vehicles}");
    assert_eq!(car["oldest_ns"], holdings["oldest_ns"], "{vehicles}");
    assert_eq!(car["oldest_ns"].as_u64(), Some(from), "{vehicles}");
    assert_eq!(car["sessions"], 1, "{vehicles}");
    assert!(car["disk"]["used_bytes"].as_u64() > Some(0), "{vehicles}");
    let table = fleet(&recd, &broker, &operator, &["vehicles"]);
    let text = String::from_utf8_lossy(&table.stdout);
    assert!(
        table.status.success() && text.contains("car-1") && text.contains("online"),
        "{text}"
    );

    // A window inside what it recorded finds it, clipped to the window; one before, or a
    // topic it did not record, finds nothing.
    let quarter = (to - from) / 4;
    let (inside_from, inside_to) = ((from + quarter).to_string(), (to - quarter).to_string());
    let inside = ["find", "--from", &inside_from, "--to", &inside_to, "--json"];
    let found = fleet_json(&recd, &broker, &operator, &inside);
    let found = found.as_array().expect("an array");
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0]["vehicle"], "car-1");
    assert_eq!(found[0]["session"], "drive");
    assert_eq!(found[0]["from_ns"].as_u64(), Some(from + quarter));
    assert_eq!(found[0]["to_ns"].as_u64(), Some(to - quarter));
    assert_eq!(found[0]["topics"][0], "cam/camera/0", "{found:?}");
    let with_topic = [&inside[..5], &["--topic", "cam/*", "--json"]].concat();
    assert_eq!(
        fleet_json(&recd, &broker, &operator, &with_topic)
            .as_array()
            .unwrap()
            .len(),
        1
    );
    let other_topic = [&inside[..5], &["--topic", "/lidar/*", "--json"]].concat();
    assert_eq!(
        fleet_json(&recd, &broker, &operator, &other_topic),
        Value::Array(Vec::new())
    );
    let (before_from, before_to) = (
        (from - 120_000_000_000).to_string(),
        (from - 60_000_000_000).to_string(),
    );
    let before = ["find", "--from", &before_from, "--to", &before_to, "--json"];
    assert_eq!(
        fleet_json(&recd, &broker, &operator, &before),
        Value::Array(Vec::new())
    );
    // Relative times: the last hour holds it.
    let recent = fleet(
        &recd,
        &broker,
        &operator,
        &["find", "--from", "1h ago", "--to", "now"],
    );
    let text = String::from_utf8_lossy(&recent.stdout);
    assert!(recent.status.success() && text.contains("drive"), "{text}");

    // The DDS commands refuse --broker, as a usage error.
    let refused = fleet(&recd, &broker, &operator, &["status"]);
    assert_eq!(refused.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&refused.stderr).contains("leave out --broker"));
}
