//! The incidents' families: how many each origin made and had refused, how many pin
//! files and wait to be cut, and the bytes pinned against their bound.

use std::collections::BTreeMap;

use prometheus_client::registry::Unit;
use recd_control::origin;

use super::{Family, Kind};
use crate::snapshot::Snapshot;

/// The incidents' families; none when the snapshot could not read them.
pub fn families(snapshot: &Snapshot) -> Vec<Family> {
    let Some(incidents) = &snapshot.incidents else {
        return Vec::new();
    };
    let gauge = |name, help, unit, value: u64| {
        Family::new(name, help, unit, Kind::Gauge).with(vec![], value as f64)
    };
    vec![
        by_origin(
            Family::new(
                "incidents",
                "Incidents the catalog holds, by origin (cli, remote, page, fleet, buffer).",
                None,
                Kind::Counter,
            ),
            &incidents.by_origin,
        ),
        by_origin(
            Family::new(
                "incidents_refused",
                "Incidents refused since recd started because their files would take more than [incidents] max_pinned_size, by origin.",
                None,
                Kind::Counter,
            ),
            &incidents.refused,
        ),
        gauge(
            "incidents_pinned",
            "Incidents not released: retention keeps the files their windows overlap.",
            None,
            incidents.pinned,
        ),
        gauge(
            "incidents_waiting_to_cut",
            "Incidents not released whose window is not cut into files of its own yet.",
            None,
            incidents.waiting_to_cut,
        ),
        gauge(
            "pinned",
            "Bytes of the files incidents pin (their windows' recording files and their cut files).",
            Some(Unit::Bytes),
            incidents.pinned_bytes,
        ),
        gauge(
            "pinned_limit",
            "The bound on pinned bytes ([incidents] max_pinned_size or its default): over it a new incident is refused.",
            Some(Unit::Bytes),
            incidents.pinned_bytes_limit,
        ),
    ]
}

/// A sample per origin: every origin recd knows (0 until its first), then any other the
/// catalog holds.
fn by_origin(family: Family, counts: &BTreeMap<String, u64>) -> Family {
    let known = origin::ALL.iter().map(|name| name.to_string());
    let others = (counts.keys()).filter(|name| !origin::ALL.contains(&name.as_str()));
    let names: Vec<String> = known.chain(others.cloned()).collect();
    names.into_iter().fold(family, |family, name| {
        let value = counts.get(&name).copied().unwrap_or(0);
        family.with(vec![("origin", name)], value as f64)
    })
}
