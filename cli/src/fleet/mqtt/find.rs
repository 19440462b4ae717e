//! `rec fleet --broker URL find`: which vehicles hold part of a window of time (and the
//! topics asked for), read from their retained holdings alone.

use std::collections::BTreeMap;
use std::process::ExitCode;
use std::time::Duration;

use clap::Args;
use recd_engine::{TopicFilter, TopicSelection};
use recd_fleet::Holdings;
use serde::Serialize;

use super::connect::{Link, Settings};
use super::retained::gather;
use super::vehicles::rfc3339_seconds;
use crate::output::outln;

/// Find the vehicles that hold part of a window of time, and of the topics asked for.
///
/// From each vehicle's retained holdings (nothing is asked of the vehicles): a session
/// whose spans of time overlap [--from, --to], with a topic matching a --topic pattern
/// when some are given. Holdings list the topics of stopped sessions only: a session
/// still recording counts as a possible match, shown as "topics unknown".
#[derive(Debug, Args)]
pub struct FindArgs {
    /// A glob pattern of the topics wanted, e.g. '/camera/*' (repeat for more; default
    /// any topic).
    #[arg(long, value_name = "GLOB")]
    topic: Vec<String>,
    /// The window's start: RFC 3339 in UTC, ns since the epoch, or relative (-1h, 1h ago,
    /// now).
    #[arg(long, value_name = "TIME", value_parser = crate::window::parse_moment, allow_hyphen_values = true)]
    from: u64,
    /// The window's end, as --from.
    #[arg(long, value_name = "TIME", value_parser = crate::window::parse_moment, allow_hyphen_values = true)]
    to: u64,
    /// Print what was found as a JSON array.
    #[arg(long)]
    json: bool,
}

/// One stretch of a session that overlaps the window.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Found {
    /// The vehicle.
    pub vehicle: String,
    /// The session's name.
    pub session: String,
    /// The session's catalog id on the vehicle.
    pub session_id: i64,
    /// The start of the overlap (the later of the span's and the window's).
    pub from_ns: u64,
    /// Its end.
    pub to_ns: u64,
    /// The session's topics that match (all of them without patterns); `None` when the
    /// holdings list none yet (a session still recording).
    pub topics: Option<Vec<String>>,
}

/// The topic patterns of `find` and `pull`, compiled as recd compiles `--topic`.
pub fn topic_filter(patterns: &[String]) -> Result<TopicFilter, String> {
    TopicFilter::new(&TopicSelection {
        include: patterns.to_vec(),
        ..TopicSelection::default()
    })
    .map_err(|e| e.to_string())
}

/// What in `holdings` overlaps [`from_ns`, `to_ns`] and matches `topics`, by vehicle, then
/// session and span as held.
pub fn find(
    holdings: &BTreeMap<String, Holdings>,
    from_ns: u64,
    to_ns: u64,
    topics: &TopicFilter,
) -> Vec<Found> {
    let mut found = Vec::new();
    for (vehicle, held) in holdings {
        for session in &held.sessions {
            let names: Option<Vec<String>> = if session.recording && session.topics.is_empty() {
                None
            } else {
                let matching: Vec<String> = (session.topics.iter())
                    .filter(|topic| topics.matches(&topic.name))
                    .map(|topic| topic.name.clone())
                    .collect();
                if matching.is_empty() {
                    continue;
                }
                Some(matching)
            };
            for span in &session.spans {
                if span.from_ns > to_ns || span.to_ns < from_ns {
                    continue;
                }
                found.push(Found {
                    vehicle: vehicle.clone(),
                    session: session.name.clone(),
                    session_id: session.id,
                    from_ns: span.from_ns.max(from_ns),
                    to_ns: span.to_ns.min(to_ns),
                    topics: names.clone(),
                });
            }
        }
    }
    found
}

/// Refuses a window that ends before it starts, naming both ends.
pub fn check_window(from_ns: u64, to_ns: u64) -> Result<(), String> {
    if to_ns < from_ns {
        return Err(format!(
            "--to {} is before --from {}",
            crate::format::timestamp(to_ns),
            crate::format::timestamp(from_ns)
        ));
    }
    Ok(())
}

