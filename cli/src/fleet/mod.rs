//! `rec fleet`: the fleet, as one. Over DDS, the recorders of a domain: `rec fleet status`
//! lists every recd that publishes its status; `rec fleet trigger` triggers all of them at
//! one moment and waits for each to answer. Over MQTT (`--broker URL`), the vehicles on the
//! fleet's broker: `vehicles`, `find`, `pull`, `uploads`, `campaign` ([`mqtt`]).

mod link;
mod mqtt;
mod status;
mod trigger;

use std::net::IpAddr;
use std::process::ExitCode;
use std::time::Duration;

use clap::{Args, Subcommand};

/// Every recd of a DDS domain, or the vehicles over MQTT.
///
/// Without --broker, over DDS: the remote-control topics of eProsima DDS Record & Replay
/// (what recd's [remote_control] serves): recds with `status` on are listed (status);
/// those with `enabled` take the trigger (trigger). With --broker URL, over MQTT: what
/// recd's [fleet] publishes on the fleet's broker: each vehicle's presence and holdings,
/// retained (vehicles, find); requests signed with the fleet's key (--key) and the
/// vehicles' replies (pull, uploads, campaign push).
#[derive(Debug, Args)]
pub struct FleetArgs {
    #[command(subcommand)]
    command: FleetCommand,
    #[command(flatten)]
    domain: DomainArgs,
    #[command(flatten)]
    broker: mqtt::BrokerArgs,
}

#[derive(Debug, Subcommand)]
enum FleetCommand {
    Status(status::StatusArgs),
    Trigger(trigger::TriggerArgs),
    Vehicles(mqtt::vehicles::VehiclesArgs),
    Find(mqtt::find::FindArgs),
    Pull(mqtt::pull::PullArgs),
    Uploads(mqtt::uploads::UploadsArgs),
    Campaign(mqtt::campaign::CampaignArgs),
}

impl FleetCommand {
    /// Its name, and whether it speaks MQTT (else DDS).
    fn name(&self) -> (&'static str, bool) {
        match self {
            Self::Status(_) => ("status", false),
            Self::Trigger(_) => ("trigger", false),
            Self::Vehicles(_) => ("vehicles", true),
            Self::Find(_) => ("find", true),
            Self::Pull(_) => ("pull", true),
            Self::Uploads(_) => ("uploads", true),
            Self::Campaign(_) => ("campaign", true),
        }
    }
}

/// Where the fleet is.
#[derive(Debug, Args)]
pub struct DomainArgs {
    /// The DDS domain of the recorders' control topics (default: ROS_DOMAIN_ID, else 0).
    #[arg(long, value_name = "N", global = true)]
    dds_domain: Option<u16>,
    /// An address of this host to reach them through (repeat for more; default all).
    #[arg(long, value_name = "ADDR", global = true)]
    interface: Vec<IpAddr>,
    /// The command topic.
    #[arg(long, value_name = "TOPIC", global = true, default_value = recd_remote::COMMAND_TOPIC)]
    command_topic: String,
    /// The status topic.
    #[arg(long, value_name = "TOPIC", global = true, default_value = recd_remote::STATUS_TOPIC)]
    status_topic: String,
    /// How long to listen: for the recorders (DDS); with --broker, for what the broker
    /// retains, and for replies (all vehicles' replies, or a named vehicle's first reply).
    #[arg(long, value_name = "DURATION", global = true, default_value = "2s", value_parser = recd_control::units::parse_duration)]
    listen: Duration,
}

/// Checks that the command and the options are of one side: `--broker` with the MQTT
/// commands only, the DDS options and commands only without it.
fn check_side(args: &FleetArgs, domain: Option<u16>) -> Result<(), String> {
    let (name, mqtt) = args.command.name();
    if args.broker.given() {
        if !mqtt {
            return Err(format!(
                "rec fleet {name} drives recorders over DDS: leave out --broker (over MQTT: vehicles, find, pull, uploads, campaign)"
            ));
        }
        if args.domain.dds_domain.or(domain).is_some() || !args.domain.interface.is_empty() {
            return Err("--dds-domain and --interface are for DDS: --broker speaks MQTT".into());
        }
    } else if mqtt {
        return Err(format!(
            "rec fleet {name} speaks to vehicles over MQTT: give --broker URL (mqtts://host:8883 or mqtt://host:1883)"
        ));
    }
    args.broker.check()
}

