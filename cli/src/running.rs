//! `rec pause`, `rec resume` and `rec mark`: requests to a running session.

use std::path::Path;
use std::process::ExitCode;

use clap::Args;
use recd_control::{Request, Response};

use crate::output::outln;
use crate::session::{ask, unexpected};

/// Stop writing a running session until `rec resume`: messages are still taken from the
/// publishers (so none is held up or overwritten) and counted as paused; the files stay
/// open.
#[derive(Debug, Args)]
pub struct PauseArgs {
    /// The session; may be left out when only one is recording.
    #[arg(add = crate::complete::session_names())]
    name: Option<String>,
    /// Print the result as JSON.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    pub socket: crate::socket::SocketArg,
}

/// Write a marker into the files a running session is writing: a Metadata record
/// `marker` with the time (ns since the Unix epoch) and TEXT. `rec info` lists markers.
#[derive(Debug, Args)]
pub struct MarkArgs {
    /// The session.
    #[arg(add = crate::complete::session_names())]
    name: String,
    /// What happened, e.g. "hard brake".
    text: String,
    /// Print the result as JSON.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    pub socket: crate::socket::SocketArg,
}

/// `rec pause` (`pause` true) or `rec resume`.
pub fn pause(socket: &Path, args: &PauseArgs, pause: bool) -> Result<ExitCode, String> {
    let name = args.name.clone();
    let request = if pause {
        Request::Pause { name }
    } else {
        Request::Resume { name }
    };
    let response = ask(socket, &request)?;
    let Response::Paused(paused) = &response else {
        return Err(unexpected(&response));
    };
    if args.json {
        crate::output::print_json(paused)?;
    } else {
        let state = if paused.paused { "paused" } else { "recording" };
        let already = if paused.changed { "" } else { " already" };
        outln!("{}: {state}{already}", paused.name);
    }
    Ok(ExitCode::SUCCESS)
}

/// `rec mark`.
pub fn mark(socket: &Path, args: &MarkArgs) -> Result<ExitCode, String> {
    let request = Request::Mark {
        name: Some(args.name.clone()),
        text: args.text.clone(),
    };
    let response = ask(socket, &request)?;
    let Response::Marked(marked) = &response else {
        return Err(unexpected(&response));
    };
    if args.json {
        crate::output::print_json(marked)?;
    } else {
        outln!(
            "{}: marker at {} in {}",
            marked.name,
            crate::format::timestamp(marked.time_ns),
            marked
                .files
                .iter()
                .map(|f| f.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    Ok(ExitCode::SUCCESS)
}
