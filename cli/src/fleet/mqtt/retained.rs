//! What the broker retains of every vehicle: its presence (`<prefix>/<vehicle>/online`)
//! and its holdings (`<prefix>/<vehicle>/holdings`), gathered for `--listen`.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use recd_fleet::{Holdings, Presence};

use super::connect::Link;

/// The vehicles as the broker retains them, by vehicle id.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Retained {
    /// Each vehicle's presence.
    pub presence: BTreeMap<String, Presence>,
    /// Each vehicle's holdings.
    pub holdings: BTreeMap<String, Holdings>,
}

impl Retained {
    /// Takes the message `payload` retained on `topic` under `prefix`: a presence or
    /// holdings by the topic's last level, for the vehicle its middle level names. An
    /// empty payload (a retained message deleted) or one that does not read is skipped,
    /// with a line on stderr for the latter.
    pub fn take(&mut self, prefix: &str, topic: &str, payload: &[u8]) {
        let Some(rest) = topic.strip_prefix(prefix).and_then(|t| t.strip_prefix('/')) else {
            return;
        };
        let Some((vehicle, what)) = rest.split_once('/') else {
            return;
        };
        if payload.is_empty() || vehicle.contains('/') {
            return;
        }
        let unreadable = |error: serde_json::Error| {
            eprintln!("rec: skipped what {topic} holds: {error}");
        };
        match what {
            "online" => match serde_json::from_slice(payload) {
                Ok(presence) => {
                    self.presence.insert(vehicle.to_string(), presence);
                }
                Err(error) => unreadable(error),
            },
            "holdings" => match serde_json::from_slice(payload) {
                Ok(holdings) => {
                    self.holdings.insert(vehicle.to_string(), holdings);
                }
                Err(error) => unreadable(error),
            },
            _ => {}
        }
    }
}

/// Subscribes to every vehicle's presence and holdings under `prefix` and gathers what
/// arrives within `listen` (the broker sends what it retains at once).
pub fn gather(link: &mut Link, prefix: &str, listen: Duration) -> Result<Retained, String> {
    link.subscribe(&[format!("{prefix}/+/online"), format!("{prefix}/+/holdings")])?;
    let deadline = Instant::now() + listen;
    let mut retained = Retained::default();
    while let Some(message) = link.next_message(deadline)? {
        let topic = String::from_utf8_lossy(&message.topic);
        retained.take(prefix, &topic, &message.payload);
    }
    Ok(retained)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn presences_and_holdings_are_taken_by_the_topic_s_vehicle_and_kind() {
        let mut retained = Retained::default();
        let presence = br#"{"online":true,"vehicle":"car-1","version":"0.1.0"}"#;
        retained.take("fleet/recd", "fleet/recd/car-1/online", presence);
        retained.take(
            "fleet/recd",
            "fleet/recd/car-2/holdings",
            br#"{"vehicle":"car-2","at_ns":5,"oldest_ns":null,"disk":{"used_bytes":0},"sessions":[],"incidents":[]}"#,
        );
        // A deleted retained message, another prefix, something else, something unread.
        retained.take("fleet/recd", "fleet/recd/car-3/online", b"");
        retained.take("fleet/recd", "other/car-4/online", presence);
        retained.take("fleet/recd", "fleet/recd/car-5/replies", presence);
        retained.take("fleet/recd", "fleet/recd/car-6/online", b"{");
        assert_eq!(
            retained.presence.keys().collect::<Vec<_>>(),
            ["car-1"],
            "{retained:?}"
        );
        assert_eq!(retained.presence["car-1"].version.as_deref(), Some("0.1.0"));
        assert_eq!(retained.holdings.keys().collect::<Vec<_>>(), ["car-2"]);
    }
}
