//! The fleet's requests over MQTT (`[fleet] request_keys`): real recd against Debian's
//! Mosquitto (TLS, client certificates) and SeaweedFS, the cloud played by
//! `mosquitto_pub`/`mosquitto_sub` with requests signed by an openssl-made Ed25519 key. A
//! window recorded before anyone asked reaches the bucket holding exactly its messages,
//! once however often it is delivered; unsigned, forged, foreign, stale and replayed
//! requests change nothing; a request published while recd is down is served once it is
//! back, and never again, also when the broker restarts meanwhile or has an outage. A
//! window naming topics reaches the bucket holding only theirs.

use std::path::{Path, PathBuf};
use std::time::Duration;

use recd_chain::SigningKey;
use recd_fleet::{Action, Envelope, Request, UploadsMode, WindowAsk};
use recd_testkit::{
    finish_load, openssl_keys, read_mcap, wait_until, ClientCert, Domain, Mosquitto, Recd,
    RecdLoad, SeaweedFs, Subscription,
};
use serde_json::Value;

const REPLIES: &str = "recd/replies/test";
const DAY_NS: u64 = 86_400_000_000_000;

fn now_ns() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64
}

/// The fleet's key pair made by openssl in `dir`: the private key and its public file.
fn fleet_key(dir: &Path) -> (SigningKey, PathBuf) {
    std::fs::create_dir_all(dir).unwrap();
    let (key, public) = openssl_keys(dir, 0o600);
    (SigningKey::load(&key).unwrap(), public)
}

/// recd as vehicle `car-1` on `broker`, taking requests signed by `public`; uploading to
/// `s3` when given.
fn vehicle_config(
    root: &Path,
    broker: &Mosquitto,
    vehicle: &ClientCert,
    public: &Path,
    s3: Option<&SeaweedFs>,
) -> String {
    let mut config = format!(
        "[fleet]\nbroker = {url:?}\nvehicle = \"car-1\"\nca_file = {ca:?}\ncert_file = {cert:?}\nkey_file = {key:?}\nholdings_period = \"1s\"\nrequest_keys = [{public:?}]\n",
        url = broker.url(),
        ca = broker.ca(),
        cert = vehicle.cert,
        key = vehicle.key,
    );
    if let Some(s3) = s3 {
        let credentials = root.join("credentials");
        s3.credentials_file(&credentials);
        config += &format!(
            "\n[upload]\nendpoint = {:?}\nbucket = {:?}\ncredentials_file = {credentials:?}\nvehicle_id = \"car-1\"\nprefix = \"fleet/{{vehicle}}/{{session}}\"\n",
            s3.endpoint, s3.bucket
        );
    }
    config
}

/// A request `id` of `action` for `vehicle`, issued at `issued_ns`.
fn request(id: &str, vehicle: &str, issued_ns: u64, action: Action) -> Request {
    Request {
        id: id.into(),
        vehicle: vehicle.into(),
        issued_ns,
        action,
    }
}

/// The replies so far (probes left out) to the request `id`.
fn replies_to(subscription: &Subscription, id: &str) -> Vec<Value> {
    (subscription.lines().iter())
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter(|reply| reply["id"] == id)
        .collect()
}

/// The reply to `id` that `accept` takes, within `limit`; the logs if none comes.
fn reply_until(
    subscription: &Subscription,
    id: &str,
    limit: Duration,
    recd: &Recd,
    mut accept: impl FnMut(&Value) -> bool,
) -> Value {
    let mut found = None;
    wait_until(limit, || {
        found = replies_to(subscription, id).into_iter().find(|r| accept(r));
        found.is_some()
    });
    found.unwrap_or_else(|| {
        panic!(
            "no such reply to {id}: {:?}\n{}",
            replies_to(subscription, id),
            recd.log()
        )
    })
}

/// The refusal of the request in `payload`, whose id is `id`.
fn refusal(
    broker: &Mosquitto,
    cloud: &ClientCert,
    subscription: &Subscription,
    recd: &Recd,
    (id, payload): (&str, Vec<u8>),
) -> String {
    broker.publish(cloud, "recd/car-1/requests", &payload, Some((REPLIES, id)));
    let reply = reply_until(subscription, id, Duration::from_secs(20), recd, |_| true);
    assert_eq!(reply["state"], "refused", "{reply}");
    assert_eq!(reply["last"], true, "{reply}");
    reply["reason"].as_str().unwrap().to_string()
}

