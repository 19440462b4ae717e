//! `rec fleet --broker URL vehicles`: every vehicle the broker retains, online or not,
//! with what it holds.

use std::process::ExitCode;
use std::time::Duration;

use clap::Args;
use recd_fleet::Disk;
use serde::Serialize;

use super::connect::{Link, Settings};
use super::retained::{gather, Retained};
use crate::output::outln;

/// List the fleet's vehicles: online or not, version, oldest moment held, disk, sessions.
///
/// From what the broker retains of each (its presence and holdings), gathered for
/// --listen; nothing is asked of the vehicles.
#[derive(Debug, Args)]
pub struct VehiclesArgs {
    /// Print the vehicles as a JSON array.
    #[arg(long)]
    json: bool,
}

/// One vehicle, as `--json` prints it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Vehicle {
    /// Its id.
    pub vehicle: String,
    /// Connected now; `None` when the broker retains no presence of it.
    pub online: Option<bool>,
    /// recd's version, when online.
    pub version: Option<String>,
    /// The oldest moment it holds, ns since the Unix epoch.
    pub oldest_ns: Option<u64>,
    /// Its recordings' disk (none without holdings).
    pub disk: Option<Disk>,
    /// Sessions with files on its disk (none without holdings).
    pub sessions: Option<usize>,
    /// Its incidents (none without holdings).
    pub incidents: Option<usize>,
}

/// Every vehicle `retained` knows of, by id.
pub fn vehicles(retained: &Retained) -> Vec<Vehicle> {
    let mut ids: Vec<&String> = retained.presence.keys().collect();
    ids.extend(retained.holdings.keys());
    ids.sort();
    ids.dedup();
    ids.into_iter()
        .map(|id| {
            let presence = retained.presence.get(id);
            let holdings = retained.holdings.get(id);
            Vehicle {
                vehicle: id.clone(),
                online: presence.map(|p| p.online),
                version: presence.and_then(|p| p.version.clone()),
                oldest_ns: holdings.and_then(|h| h.oldest_ns),
                disk: holdings.map(|h| h.disk.clone()),
                sessions: holdings.map(|h| h.sessions.len()),
                incidents: holdings.map(|h| h.incidents.len()),
            }
        })
        .collect()
}

/// The table's rows: vehicle, state, version, oldest (RFC 3339 UTC), disk, sessions,
/// incidents; `-` for what is not known.
pub fn rows(vehicles: &[Vehicle]) -> Vec<Vec<String>> {
    let dash = || "-".to_string();
    vehicles
        .iter()
        .map(|v| {
            vec![
                v.vehicle.clone(),
                match v.online {
                    Some(true) => "online".into(),
                    Some(false) => "offline".into(),
                    None => "unknown".into(),
                },
                v.version.clone().unwrap_or_else(dash),
                v.oldest_ns.map_or_else(dash, rfc3339_seconds),
                v.disk.as_ref().map_or_else(dash, disk),
                v.sessions.map_or_else(dash, |n| n.to_string()),
                v.incidents.map_or_else(dash, |n| n.to_string()),
            ]
        })
        .collect()
}

/// `ns` since the epoch as RFC 3339 in UTC, to the second.
pub fn rfc3339_seconds(ns: u64) -> String {
    let time = std::time::UNIX_EPOCH + Duration::from_nanos(ns);
    humantime::format_rfc3339_seconds(time).to_string()
}

/// `1.5 GiB`, or `1.5 GiB of 2 TiB` with a bound.
fn disk(disk: &Disk) -> String {
    let used = crate::format::bytes(disk.used_bytes);
    match disk.bound_bytes {
        Some(bound) => format!("{used} of {}", crate::format::bytes(bound)),
        None => used,
    }
}

/// `rec fleet --broker URL vehicles`.
pub fn run(
    settings: &Settings,
    prefix: &str,
    listen: Duration,
    args: &VehiclesArgs,
) -> Result<ExitCode, String> {
    let mut link = Link::connect(settings)?;
    let retained = gather(&mut link, prefix, listen)?;
    link.close();
    let vehicles = vehicles(&retained);
    if args.json {
        crate::output::print_json(&vehicles)?;
    } else if vehicles.is_empty() {
        outln!(
            "no vehicle is retained under {prefix}/ (none ever connected, or another --prefix?)"
        );
    } else {
        let header = [
            "VEHICLE",
            "STATE",
            "VERSION",
            "OLDEST",
            "DISK",
            "SESSIONS",
            "INCIDENTS",
        ];
        crate::output::write(format_args!(
            "{}",
            crate::table::table(&header, &rows(&vehicles))
        ));
    }
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use recd_fleet::{Holdings, IncidentHolding, Presence, SessionHoldings};

    use super::*;

    const S: u64 = 1_000_000_000;

    fn holdings(vehicle: &str, sessions: usize, incidents: usize) -> Holdings {
        let session = SessionHoldings {
            name: "drive".into(),
            id: 1,
            recording: false,
            spans: Vec::new(),
            files: 1,
            bytes: 1,
            topics: Vec::new(),
        };
        let incident = IncidentHolding {
            id: "i".into(),
            session: "drive".into(),
            from_ns: 0,
            to_ns: 1,
            cut: "cut".into(),
            uploaded: false,
            released: false,
        };
        Holdings {
            vehicle: vehicle.into(),
            at_ns: 0,
            oldest_ns: Some(1_764_400_000 * S + 123),
            disk: Disk {
                used_bytes: 1536,
                bound_bytes: Some(2 << 30),
                free_bytes: None,
            },
            sessions: vec![session; sessions],
            incidents: vec![incident; incidents],
        }
    }

    fn presence(vehicle: &str, online: bool) -> Presence {
        Presence {
            online,
            vehicle: vehicle.into(),
            version: online.then(|| "0.1.0".into()),
        }
    }

    #[test]
    fn each_vehicle_is_one_row_by_id_with_what_its_presence_and_holdings_say() {
        let mut retained = Retained::default();
        retained
            .presence
            .insert("car-2".into(), presence("car-2", false));
        retained
            .presence
            .insert("car-1".into(), presence("car-1", true));
        retained
            .holdings
            .insert("car-1".into(), holdings("car-1", 2, 3));
        retained
            .holdings
            .insert("car-3".into(), holdings("car-3", 0, 0));
        let vehicles = vehicles(&retained);
        assert_eq!(
            vehicles
                .iter()
                .map(|v| v.vehicle.as_str())
                .collect::<Vec<_>>(),
            ["car-1", "car-2", "car-3"]
        );
        assert_eq!(
            rows(&vehicles),
            [
                [
                    "car-1",
                    "online",
                    "0.1.0",
                    "2025-11-29T07:06:40Z",
                    "1.5 KiB of 2.0 GiB",
                    "2",
                    "3"
                ],
                ["car-2", "offline", "-", "-", "-", "-", "-"],
                [
                    "car-3",
                    "unknown",
                    "-",
                    "2025-11-29T07:06:40Z",
                    "1.5 KiB of 2.0 GiB",
                    "0",
                    "0"
                ],
            ]
        );
        let json = serde_json::to_value(&vehicles[0]).unwrap();
        assert_eq!(
            json,
            serde_json::json!({
                "vehicle": "car-1", "online": true, "version": "0.1.0",
                "oldest_ns": 1_764_400_000 * S + 123,
                "disk": {"used_bytes": 1536, "bound_bytes": 2u64 << 30},
                "sessions": 2, "incidents": 3,
            })
        );
        assert_eq!(
            serde_json::to_value(&vehicles[1]).unwrap()["disk"],
            serde_json::Value::Null
        );
    }
}
