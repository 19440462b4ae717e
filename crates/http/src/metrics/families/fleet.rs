//! The fleet's families: requests over MQTT taken by kind and refused by reason.

use std::collections::BTreeMap;

use super::{Family, Kind};
use crate::backend::DaemonFacts;

/// The fleet's families; none when `[fleet]` is off.
pub fn families(facts: &DaemonFacts) -> Vec<Family> {
    let Some(requests) = &facts.fleet_requests else {
        return Vec::new();
    };
    vec![
        labelled(
            Family::new(
                "fleet_requests",
                "Requests of the fleet's cloud over MQTT taken since recd started, by kind.",
                None,
                Kind::Counter,
            ),
            "kind",
            &requests.taken,
        ),
        labelled(
            Family::new(
                "fleet_requests_refused",
                "Requests of the fleet's cloud refused since recd started before anything was done, by reason (unsigned, wrong_key, other_vehicle, stale, ahead, replayed, bad_id, malformed).",
                None,
                Kind::Counter,
            ),
            "reason",
            &requests.refused,
        ),
    ]
}

/// One sample per entry of `counts`, labelled `label`.
fn labelled(family: Family, label: &'static str, counts: &BTreeMap<String, u64>) -> Family {
    counts.iter().fold(family, |family, (name, count)| {
        family.with(vec![(label, name.clone())], *count as f64)
    })
}