/// The messages of an MCAP file as Python's `mcap` reads them: (topic, log time, digest).
fn messages(path: &Path) -> Vec<(String, u64, String)> {
    let read = read_mcap(path);
    let mut messages: Vec<_> = (read["messages"].as_array().unwrap().iter())
        .map(|m| {
            (
                m["topic"].as_str().unwrap().to_string(),
                m["log_time"].as_u64().unwrap(),
                m["sha256"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    messages.sort();
    messages
}

#[test]
fn a_signed_window_from_the_past_reaches_the_bucket_once_and_bad_requests_change_nothing() {
    let broker = Mosquitto::start();
    let vehicle = broker.client("car-1");
    let cloud = broker.client("cloud");
    let s3 = SeaweedFs::start("recordings");
    let root = tempfile::tempdir().unwrap();
    let (key, public) = fleet_key(&root.path().join("fleet"));
    let (other, _) = fleet_key(&root.path().join("other"));
    let domain = Domain::new();
    let config = vehicle_config(root.path(), &broker, &vehicle, &public, Some(&s3));
    let recd = Recd::start_with(root.path(), &domain, &config, &[]);
    let replies = broker.subscribe(&cloud, REPLIES);
    let send = |request: &Request| {
        let payload = Envelope::seal(request, Some(&key));
        broker.publish(
            &cloud,
            "recd/car-1/requests",
            &payload,
            Some((REPLIES, &request.id)),
        );
    };

    // Only incidents' files may leave the vehicle now: the session's own stay.
    send(&request(
        "mode-1",
        "all",
        now_ns(),
        Action::Uploads {
            mode: UploadsMode::Incidents,
        },
    ));
    let done = reply_until(&replies, "mode-1", Duration::from_secs(30), &recd, |_| true);
    assert_eq!(done["state"], "done", "{done}");

    recd.rec_json(&["start", "--name", "drive", "--topic", "cam/*"]);
    let sent: u64 = (finish_load(domain.load(&RecdLoad::one_camera("cam/", 50_000, 150))).topics)
        .iter()
        .map(|t| t.sent)
        .sum();
    assert!(recd.wait_written("drive", sent), "{}", recd.log());
    recd.rec_json(&["stop", "drive"]);
    let listed = recd.listed("drive");
    let files: Vec<PathBuf> = (listed["files"].as_array().unwrap().iter())
        .map(|f| PathBuf::from(f["path"].as_str().unwrap()))
        .collect();
    let recorded: Vec<_> = files.iter().flat_map(|f| messages(f)).collect();
    let first = recorded.iter().map(|m| m.1).min().unwrap();
    let last = recorded.iter().map(|m| m.1).max().unwrap();
    let (from_ns, to_ns) = (first + (last - first) / 3, first + 2 * (last - first) / 3);
    let window = |from_ns, to_ns| {
        Action::Window(WindowAsk {
            from_ns: Some(from_ns),
            to_ns: Some(to_ns),
            note: "the cloud saw a pothole".into(),
            ..Default::default()
        })
    };
    let pull = request("pull-1", "car-1", now_ns(), window(from_ns, to_ns));

    // Refused, each for its reason, and nothing pinned.
    let unsigned = (
        "u-1",
        Envelope::seal(
            &request("u-1", "car-1", now_ns(), window(from_ns, to_ns)),
            None,
        ),
    );
    assert!(refusal(&broker, &cloud, &replies, &recd, unsigned).starts_with("unsigned"));
    let forged = (
        "f-1",
        Envelope::seal(
            &request("f-1", "car-1", now_ns(), window(from_ns, to_ns)),
            Some(&other),
        ),
    );
    assert!(refusal(&broker, &cloud, &replies, &recd, forged)
        .contains("not in this vehicle's [fleet] request_keys"));
    let foreign = (
        "o-1",
        Envelope::seal(
            &request("o-1", "car-2", now_ns(), window(from_ns, to_ns)),
            Some(&key),
        ),
    );
    assert!(refusal(&broker, &cloud, &replies, &recd, foreign).contains("for vehicle \"car-2\""));
    let stale = (
        "s-1",
        Envelope::seal(
            &request(
                "s-1",
                "car-1",
                now_ns() - 5 * DAY_NS,
                window(from_ns, to_ns),
            ),
            Some(&key),
        ),
    );
    assert!(refusal(&broker, &cloud, &replies, &recd, stale).starts_with("stale"));
    let gone = (
        "g-1",
        Envelope::seal(
            &request(
                "g-1",
                "car-1",
                now_ns(),
                window(first - 60_000_000_000, to_ns),
            ),
            Some(&key),
        ),
    );
    let why = refusal(&broker, &cloud, &replies, &recd, gone);
    assert!(
        why.contains("before the oldest moment this vehicle still holds"),
        "{why}"
    );
    let incidents = recd.rec_json(&["incidents"]);
    assert_eq!(incidents.as_array().map(Vec::len), Some(0), "{incidents}");

    // The window: accepted, cut, uploaded; the same request again is a replay.
    send(&pull);
    let accepted = reply_until(&replies, "pull-1", Duration::from_secs(30), &recd, |r| {
        r["state"] == "accepted"
    });
    assert_eq!(accepted["incidents"][0]["session"], "drive", "{accepted}");
    let uploaded = reply_until(&replies, "pull-1", Duration::from_secs(90), &recd, |r| {
        r["last"] == true
    });
    assert_eq!(uploaded["state"], "uploaded", "{uploaded}");
    send(&pull);
    let replayed = reply_until(&replies, "pull-1", Duration::from_secs(30), &recd, |r| {
        r["state"] == "refused"
    });
    assert!(
        replayed["reason"].as_str().unwrap().starts_with("replayed"),
        "{replayed}"
    );
    let states: Vec<String> = (replies_to(&replies, "pull-1").iter())
        .map(|r| r["state"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(states, ["accepted", "cut", "uploaded", "refused"]);
    let incidents = recd.rec_json(&["incidents"]);
    let incidents = incidents.as_array().unwrap();
    assert_eq!(incidents.len(), 1, "{incidents:?}");
    assert_eq!(incidents[0]["origin"], "cloud");
    assert_eq!(incidents[0]["id"], "pull-1");

    // The bucket holds the window's file and none of the session's own (mode incidents).
    let keys: Vec<&str> = (uploaded["objects"].as_array().unwrap().iter())
        .map(|k| k.as_str().unwrap())
        .collect();
    assert_eq!(keys.len(), 1, "{uploaded}");
    let objects = s3.objects("");
    let listed_keys: Vec<&str> = objects.iter().map(|o| o.key.as_str()).collect();
    assert_eq!(
        listed_keys, keys,
        "only the incident's file left the vehicle"
    );
    let downloaded = root.path().join("downloaded");
    std::fs::create_dir_all(&downloaded).unwrap();
    s3.download("", &downloaded);
    let name = Path::new(keys[0]).file_name().unwrap();
    let cut = messages(&downloaded.join(name));
    let expected: Vec<_> = (recorded.iter())
        .filter(|m| (from_ns..=to_ns).contains(&m.1))
        .cloned()
        .collect();
    assert!(
        expected.len() > 10,
        "{} messages in the window",
        expected.len()
    );
    assert_eq!(cut, expected, "exactly the window's messages");
}

#[test]
fn a_request_published_while_recd_is_down_is_served_once_it_is_back_and_never_again() {
    let broker = Mosquitto::start();
    let vehicle = broker.client("car-1");
    let cloud = broker.client("cloud");
    let root = tempfile::tempdir().unwrap();
    let (key, public) = fleet_key(&root.path().join("fleet"));
    let domain = Domain::new();
    let config = vehicle_config(root.path(), &broker, &vehicle, &public, None);
    let mut recd = Recd::start_with(root.path(), &domain, &config, &[]);
    let online = |recd: &Recd| {
        let up = wait_until(Duration::from_secs(30), || {
            (broker.retained(&cloud, "recd/car-1/online"))
                .is_some_and(|text| text.contains("\"online\":true"))
        });
        assert!(up, "{}", recd.log());
    };
    online(&recd);
    recd.signal_and_wait(libc::SIGTERM, Duration::from_secs(60));

    let replies = broker.subscribe(&cloud, REPLIES);
    let status = request("status-1", "car-1", now_ns(), Action::Status);
    let mode = request(
        "mode-1",
        "all",
        now_ns(),
        Action::Uploads {
            mode: UploadsMode::None,
        },
    );
    for sent in [&status, &mode] {
        let payload = Envelope::seal(sent, Some(&key));
        let topic = if sent.vehicle == "all" {
            "recd/all/requests"
        } else {
            "recd/car-1/requests"
        };
        broker.publish(&cloud, topic, &payload, Some((REPLIES, &sent.id)));
    }
    let mut recd = Recd::start_with(root.path(), &domain, &config, &[]);
    let served = reply_until(&replies, "status-1", Duration::from_secs(60), &recd, |_| {
        true
    });
    assert_eq!(served["state"], "done", "{served}");
    assert!(served["status"].is_array(), "{served}");
    reply_until(&replies, "mode-1", Duration::from_secs(30), &recd, |r| {
        r["state"] == "done"
    });

    // Restarted again: nothing is delivered or served twice.
    recd.signal_and_wait(libc::SIGTERM, Duration::from_secs(60));
    let recd = Recd::start_with(root.path(), &domain, &config, &[]);
    online(&recd);
    std::thread::sleep(Duration::from_secs(3));
    assert_eq!(replies_to(&replies, "status-1").len(), 1, "{}", recd.log());
    assert_eq!(replies_to(&replies, "mode-1").len(), 1, "{}", recd.log());
    let uploads = recd.rec_json(&["upload", "--status"]);
    assert_eq!(
        uploads["mode"], "none",
        "kept across the restart: {uploads}"
    );
}

#[test]
fn a_window_naming_topics_reaches_the_bucket_holding_only_those_topics() {
    let broker = Mosquitto::start();
    let vehicle = broker.client("car-1");
    let cloud = broker.client("cloud");
    let s3 = SeaweedFs::start("recordings");
    let root = tempfile::tempdir().unwrap();
    let (key, public) = fleet_key(&root.path().join("fleet"));
    let domain = Domain::new();
    let config = vehicle_config(root.path(), &broker, &vehicle, &public, Some(&s3));
    let recd = Recd::start_with(root.path(), &domain, &config, &[]);
    let replies = broker.subscribe(&cloud, REPLIES);

    // Two cameras, cam/camera/0 and cam/camera/1.
    recd.rec_json(&["start", "--name", "drive", "--topic", "cam/*"]);
    let load = RecdLoad::new("cam/")
        .cameras(2)
        .frame_size(20_000)
        .fps(30)
        .count(150)
        .duration(Duration::from_secs(60))
        .wait_subscribers(1);
    let sent: u64 = (finish_load(domain.load(&load)).topics.iter())
        .map(|t| t.sent)
        .sum();
    assert!(recd.wait_written("drive", sent), "{}", recd.log());
    recd.rec_json(&["stop", "drive"]);
    let listed = recd.listed("drive");
    let recorded: Vec<_> = (listed["files"].as_array().unwrap().iter())
        .flat_map(|f| messages(Path::new(f["path"].as_str().unwrap())))
        .collect();
    let topics: std::collections::BTreeSet<&str> = recorded.iter().map(|m| m.0.as_str()).collect();
    assert_eq!(
        topics.into_iter().collect::<Vec<_>>(),
        ["cam/camera/0", "cam/camera/1"]
    );
    let first = recorded.iter().map(|m| m.1).min().unwrap();
    let last = recorded.iter().map(|m| m.1).max().unwrap();
    let (from_ns, to_ns) = (first + (last - first) / 3, first + 2 * (last - first) / 3);
    let window = |topics: &[&str]| {
        Action::Window(WindowAsk {
            from_ns: Some(from_ns),
            to_ns: Some(to_ns),
            topics: topics.iter().map(|t| t.to_string()).collect(),
            note: "camera 1 only".into(),
            ..Default::default()
        })
    };
    let signed = |id: &str, topics: &[&str]| {
        Envelope::seal(&request(id, "car-1", now_ns(), window(topics)), Some(&key))
    };

    // An empty pattern, and patterns no recording matched: refused, nothing pinned.
    let empty = ("e-1", signed("e-1", &["cam/*", ""]));
    let why = refusal(&broker, &cloud, &replies, &recd, empty);
    assert!(why.contains("is empty"), "{why}");
    let unmatched = ("n-1", signed("n-1", &["lidar/*"]));
    let why = refusal(&broker, &cloud, &replies, &recd, unmatched);
    assert!(
        why.contains("recorded a topic matching [\"lidar/*\"]") && why.contains("cam/camera/0"),
        "{why}"
    );
    let incidents = recd.rec_json(&["incidents"]);
    assert_eq!(incidents.as_array().map(Vec::len), Some(0), "{incidents}");

    // The window of camera 1: accepted, cut, uploaded holding its messages alone.
    let id = "pull-t";
    let payload = signed(id, &["cam/camera/1"]);
    broker.publish(&cloud, "recd/car-1/requests", &payload, Some((REPLIES, id)));
    let uploaded = reply_until(&replies, id, Duration::from_secs(90), &recd, |r| {
        r["last"] == true
    });
    assert_eq!(uploaded["state"], "uploaded", "{uploaded}");
    let incidents = recd.rec_json(&["incidents"]);
    assert_eq!(
        incidents[0]["topics"],
        serde_json::json!(["cam/camera/1"]),
        "{incidents}"
    );
    let keys: Vec<&str> = (uploaded["objects"].as_array().unwrap().iter())
        .map(|k| k.as_str().unwrap())
        .collect();
    assert_eq!(keys.len(), 1, "one session, one source family: {uploaded}");
    let downloaded = root.path().join("downloaded");
    std::fs::create_dir_all(&downloaded).unwrap();
    s3.download(keys[0], &downloaded);
    let name = Path::new(keys[0]).file_name().unwrap();
    let cut = messages(&downloaded.join(name));
    let expected: Vec<_> = (recorded.iter())
        .filter(|m| m.0 == "cam/camera/1" && (from_ns..=to_ns).contains(&m.1))
        .cloned()
        .collect();
    assert!(
        expected.len() > 10,
        "{} messages in the window",
        expected.len()
    );
    assert_eq!(cut, expected, "exactly camera 1's messages of the window");
}

#[test]
fn a_request_queued_for_the_vehicle_survives_a_broker_restart_and_an_outage_is_bridged() {
    let mut broker = Mosquitto::prepare().persistent();
    let vehicle = broker.client("car-1");
    let cloud = broker.client("cloud");
    broker.run();
    let root = tempfile::tempdir().unwrap();
    let (key, public) = fleet_key(&root.path().join("fleet"));
    let domain = Domain::new();
    let config = vehicle_config(root.path(), &broker, &vehicle, &public, None);
    let mut recd = Recd::start_with(root.path(), &domain, &config, &[]);
    let online = |broker: &Mosquitto, recd: &Recd| {
        let up = wait_until(Duration::from_secs(60), || {
            (broker.retained(&cloud, "recd/car-1/online"))
                .is_some_and(|text| text.contains("\"online\":true"))
        });
        assert!(up, "{}\n{}", recd.log(), broker.log());
    };
    online(&broker, &recd);
    let send = |broker: &Mosquitto, id: &str| {
        let sent = request(id, "car-1", now_ns(), Action::Status);
        let payload = Envelope::seal(&sent, Some(&key));
        broker.publish(&cloud, "recd/car-1/requests", &payload, Some((REPLIES, id)));
    };

    // Queued for the stopped vehicle, then the broker restarts (saving its sessions).
    recd.signal_and_wait(libc::SIGTERM, Duration::from_secs(60));
    send(&broker, "queued-1");
    broker.stop();
    broker.run();
    let replies = broker.subscribe(&cloud, REPLIES);
    let recd = Recd::start_with(root.path(), &domain, &config, &[]);
    let served = reply_until(&replies, "queued-1", Duration::from_secs(60), &recd, |_| {
        true
    });
    assert_eq!(served["state"], "done", "{served}");

    // An outage while recd runs: its session resumes, and a request published as soon as
    // the broker is back (before recd reconnected, or after) is served.
    online(&broker, &recd);
    broker.stop();
    broker.run();
    let replies = broker.subscribe(&cloud, REPLIES);
    send(&broker, "after-outage-1");
    let served = reply_until(
        &replies,
        "after-outage-1",
        Duration::from_secs(90),
        &recd,
        |_| true,
    );
    assert_eq!(served["state"], "done", "{served}");
    std::thread::sleep(Duration::from_secs(3));
    assert_eq!(
        replies_to(&replies, "after-outage-1").len(),
        1,
        "{}",
        recd.log()
    );
    assert!(
        replies_to(&replies, "queued-1").is_empty(),
        "served once: {}",
        recd.log()
    );
}
