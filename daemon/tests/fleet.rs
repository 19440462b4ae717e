//! The fleet over MQTT (`[fleet]`): real recd against Debian's Mosquitto over MQTT 5 with
//! TLS and client certificates made by openssl, and the cloud played by Mosquitto's own
//! `mosquitto_sub`: the vehicle's retained presence (online with its version; offline by
//! its last will when it dies, and by itself when it stops), its retained holdings agreeing
//! with `rec list`, and a broker that is down costing one log line, not the recording.

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

/// The retained JSON on `topic`, once `accept` takes it (at most 30 s); `recd`'s log is
/// shown if it never does.
fn retained_until(
    broker: &Mosquitto,
    cloud: &ClientCert,
    recd: &Recd,
    topic: &str,
    mut accept: impl FnMut(&Value) -> bool,
) -> Value {
    let mut last = Value::Null;
    let found = wait_until(Duration::from_secs(30), || {
        last = (broker.retained(cloud, topic))
            .and_then(|text| serde_json::from_str(&text).ok())
            .unwrap_or(Value::Null);
        accept(&last)
    });
    assert!(found, "{topic}: {last}\n{}\n{}", broker.log(), recd.log());
    last
}

#[test]
fn presence_and_holdings_are_retained_and_a_dead_vehicle_is_offline_by_its_last_will() {
    let broker = Mosquitto::start();
    let vehicle = broker.client("car-1");
    let cloud = broker.client("cloud");
    let root = tempfile::tempdir().unwrap();
    let domain = Domain::new();
    let mut recd = Recd::start_with(root.path(), &domain, &fleet_config(&broker, &vehicle), &[]);
    let online = retained_until(&broker, &cloud, &recd, "recd/car-1/online", |v| {
        v["online"] == true
    });
    assert_eq!(online["vehicle"], "car-1");
    assert_eq!(online["version"], env!("CARGO_PKG_VERSION"));

    recd.rec_json(&[
        "start",
        "--name",
        "drive",
        "--topic",
        "cam/*",
        "--max-file-size",
        "2MiB",
    ]);
    let sent: u64 = (finish_load(domain.load(&RecdLoad::one_camera("cam/", 500_000, 15))).topics)
        .iter()
        .map(|t| t.sent)
        .sum();
    assert!(recd.wait_written("drive", sent), "{}", recd.log());
    recd.rec_json(&["stop", "drive"]);
    let listed = recd.listed("drive");
    let files = listed["files"].as_array().unwrap();
    let bytes: u64 = files.iter().map(|f| f["bytes"].as_u64().unwrap()).sum();
    let holdings = retained_until(&broker, &cloud, &recd, "recd/car-1/holdings", |v| {
        (v["sessions"].as_array()).is_some_and(|sessions| {
            sessions
                .iter()
                .any(|s| s["name"] == "drive" && s["recording"] == false && s["bytes"] == bytes)
        })
    });
    let session = &holdings["sessions"][0];
    assert_eq!(
        session["files"].as_u64(),
        Some(files.len() as u64),
        "{holdings}"
    );
    assert_eq!(session["topics"][0]["name"], "cam/camera/0", "{holdings}");
    assert_eq!(
        session["topics"][0]["messages"].as_u64(),
        Some(sent),
        "{holdings}"
    );
    let spans = session["spans"].as_array().unwrap();
    assert_eq!(spans.len(), 1, "one unbroken span: {holdings}");
    assert_eq!(holdings["oldest_ns"], spans[0]["from_ns"], "{holdings}");
    assert!(spans[0]["to_ns"].as_u64() > spans[0]["from_ns"].as_u64());
    assert_eq!(
        holdings["disk"]["used_bytes"].as_u64(),
        Some(bytes),
        "{holdings}"
    );
    let text = serde_json::to_string(&holdings).unwrap();
    assert!(text.len() < 64 << 10, "{} bytes", text.len());

    // A clean stop says offline; a killed recd is said offline by its last will.
    recd.signal_and_wait(libc::SIGTERM, Duration::from_secs(60));
    let offline = retained_until(&broker, &cloud, &recd, "recd/car-1/online", |v| {
        v["online"] == false
    });
    assert!(offline.get("version").is_none(), "{offline}");
    let mut recd = Recd::start_with(root.path(), &domain, &fleet_config(&broker, &vehicle), &[]);
    retained_until(&broker, &cloud, &recd, "recd/car-1/online", |v| {
        v["online"] == true
    });
    recd.signal_and_wait(libc::SIGKILL, Duration::from_secs(60));
    retained_until(&broker, &cloud, &recd, "recd/car-1/online", |v| {
        v["online"] == false
    });
}

#[test]
fn a_broker_that_is_down_costs_one_log_line_and_recd_connects_once_it_is_up() {
    let mut broker = Mosquitto::prepare();
    let vehicle = broker.client("car-1");
    let cloud = broker.client("cloud");
    let root = tempfile::tempdir().unwrap();
    let domain = Domain::new();
    let recd = Recd::start_with(root.path(), &domain, &fleet_config(&broker, &vehicle), &[]);
    recd.rec_json(&["start", "--name", "drive", "--topic", "cam/*"]);
    let sent: u64 = (finish_load(domain.load(&RecdLoad::one_camera("cam/", 100_000, 10))).topics)
        .iter()
        .map(|t| t.sent)
        .sum();
    // Recording goes on while the broker is down; tries go on (1, 2, 4 s apart).
    assert!(recd.wait_written("drive", sent), "{}", recd.log());
    std::thread::sleep(Duration::from_secs(4));
    let told = |what: &str| recd.log().matches(what).count();
    assert_eq!(
        told("the fleet's broker cannot be reached"),
        1,
        "{}",
        recd.log()
    );

    broker.run();
    retained_until(&broker, &cloud, &recd, "recd/car-1/online", |v| {
        v["online"] == true
    });
    assert_eq!(
        told("the fleet's broker is reachable again"),
        1,
        "{}",
        recd.log()
    );
    assert_eq!(
        told("the fleet's broker cannot be reached"),
        1,
        "{}",
        recd.log()
    );
}