/// `rec fleet --broker URL find`.
pub fn run(
    settings: &Settings,
    prefix: &str,
    listen: Duration,
    args: &FindArgs,
) -> Result<ExitCode, String> {
    check_window(args.from, args.to)?;
    let filter = topic_filter(&args.topic)?;
    let mut link = Link::connect(settings)?;
    let retained = gather(&mut link, prefix, listen)?;
    link.close();
    let found = find(&retained.holdings, args.from, args.to, &filter);
    if args.json {
        crate::output::print_json(&found)?;
        return Ok(ExitCode::SUCCESS);
    }
    if found.is_empty() {
        outln!(
            "no vehicle holds part of {} – {} ({} vehicle(s) retain holdings under {prefix}/)",
            rfc3339_seconds(args.from),
            rfc3339_seconds(args.to),
            retained.holdings.len()
        );
        return Ok(ExitCode::SUCCESS);
    }
    let rows: Vec<Vec<String>> = found
        .iter()
        .map(|one| {
            vec![
                one.vehicle.clone(),
                format!("{} (#{})", one.session, one.session_id),
                rfc3339_seconds(one.from_ns),
                rfc3339_seconds(one.to_ns),
                match &one.topics {
                    Some(names) => names.join(", "),
                    None => "topics unknown (recording)".into(),
                },
            ]
        })
        .collect();
    let header = ["VEHICLE", "SESSION", "FROM", "TO", "TOPICS"];
    crate::output::write(format_args!("{}", crate::table::table(&header, &rows)));
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use recd_fleet::{Disk, SessionHoldings, Span, TopicHolding};

    use super::*;

    const S: u64 = 1_000_000_000;

    fn session(
        name: &str,
        recording: bool,
        spans: &[(u64, u64)],
        topics: &[&str],
    ) -> SessionHoldings {
        SessionHoldings {
            name: name.into(),
            id: 7,
            recording,
            spans: (spans.iter())
                .map(|&(from, to)| Span {
                    from_ns: from * S,
                    to_ns: to * S,
                    health: None,
                })
                .collect(),
            files: 1,
            bytes: 1,
            topics: (topics.iter())
                .map(|name| TopicHolding {
                    name: name.to_string(),
                    messages: 1,
                })
                .collect(),
        }
    }

    fn fleet() -> BTreeMap<String, Holdings> {
        let holdings = |vehicle: &str, sessions| Holdings {
            vehicle: vehicle.into(),
            at_ns: 0,
            oldest_ns: Some(0),
            disk: Disk::default(),
            sessions,
            incidents: Vec::new(),
        };
        BTreeMap::from([
            (
                "car-2".to_string(),
                holdings("car-2", vec![session("live", true, &[(150, 400)], &[])]),
            ),
            (
                "car-1".to_string(),
                holdings(
                    "car-1",
                    vec![
                        session(
                            "morning",
                            false,
                            &[(0, 90), (100, 200)],
                            &["/camera/front", "/imu"],
                        ),
                        session("noon", false, &[(300, 400)], &["/imu"]),
                    ],
                ),
            ),
        ])
    }

    fn seen(found: &[Found]) -> Vec<(String, String, u64, u64, Option<usize>)> {
        (found.iter())
            .map(|f| {
                (
                    f.vehicle.clone(),
                    f.session.clone(),
                    f.from_ns / S,
                    f.to_ns / S,
                    f.topics.as_ref().map(Vec::len),
                )
            })
            .collect()
    }

    #[test]
    fn sessions_with_a_span_overlapping_the_window_are_found_clipped_to_it() {
        let any = topic_filter(&[]).unwrap();
        let found = find(&fleet(), 80 * S, 160 * S, &any);
        assert_eq!(
            seen(&found),
            [
                ("car-1".into(), "morning".into(), 80, 90, Some(2)),
                ("car-1".into(), "morning".into(), 100, 160, Some(2)),
                ("car-2".into(), "live".into(), 150, 160, None),
            ]
        );
        // Touching an end counts; a window in a gap or before everything finds nothing.
        assert_eq!(seen(&find(&fleet(), 200 * S, 250 * S, &any)).len(), 2);
        assert!(find(&fleet(), 91 * S, 99 * S, &any).is_empty());
    }

    #[test]
    fn topics_must_match_unless_a_recording_session_has_none_listed_yet() {
        let camera = topic_filter(&["/camera/*".to_string()]).unwrap();
        let found = find(&fleet(), 0, 1000 * S, &camera);
        assert_eq!(
            seen(&found),
            [
                ("car-1".into(), "morning".into(), 0, 90, Some(1)),
                ("car-1".into(), "morning".into(), 100, 200, Some(1)),
                ("car-2".into(), "live".into(), 150, 400, None),
            ]
        );
        assert_eq!(
            found[0].topics.as_deref(),
            Some(&["/camera/front".to_string()][..])
        );
        let imu = topic_filter(&["/imu".to_string(), "/gps".to_string()]).unwrap();
        let sessions: Vec<String> = (find(&fleet(), 0, 1000 * S, &imu).iter())
            .map(|f| f.session.clone())
            .collect();
        assert_eq!(sessions, ["morning", "morning", "noon", "live"]);
        assert!(topic_filter(&["/camera/[".to_string()])
            .unwrap_err()
            .contains("/camera/["));
    }

    #[test]
    fn a_window_that_ends_before_it_starts_is_refused() {
        assert!(check_window(5, 5).is_ok());
        assert!(check_window(6, 5).unwrap_err().contains("before --from"));
    }
}
