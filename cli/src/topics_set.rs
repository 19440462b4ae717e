//! `rec topics-set`: change what a running session records.

use std::path::Path;
use std::process::ExitCode;

use clap::Args;
use recd_control::{Request, Response, SetTopicsRequest};

use crate::output::outln;
use crate::request::{ask, unexpected};

/// Change what a running session records, without a gap.
///
/// Topics it keeps lose no sample across the change. Topics --remove names are received
/// one last time and end in the files being written (their counts are final, as `rec
/// status` shows them); topics --add names start with their next sample. Each file being
/// written gets a marker `topics-set: +GLOB -GLOB` stamped with the moment of the change
/// (`rec info` lists it), and the session's record in the catalog the new selection.
///
/// A removed glob joins the session's --exclude globs; an added one leaves them and joins
/// its --topic globs (a session that records every topic stays so). An exclude glob still
/// wins over an added one it matches: `--add` the glob that was removed to take it back.
#[derive(Debug, Args)]
pub struct TopicsSetArgs {
    /// The session; may be left out when only one is recording.
    #[arg(add = crate::complete::session_names())]
    name: Option<String>,
    /// Record the topics matching this glob from now on; repeatable.
    #[arg(long = "add", value_name = "GLOB")]
    add: Vec<String>,
    /// Record the topics matching this glob no more; repeatable.
    #[arg(long = "remove", value_name = "GLOB")]
    remove: Vec<String>,
    /// Print the result as JSON.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    pub socket: crate::socket::SocketArg,
}

/// `rec topics-set`.
pub fn run(socket: &Path, args: &TopicsSetArgs) -> Result<ExitCode, String> {
    if args.add.is_empty() && args.remove.is_empty() {
        return Err("rec topics-set: nothing to change; give --add GLOB or --remove GLOB".into());
    }
    let request = Request::SetTopics(SetTopicsRequest {
        name: args.name.clone(),
        add: args.add.clone(),
        remove: args.remove.clone(),
    });
    let response = ask(socket, &request)?;
    let Response::TopicsChanged(changed) = &response else {
        return Err(unexpected(&response));
    };
    if args.json {
        crate::output::print_json(changed)?;
        return Ok(ExitCode::SUCCESS);
    }
    let patterns = |globs: &[String], none: &str| {
        if globs.is_empty() {
            none.to_string()
        } else {
            globs.join(" ")
        }
    };
    outln!(
        "{}: topics changed at {}",
        changed.name,
        (changed.times_ns.iter())
            .map(|&t| crate::format::timestamp(t))
            .collect::<Vec<_>>()
            .join(", ")
    );
    outln!("  topics:  {}", patterns(&changed.topics, "all"));
    outln!("  exclude: {}", patterns(&changed.exclude, "none"));
    Ok(ExitCode::SUCCESS)
}
