//! `rec fleet`: the recorders of a DDS domain, as one. `rec fleet status` lists every
//! recd that publishes its status; `rec fleet trigger` triggers all of them at one
//! moment and waits for each to answer.

mod link;
mod status;
mod trigger;

use std::net::IpAddr;
use std::process::ExitCode;
use std::time::Duration;

use clap::{Args, Subcommand};

/// Every recd of a DDS domain: status, one trigger for all.
///
/// Over the remote-control topics of eProsima DDS Record & Replay (what recd's
/// [remote_control] serves): recds with `status` on are listed; those with `enabled`
/// take the trigger.
#[derive(Debug, Args)]
pub struct FleetArgs {
    #[command(subcommand)]
    command: FleetCommand,
    #[command(flatten)]
    domain: DomainArgs,
}

#[derive(Debug, Subcommand)]
enum FleetCommand {
    Status(status::StatusArgs),
    Trigger(trigger::TriggerArgs),
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
    /// How long to listen for the recorders.
    #[arg(long, value_name = "DURATION", global = true, default_value = "2s", value_parser = recd_control::units::parse_duration)]
    listen: Duration,
}

/// `rec fleet`; `domain` is `rec --dds-domain N`, which the fleet's own option overrides.
pub fn run(args: &FleetArgs, domain: Option<u16>) -> Result<ExitCode, String> {
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
    }
}
