//! `rec fleet --broker URL pull`: ask a vehicle (or all) to keep a window of time as an
//! incident (pinned, cut, uploaded first), and follow its replies.

use std::process::ExitCode;
use std::time::Duration;

use clap::Args;
use recd_fleet::{Action, Request, WindowAsk, ALL, MAX_ID_LEN};

use super::connect::Settings;
use super::find::{check_window, topic_filter};
use super::replies::{ask, fresh_id, report, requests_topic, Patience, Round, Target};
use super::BrokerArgs;

/// Ask a vehicle, or all, to keep a window of time: pinned, cut, uploaded first.
///
/// Publishes a window request (signed with --key) to the vehicle's requests topic, or to
/// every vehicle's with `all`, and prints each reply as it comes. Without --wait: waits
/// for the vehicle's first reply (with `all`, for the replies within --listen). With
/// --wait: until each replying vehicle's last reply (its files cut, or uploaded), at most
/// DURATION. Exits 1 when a vehicle refuses or fails, or does not reply (or finish) in
/// time, naming it.
#[derive(Debug, Args)]
pub struct PullArgs {
    /// The vehicle's id, or `all` for every vehicle.
    #[arg(value_name = "VEHICLE|all")]
    vehicle: String,
    /// The window's start: RFC 3339 in UTC, ns since the epoch, or relative (-10m, 10m
    /// ago, now).
    #[arg(long, value_name = "TIME", value_parser = crate::window::parse_moment, allow_hyphen_values = true)]
    from: u64,
    /// The window's end, as --from.
    #[arg(long, value_name = "TIME", value_parser = crate::window::parse_moment, allow_hyphen_values = true)]
    to: u64,
    /// A glob pattern of the topics to keep, e.g. '/camera/*' (repeat for more; default
    /// every topic).
    #[arg(long, value_name = "GLOB")]
    topic: Vec<String>,
    /// Why, e.g. "near miss at the depot"; it goes into the incident.
    #[arg(long, value_name = "TEXT", default_value = "")]
    note: String,
    /// The request's id, which also names the incident (default: pull-TIME-RANDOM). A
    /// vehicle serves an id once.
    #[arg(long, value_name = "ID")]
    id: Option<String>,
    /// Wait until each vehicle's last reply, at most DURATION (10m when given alone).
    #[arg(long, value_name = "DURATION", num_args = 0..=1, default_missing_value = "10m", value_parser = recd_control::units::parse_duration)]
    wait: Option<Duration>,
    /// Print the outcome (every reply, who failed, who did not reply) as JSON at the end.
    #[arg(long)]
    json: bool,
}

/// Refuses a request id that vehicles would refuse: empty, over 128 characters, or with
/// control characters.
pub fn check_id(id: &str) -> Result<(), String> {
    if id.is_empty() || id.chars().count() > MAX_ID_LEN || id.contains(char::is_control) {
        return Err(format!(
            "--id {id:?}: 1 to {MAX_ID_LEN} characters, no control characters"
        ));
    }
    Ok(())
}

/// The window request `args` ask for, issued at `now_ns`, checked as a vehicle would
/// check it (vehicle id, window, topic patterns, id).
pub fn request(args: &PullArgs, prefix: &str, now_ns: u64) -> Result<Request, String> {
    requests_topic(prefix, &args.vehicle)?;
    check_window(args.from, args.to)?;
    topic_filter(&args.topic)?;
    let ask = WindowAsk {
        from_ns: Some(args.from),
        to_ns: Some(args.to),
        topics: args.topic.clone(),
        note: args.note.clone(),
        ..WindowAsk::default()
    };
    ask.bounds()?;
    let id = args.id.clone().unwrap_or_else(|| fresh_id("pull"));
    check_id(&id)?;
    Ok(Request {
        id,
        vehicle: args.vehicle.clone(),
        issued_ns: now_ns,
        action: Action::Window(ask),
    })
}

