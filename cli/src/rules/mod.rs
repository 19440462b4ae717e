//! `rec rules`: the `[[rule]]`s of the running recd, and `rec rules test`, which runs them
//! over recorded files without making an incident.

mod offline;

use std::process::ExitCode;

use clap::{Args, Subcommand};
use recd_control::{Request, Response};

use crate::output::out;
use crate::request::{ask, unexpected};

/// Rules: incidents that fire by themselves.
///
/// Without a command: each [[rule]] of the running recd, what it watches, whether it runs
/// (or why it cannot), and how often it was evaluated, fired, skipped (it fell behind) or
/// failed. `rec rules test` tunes rules on recorded files before they are deployed.
#[derive(Debug, Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct RulesArgs {
    #[command(subcommand)]
    action: Option<RulesAction>,
    /// Print them as JSON.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    pub socket: crate::socket::SocketArg,
}

#[derive(Debug, Subcommand)]
enum RulesAction {
    Test(offline::TestArgs),
}

/// `rec rules`.
pub fn run(args: &RulesArgs) -> Result<ExitCode, String> {
    if let Some(RulesAction::Test(test)) = &args.action {
        return offline::run(test);
    }
    let response = ask(&args.socket.path, &Request::Status { name: None })?;
    let Response::Status { rules, .. } = response else {
        return Err(unexpected(&response));
    };
    if args.json {
        crate::output::print_json(&rules)?;
    } else if rules.is_empty() {
        out!("no rules: recd.toml has no [[rule]] and no campaign of the fleet runs\n");
    } else {
        out!("{}", crate::session::rules_text(&rules));
    }
    Ok(ExitCode::SUCCESS)
}
