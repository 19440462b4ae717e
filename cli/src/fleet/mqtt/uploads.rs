//! `rec fleet --broker URL uploads MODE`: what the vehicles' links may carry now.

use std::process::ExitCode;
use std::time::Duration;

use clap::Args;
use recd_fleet::{Action, Request, UploadsMode};

use super::connect::Settings;
use super::replies::{addressed, ask_each, fresh_id, Target};
use super::BrokerArgs;

/// Set what the vehicles upload: all, incidents (only incidents' files) or none.
///
/// One request to each --vehicle, or to every vehicle without one; the mode is kept
/// across the vehicle's restarts. Prints each reply; waits for each named vehicle's
/// reply (with none named, for the replies within --listen). Exits 1 when a vehicle
/// refuses or does not reply, naming it.
#[derive(Debug, Args)]
pub struct UploadsArgs {
    /// all (everything [upload] queues), incidents (only incidents' files; the rest
    /// waits) or none (everything waits).
    #[arg(value_name = "MODE", value_parser = UploadsMode::parse)]
    mode: UploadsMode,
    /// A vehicle to ask (repeat for more; default every vehicle).
    #[arg(long, value_name = "ID")]
    vehicle: Vec<String>,
    /// Print the outcome (every reply, who failed, who did not reply) as JSON at the end.
    #[arg(long)]
    json: bool,
}

/// The requests `args` ask for, one per vehicle named (or one for all), with one `id`,
/// issued at `now_ns`; and whom they are for.
pub fn requests(
    args: &UploadsArgs,
    prefix: &str,
    id: &str,
    now_ns: u64,
) -> Result<(Vec<Request>, Target), String> {
    let action = Action::Uploads { mode: args.mode };
    addressed(&args.vehicle, prefix, id, now_ns, &action)
}

/// `rec fleet --broker URL uploads`.
pub fn run(
    settings: &Settings,
    broker: &BrokerArgs,
    listen: Duration,
    args: &UploadsArgs,
) -> Result<ExitCode, String> {
    let id = fresh_id("uploads");
    let (requests, target) = requests(args, broker.prefix(), &id, crate::window::now_ns())?;
    let what = format!("uploads {}", args.mode.name());
    ask_each(
        settings,
        broker,
        listen,
        (requests, target),
        &what,
        args.json,
    )
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;

    #[derive(Debug, Parser)]
    struct Uploads {
        #[command(flatten)]
        args: UploadsArgs,
    }

    fn parse(args: &[&str]) -> Result<UploadsArgs, String> {
        Uploads::try_parse_from(std::iter::once("uploads").chain(args.iter().copied()))
            .map(|uploads| uploads.args)
            .map_err(|e| e.to_string())
    }

    #[test]
    fn one_request_per_named_vehicle_or_one_for_all() {
        let args = parse(&["incidents", "--vehicle", "car-2", "--vehicle", "car-1"]).unwrap();
        let (requests, target) = requests(&args, "recd", "u1", 5).unwrap();
        assert_eq!(target, Target::Named(vec!["car-1".into(), "car-2".into()]));
        assert_eq!(
            requests
                .iter()
                .map(|r| r.vehicle.as_str())
                .collect::<Vec<_>>(),
            ["car-1", "car-2"]
        );
        assert!(requests.iter().all(|r| r.id == "u1"
            && r.issued_ns == 5
            && r.action
                == Action::Uploads {
                    mode: UploadsMode::Incidents
                }));
        let (for_all, target) =
            super::requests(&parse(&["none"]).unwrap(), "recd", "u2", 5).unwrap();
        assert_eq!(target, Target::All);
        assert_eq!(for_all.len(), 1);
        assert_eq!(for_all[0].vehicle, "all");
    }

    #[test]
    fn unknown_modes_and_bad_vehicles_are_refused() {
        assert!(parse(&["some"])
            .unwrap_err()
            .contains("all, incidents or none"));
        let refused = |args: &[&str]| requests(&parse(args).unwrap(), "recd", "u", 5).unwrap_err();
        assert!(refused(&["all", "--vehicle", "a+b"]).contains("\"a+b\""));
        assert!(refused(&["all", "--vehicle", "all"]).contains("leave --vehicle out"));
    }
}
