//! `rec fleet status`: every recorder that publishes its status.

use std::process::ExitCode;
use std::time::{Duration, Instant};

use clap::Args;

use super::link::{newest_by_recorder, Domain, Link};
use crate::output::outln;

/// List every recorder of the domain: host, state, sessions, rates, disk.
///
/// Listens for --listen (recd publishes its status every [remote_control]
/// status_interval, and a newcomer gets the last one at once).
#[derive(Debug, Args)]
pub struct StatusArgs {
    /// Print the statuses as JSON.
    #[arg(long)]
    json: bool,
}

/// `rec fleet status`.
pub fn run(domain: &Domain, listen: Duration, args: &StatusArgs) -> Result<ExitCode, String> {
    let mut link = Link::join(domain)?;
    let heard = link.listen(Instant::now() + listen, |_| false);
    let newest = newest_by_recorder(&heard);
    if args.json {
        let recorders: Vec<serde_json::Value> = newest
            .values()
            .map(|one| {
                serde_json::json!({
                    "previous": one.status.previous,
                    "current": one.status.current,
                    "info": one.info.as_ref().map_or_else(
                        || serde_json::Value::String(one.status.info.clone()),
                        |info| serde_json::to_value(info).expect("info serializes"),
                    ),
                })
            })
            .collect();
        crate::output::print_json(&recorders)?;
        return Ok(ExitCode::SUCCESS);
    }
    if newest.is_empty() {
        outln!(
            "no recorder answered on DDS domain {} within {} (is [remote_control] status on?)",
            domain.id,
            humantime::format_duration(listen)
        );
        return Ok(ExitCode::SUCCESS);
    }
    let rows: Vec<Vec<String>> = newest
        .values()
        .map(|one| match &one.info {
            Some(info) => {
                let rate: f64 = info.sessions.iter().map(|s| s.bytes_per_s).sum();
                let names: Vec<&str> = info.sessions.iter().map(|s| s.name.as_str()).collect();
                vec![
                    info.recorder.clone(),
                    info.host.clone(),
                    one.status.current.clone(),
                    if names.is_empty() {
                        "-".into()
                    } else {
                        names.join(",")
                    },
                    crate::format::rate(rate),
                    info.disk_free_bytes
                        .map_or("?".into(), crate::format::bytes),
                    if info.control { "on" } else { "status only" }.into(),
                    info.upload.clone().unwrap_or_else(|| "off".into()),
                    fleet_health(info),
                ]
            }
            None => vec![
                "(not recd)".into(),
                "?".into(),
                one.status.current.clone(),
                "?".into(),
                "?".into(),
                "?".into(),
                "?".into(),
                "?".into(),
                "?".into(),
            ],
        })
        .collect();
    let header = [
        "RECORDER",
        "HOST",
        "STATE",
        "SESSIONS",
        "RATE",
        "DISK FREE",
        "CONTROL",
        "UPLOAD",
        "HEALTH",
    ];
    crate::output::write(format_args!("{}", crate::table::table(&header, &rows)));
    Ok(ExitCode::SUCCESS)
}

/// A recorder's topics in one cell: `ok`, or the topics in trouble and the required ones
/// missing (`stalled: lidar; missing: /imu`); `-` with nothing checked.
fn fleet_health(info: &recd_remote::StatusInfo) -> String {
    let mut bad: Vec<String> = Vec::new();
    let mut checked = false;
    for session in &info.sessions {
        for (name, topic) in &session.topics {
            match topic.health.as_deref() {
                Some("ok") => checked = true,
                Some(state @ ("slow" | "stalled")) => bad.push(format!("{state}: {name}")),
                _ => {}
            }
        }
        bad.extend(
            session
                .missing
                .iter()
                .map(|name| format!("missing: {name}")),
        );
    }
    if !bad.is_empty() {
        bad.join("; ")
    } else if checked {
        "ok".into()
    } else {
        "-".into()
    }
}
