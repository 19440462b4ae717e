//! `rec pause`, `rec resume`, `rec mark` and `rec trigger`: requests to a running
//! session.

use std::path::Path;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use clap::Args;
use recd_control::{Request, Response, SessionTriggered, TriggerRequest};

use crate::output::outln;
use crate::request::{ask, unexpected};

/// Stop writing a running session until `rec resume`.
///
/// Messages are still taken from the
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

/// Write a marker (time and text) into a session's files.
///
/// The marker is a Metadata record
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

/// Keep the window around a moment: an incident.
///
/// On a session on disk: the window [T − --before, T + --after] (default --before 30s) of
/// the session's files is pinned, so that retention (max_total_size, --max-files,
/// --max-age) never deletes them until the incident is released (rec incidents release
/// ID, its [incidents] keep, or release_after_upload); once T + --after has been written,
/// recd cuts the window into files of its own in the data directory's incidents/
/// (<id>_<note>_<session>_<source>.mcap), uploaded before any other file. Refused, with
/// the reason, when the pinned files would exceed [incidents] max_pinned_size.
///
/// On a session started with --pre-trigger: every message logged from --before ago
/// (default: all the buffer holds) to --after from now, with the last message of each
/// latched topic first and a Metadata record `trigger` (time, window, note), written to a
/// file of the session. A trigger whose window overlaps the one being written extends
/// that file instead. Listed as an incident of origin `buffer`.
///
/// Prints what it made at once; --wait returns once the files are complete.
#[derive(Debug, Args)]
pub struct TriggerArgs {
    /// The session; may be left out when only one is recording.
    #[arg(add = crate::complete::session_names())]
    name: Option<String>,
    #[command(flatten)]
    window: crate::window::WindowArgs,
    /// Return once the files are complete (the window has passed and its files are
    /// closed, or, on a session on disk, cut).
    #[arg(long)]
    wait: bool,
    /// Print the result as JSON.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    pub socket: crate::socket::SocketArg,
}

/// How long recd may take to answer a trigger, after its moment.
const TRIGGER_REPLY_TIMEOUT: Duration = Duration::from_secs(30);

/// How much longer `rec trigger --wait` waits for an incident to be cut.
const INCIDENT_CUT_GRACE: Duration = Duration::from_secs(600);

/// How much longer than its window `rec trigger --wait` waits for a file to close.
const TRIGGER_CLOSE_GRACE: Duration = Duration::from_secs(60);

/// `rec trigger`.
pub fn trigger(socket: &Path, args: &TriggerArgs) -> Result<ExitCode, String> {
    let (before_ms, after_ms) = args.window.sides_ms()?;
    let request = Request::Trigger(TriggerRequest {
        name: args.name.clone(),
        before_ms,
        after_ms,
        note: args.window.note.clone(),
        at_ns: args.window.at,
        id: args.window.id.clone(),
        origin: Some(recd_control::origin::CLI.to_string()),
        rule: None,
    });
    // recd answers a trigger ahead once its moment has come.
    let ahead = args.window.at.map_or(Duration::ZERO, |at| {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default();
        Duration::from_nanos(at).saturating_sub(now)
    });
    let response = crate::request::ask_within(socket, &request, TRIGGER_REPLY_TIMEOUT + ahead)?;
    let Response::Triggered(triggered) = &response else {
        return Err(unexpected(&response));
    };
    let longest = args.window.after + ahead + TRIGGER_CLOSE_GRACE;
    if let Some(incident) = &triggered.incident {
        // A cut reads and writes the whole window, at background priority.
        let wait = (args.wait, longest + INCIDENT_CUT_GRACE);
        return crate::incidents::print_taken(socket, triggered, incident, wait, args.json);
    }
    if args.wait {
        wait_until_closed(socket, triggered, longest)?;
    }
    if args.json {
        crate::output::print_json(triggered)?;
    } else {
        for file in &triggered.files {
            outln!(
                "{}: {} {} ({} to {})",
                triggered.name,
                match (triggered.repeated, file.extended) {
                    (true, _) => "already triggered, wrote",
                    (false, true) => "extended",
                    (false, false) => "writing",
                },
                file.path.display(),
                crate::format::timestamp(file.start_ns),
                crate::format::timestamp(file.end_ns)
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Waits until none of the trigger's files is being written any more (or the session
/// stopped, which finished them).
fn wait_until_closed(
    socket: &Path,
    triggered: &SessionTriggered,
    longest: Duration,
) -> Result<(), String> {
    let deadline = Instant::now() + longest;
    loop {
        let request = Request::Status {
            name: Some(triggered.name.clone()),
        };
        let writing = match ask(socket, &request) {
            Ok(Response::Status { sessions, .. }) => sessions
                .iter()
                .flat_map(|s| &s.current_files)
                .any(|path| triggered.files.iter().any(|f| &f.path == path)),
            // The session stopped: its files are finished.
            Err(_) => false,
            Ok(other) => return Err(unexpected(&other)),
        };
        if !writing {
            return Ok(());
        }
        if Instant::now() >= deadline {
            return Err(format!(
                "the trigger's file is still being written after {longest:?}"
            ));
        }
        std::thread::sleep(Duration::from_millis(100));
    }
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
