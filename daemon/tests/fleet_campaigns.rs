//! Campaigns over MQTT: `rec fleet campaign push` (signed with an openssl-made Ed25519
//! key) against two real recds on Debian's Mosquitto (TLS, client certificates). A
//! campaign pushed to `all` runs on both vehicles and fires on the next matching sample
//! (an iceoryx2 publisher's sequence number), making an incident of origin rule on each;
//! `rec rules` names the campaign; it survives a restart; a rule recd.toml would refuse is
//! refused with recd.toml's own message; a lower version is refused; and a campaign is gone
//! after its expiry, file and all.

use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::Duration;

use recd_testkit::{
    finish_load, openssl_keys, recd_refused, wait_until, ClientCert, Domain, Mosquitto, Recd,
    RecdLoad,
};
use serde_json::Value;

/// Fires at the 300th sample of the publisher's first small topic (3 s in at 100 Hz).
const RULE: &str = "[[rule]]\nname = \"seq300\"\ntopic = \"drive/small/0\"\nfields = { seq = \"u64@0\" }\nwhen = \"msg.seq == 300\"\nbefore = \"2s\"\nafter = \"500ms\"\n";

/// A rule each rule check passes but recd.toml's refuses without remote control.
const FLEET_RULE: &str = "[[rule]]\nname = \"told\"\nhealth = \"drive/*\"\nfleet = true\n";

/// recd as vehicle `id` on `broker`, taking requests signed by the key whose public half
/// is `public`.
fn vehicle(root: &Path, domain: &Domain, broker: &Mosquitto, id: &str, public: &Path) -> Recd {
    let cert: ClientCert = broker.client(id);
    let config = format!(
        "[fleet]\nbroker = {url:?}\nvehicle = {id:?}\nca_file = {ca:?}\ncert_file = {cert:?}\nkey_file = {key:?}\nholdings_period = \"1s\"\nrequest_keys = [{public:?}]\n",
        url = broker.url(),
        ca = broker.ca(),
        cert = cert.cert,
        key = cert.key,
    );
    Recd::start_with(root, domain, &config, &[])
}

/// The operator: the broker, its client certificate and the fleet's key.
struct Operator<'a> {
    broker: &'a Mosquitto,
    cert: ClientCert,
    key: PathBuf,
}

impl Operator<'_> {
    /// `rec fleet --broker … --key KEY campaign push ARGS --json` (run beside `recd`).
    fn push(&self, recd: &Recd, args: &[&str]) -> (Output, Value) {
        let mut all = self.broker.operator_args(&self.cert);
        all.extend(["--key".to_string(), self.key.to_string_lossy().into_owned()]);
        all.extend(
            ["campaign", "push"]
                .iter()
                .chain(args)
                .map(|a| a.to_string()),
        );
        all.push("--json".into());
        let all: Vec<&str> = all.iter().map(String::as_str).collect();
        let output = recd.rec(&all);
        let outcome = serde_json::from_slice(&output.stdout).unwrap_or_else(|_| {
            panic!(
                "rec fleet campaign push {args:?}: {}",
                String::from_utf8_lossy(&output.stderr)
            )
        });
        (output, outcome)
    }

    /// The reason the one vehicle asked gave for refusing the push of `args`.
    fn refusal(&self, recd: &Recd, args: &[&str]) -> String {
        let (output, outcome) = self.push(recd, args);
        assert!(!output.status.success(), "{outcome}");
        assert_eq!(outcome["replies"][0]["state"], "refused", "{outcome}");
        outcome["replies"][0]["reason"]
            .as_str()
            .unwrap()
            .to_string()
    }
}

/// Each vehicle's state in `outcome`'s replies.
fn states(outcome: &Value) -> Vec<(String, String)> {
    let mut states: Vec<_> = (outcome["replies"].as_array().unwrap().iter())
        .map(|r| {
            let text = |key: &str| r[key].as_str().unwrap_or_default().to_string();
            (text("vehicle"), text("state"))
        })
        .collect();
    states.sort();
    states
}

/// The rules `rec rules` shows: name and origin.
fn rules(recd: &Recd) -> Vec<(String, String)> {
    (recd.rec_json(&["rules"]).as_array().unwrap().iter())
        .map(|r| {
            let text = |key: &str| r[key].as_str().unwrap().to_string();
            (text("name"), text("origin"))
        })
        .collect()
}

fn small_load(domain: &Domain) -> std::process::Child {
    domain.load(
        &RecdLoad::new("drive/")
            .cameras(0)
            .small_topics(1)
            .small_rate(100)
            .count(500)
            .duration(Duration::from_secs(30))
            .wait_subscribers(1),
    )
}