/// `rec fleet`; `domain` is `rec --dds-domain N`, which the fleet's own option overrides.
pub fn run(args: &FleetArgs, domain: Option<u16>) -> Result<ExitCode, String> {
    if let Err(usage) = check_side(args, domain) {
        eprintln!("rec: {usage}");
        return Ok(ExitCode::from(2));
    }
    if args.broker.given() {
        return run_mqtt(args);
    }
    let id = match args.domain.dds_domain.or(domain) {
        Some(id) => id,
        None => match std::env::var("ROS_DOMAIN_ID") {
            Ok(text) => text
                .trim()
                .parse()
                .map_err(|_| format!("ROS_DOMAIN_ID={text:?} is not a domain id"))?,
            Err(_) => 0,
        },
    };
    let domain = link::Domain {
        id,
        interfaces: args.domain.interface.clone(),
        command_topic: args.domain.command_topic.clone(),
        status_topic: args.domain.status_topic.clone(),
    };
    match &args.command {
        FleetCommand::Status(status) => status::run(&domain, args.domain.listen, status),
        FleetCommand::Trigger(trigger) => trigger::run(&domain, args.domain.listen, trigger),
        _ => unreachable!("checked: MQTT commands run with --broker"),
    }
}

/// `rec fleet --broker URL …`.
fn run_mqtt(args: &FleetArgs) -> Result<ExitCode, String> {
    let settings = args.broker.settings()?;
    let prefix = args.broker.prefix();
    let listen = args.domain.listen;
    match &args.command {
        FleetCommand::Vehicles(a) => mqtt::vehicles::run(&settings, prefix, listen, a),
        FleetCommand::Find(a) => mqtt::find::run(&settings, prefix, listen, a),
        FleetCommand::Pull(a) => mqtt::pull::run(&settings, &args.broker, listen, a),
        FleetCommand::Uploads(a) => mqtt::uploads::run(&settings, &args.broker, listen, a),
        FleetCommand::Campaign(a) => mqtt::campaign::run(&settings, &args.broker, listen, a),
        FleetCommand::Status(_) | FleetCommand::Trigger(_) => {
            unreachable!("checked: DDS commands run without --broker")
        }
    }
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;

    #[derive(Debug, Parser)]
    struct Rec {
        #[command(subcommand)]
        command: Top,
    }

    #[derive(Debug, clap::Subcommand)]
    enum Top {
        Fleet(FleetArgs),
    }

    fn check(args: &[&str], domain: Option<u16>) -> Result<(), String> {
        let rec = Rec::try_parse_from(["rec", "fleet"].iter().chain(args).copied())
            .map_err(|e| e.to_string())?;
        let Top::Fleet(fleet) = rec.command;
        check_side(&fleet, domain)
    }

    #[test]
    fn mqtt_commands_need_the_broker_and_dds_ones_refuse_it() {
        let broker = ["--broker", "mqtt://localhost"];
        let with = |rest: &[&'static str]| -> Vec<&'static str> {
            broker.iter().chain(rest).copied().collect()
        };
        assert_eq!(check(&with(&["vehicles", "--json"]), None), Ok(()));
        // Global options go before or after the command.
        assert_eq!(
            check(
                &["vehicles", "--broker", "mqtt://h", "--listen", "5s"],
                None
            ),
            Ok(())
        );
        assert_eq!(check(&["status"], None), Ok(()));
        assert_eq!(check(&["--dds-domain", "3", "status"], None), Ok(()));
        let refused = check(&with(&["status"]), None).unwrap_err();
        assert!(refused.contains("leave out --broker"), "{refused}");
        let refused = check(&with(&["trigger"]), None).unwrap_err();
        assert!(refused.starts_with("rec fleet trigger"), "{refused}");
        let refused = check(&["vehicles"], None).unwrap_err();
        assert!(refused.contains("give --broker URL"), "{refused}");
        let refused = check(&["uploads", "all"], None).unwrap_err();
        assert!(refused.starts_with("rec fleet uploads"), "{refused}");
        assert!(check(&with(&["vehicles"]), Some(3))
            .unwrap_err()
            .contains("--dds-domain"));
        let interface = with(&["--interface", "10.0.0.1", "vehicles"]);
        assert!(check(&interface, None).unwrap_err().contains("--interface"));
        let refused = check(&["status", "--key", "fleet.pem"], None).unwrap_err();
        assert!(refused.contains("needs --broker"), "{refused}");
        let find = with(&["find", "--from", "-1h", "--to", "now", "--topic", "/cam/*"]);
        assert_eq!(check(&find, None), Ok(()));
    }
}