/// `rec fleet --broker URL pull`.
pub fn run(
    settings: &Settings,
    broker: &BrokerArgs,
    listen: Duration,
    args: &PullArgs,
) -> Result<ExitCode, String> {
    let prefix = broker.prefix();
    let request = request(args, prefix, crate::window::now_ns())?;
    // Loaded once the request is known good: its errors and note come after the request's.
    let key = broker.signing_key()?;
    let target = if args.vehicle == ALL {
        Target::All
    } else {
        Target::Named(vec![args.vehicle.clone()])
    };
    let patience = Patience {
        listen,
        until_last: args.wait,
    };
    if !args.json {
        crate::output::outln!("request {} to {}", request.id, args.vehicle);
    }
    let outcome = ask(
        settings,
        Round {
            prefix,
            requests: vec![request],
            key: key.as_ref(),
            target,
            patience,
            print: !args.json,
        },
    )?;
    report(&outcome, patience, args.json)
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;

    #[derive(Debug, Parser)]
    struct Pull {
        #[command(flatten)]
        args: PullArgs,
    }

    fn parse(args: &[&str]) -> Result<PullArgs, String> {
        Pull::try_parse_from(std::iter::once("pull").chain(args.iter().copied()))
            .map(|pull| pull.args)
            .map_err(|e| e.to_string())
    }

    const NOW: u64 = 1_795_428_930_000_000_000;

    #[test]
    fn a_pull_is_a_window_request_with_its_topics_note_and_id() {
        let args = parse(&[
            "car-1",
            "--from",
            "2026-11-23T10:15:00Z",
            "--to",
            "2026-11-23T10:15:30Z",
            "--topic",
            "/camera/*",
            "--note",
            "near miss",
            "--id",
            "r7",
        ])
        .unwrap();
        assert_eq!(args.wait, None);
        let request = request(&args, "recd", NOW).unwrap();
        assert_eq!(request.id, "r7");
        assert_eq!(request.vehicle, "car-1");
        assert_eq!(request.issued_ns, NOW);
        let Action::Window(ask) = &request.action else {
            panic!("{request:?}")
        };
        assert_eq!(ask.bounds(), Ok((NOW - 30_000_000_000, NOW)));
        assert_eq!(ask.topics, ["/camera/*"]);
        assert_eq!(ask.note, "near miss");
    }

    #[test]
    fn wait_alone_is_ten_minutes_and_takes_a_duration() {
        let window = ["all", "--from", "-1m", "--to", "now"];
        let wait = |extra: &[&str]| {
            let args: Vec<&str> = window.iter().chain(extra).copied().collect();
            parse(&args).unwrap().wait
        };
        assert_eq!(wait(&["--wait"]), Some(Duration::from_secs(600)));
        assert_eq!(wait(&["--wait", "30s"]), Some(Duration::from_secs(30)));
        let args = parse(&window).unwrap();
        let request = request(&args, "recd", NOW).unwrap();
        assert!(request.id.starts_with("pull-"), "{}", request.id);
        assert_eq!(request.vehicle, "all");
    }

    #[test]
    fn bad_vehicles_windows_patterns_and_ids_are_refused_before_anything_is_sent() {
        let refused = |args: &[&str]| {
            let args = parse(args).unwrap();
            request(&args, "recd", NOW).unwrap_err()
        };
        let window = ["--from", "1000", "--to", "2000"];
        let with = |first: &[&'static str]| -> Vec<&'static str> {
            first.iter().chain(&window).copied().collect()
        };
        assert!(refused(&with(&["a/b"])).contains("\"a/b\""));
        assert!(refused(&with(&["car", "--topic", "/x/["])).contains("/x/["));
        assert!(refused(&with(&["car", "--id", ""])).contains("--id"));
        let long = "x".repeat(MAX_ID_LEN + 1);
        let too_long = ["car", "--id", &long, "--from", "1000", "--to", "2000"];
        assert!(refused(&too_long).contains("--id"));
        assert!(refused(&["car", "--from", "2000", "--to", "1000"]).contains("before --from"));
        assert!(refused(&["car", "--from", "2000", "--to", "2000"]).contains("ends"));
        assert!(parse(&["car", "--from", "soon", "--to", "now"]).is_err());
        assert!(parse(&["car", "--to", "now"]).is_err());
    }
}