#[test]
fn a_campaign_pushed_to_all_fires_on_every_vehicle_survives_a_restart_and_expires() {
    let broker = Mosquitto::start();
    let root = tempfile::tempdir().unwrap();
    let keys = root.path().join("fleet");
    std::fs::create_dir_all(&keys).unwrap();
    let (key, public) = openssl_keys(&keys, 0o600);
    let operator = Operator {
        broker: &broker,
        cert: broker.client("operator"),
        key,
    };
    let ids = ["car-1", "car-2"];
    let roots: Vec<_> = ids.iter().map(|id| root.path().join(id)).collect();
    roots
        .iter()
        .for_each(|root| std::fs::create_dir_all(root).unwrap());
    let domains: Vec<Domain> = ids.iter().map(|_| Domain::new()).collect();
    let recds: Vec<Recd> = (0..2)
        .map(|i| vehicle(&roots[i], &domains[i], &broker, ids[i], &public))
        .collect();
    let online = wait_until(Duration::from_secs(30), || {
        ids.iter().all(|id| {
            (broker.retained(&operator.cert, &format!("recd/{id}/online")))
                .is_some_and(|text| text.contains("\"online\":true"))
        })
    });
    assert!(online, "{}", broker.log());
    let file = root.path().join("rules.toml");
    std::fs::write(&file, RULE).unwrap();
    let file = file.to_str().unwrap();

    // Pushed to every vehicle: both take it, and its rule fires on each one's samples.
    let (output, outcome) = operator.push(
        &recds[0],
        &[file, "--name", "seq", "--version", "1", "--expires", "1h"],
    );
    assert!(output.status.success(), "{outcome}");
    let done = ids
        .iter()
        .map(|id| (id.to_string(), "done".to_string()))
        .collect::<Vec<_>>();
    assert_eq!(states(&outcome), done, "{outcome}");
    let loads: Vec<_> = (0..2)
        .map(|i| {
            recds[i].rec_json(&["start", "--name", "drive", "--topic", "drive/*"]);
            small_load(&domains[i])
        })
        .collect();
    for load in loads {
        finish_load(load);
    }
    for recd in &recds {
        let fired = wait_until(Duration::from_secs(30), || {
            let listed = recd.rec_json(&["incidents", "drive"]);
            !listed.as_array().unwrap().is_empty()
        });
        assert!(fired, "{}", recd.log());
        let listed = recd.rec_json(&["incidents", "drive"]);
        let listed = listed.as_array().unwrap();
        assert_eq!(listed.len(), 1, "{listed:#?}");
        assert_eq!(listed[0]["origin"], "rule", "{listed:#?}");
        assert_eq!(listed[0]["rule"]["rule"], "seq300", "{listed:#?}");
        assert_eq!(listed[0]["rule"]["values"]["msg.seq"], 300, "{listed:#?}");
        assert_eq!(
            rules(recd),
            [("seq300".to_string(), "campaign seq@1".to_string())]
        );
        recd.rec_json(&["stop", "drive"]);
    }

    let [mut car1, car2]: [Recd; 2] = recds.try_into().ok().unwrap();

    // What recd.toml would refuse, the vehicle refuses with recd.toml's words.
    let config = root.path().join("refused.toml");
    std::fs::write(&config, FLEET_RULE).unwrap();
    let toml_says = recd_refused(&config);
    let told = ["--name", "told", "--version", "1", "--vehicle", "car-1"];
    let reason = operator.refusal(&car2, &[&[config.to_str().unwrap()][..], &told].concat());
    assert!(
        toml_says.contains(&reason),
        "recd.toml: {toml_says}\nfleet: {reason}"
    );
    // A lower version changes nothing either.
    let lower = [
        file,
        "--name",
        "seq",
        "--version",
        "1",
        "--vehicle",
        "car-1",
    ];
    let reason = operator.refusal(&car2, &lower);
    assert!(reason.contains("at version 1"), "{reason}");

    // Kept across a restart.
    car1.signal_and_wait(libc::SIGTERM, Duration::from_secs(60));
    let car1 = vehicle(&roots[0], &domains[0], &broker, ids[0], &public);
    let seq1 = [("seq300".to_string(), "campaign seq@1".to_string())];
    assert_eq!(rules(&car1), seq1);

    // Replaced by a version that expires in 4 s, then gone, file and all.
    let (output, outcome) = operator.push(
        &car2,
        &[
            file,
            "--name",
            "seq",
            "--version",
            "2",
            "--expires",
            "4s",
            "--vehicle",
            "car-1",
        ],
    );
    assert!(output.status.success(), "{outcome}");
    let gone = wait_until(Duration::from_secs(20), || rules(&car1).is_empty());
    assert!(gone, "{:?}\n{}", rules(&car1), car1.log());
    let kept = std::fs::read_dir(roots[0].join("state/campaigns"))
        .map(|dir| dir.count())
        .unwrap_or(0);
    assert_eq!(kept, 0);
    assert!(car1.log().contains("a campaign expired"), "{}", car1.log());
    // car-2 still runs version 1.
    assert_eq!(rules(&car2), seq1);
}
