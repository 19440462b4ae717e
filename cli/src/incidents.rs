//! `rec incidents`: what incidents keep (their window, pinned files, cut files and their
//! uploads), and `rec incidents release ID`; and what `rec trigger` prints of an
//! incident it made.

use std::path::Path;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use clap::{Args, Subcommand};
use recd_control::{CutState, Incident, IncidentTaken, Request, Response, SessionTriggered};

use crate::output::outln;
use crate::request::{ask, unexpected};

/// Incidents: the windows kept, their files and uploads.
///
/// Each incident (made by rec trigger, the fleet, the web page, a remote controller or a
/// pre-trigger session's window) with its id, note, origin (cli, remote, page, fleet,
/// buffer), moment T, window, the session's files it pins, its own cut files and their
/// upload state, newest first.
#[derive(Debug, Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct IncidentsArgs {
    #[command(subcommand)]
    action: Option<IncidentsAction>,
    /// Only this session's incidents (the newest session of that name).
    #[arg(add = crate::complete::session_names())]
    session: Option<String>,
    /// Print them as JSON.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    pub socket: crate::socket::SocketArg,
}

#[derive(Debug, Subcommand)]
enum IncidentsAction {
    /// End an incident's pin, so that retention may delete its files again.
    ///
    /// Its cut files stay until retention needs their room (uploaded ones go first).
    Release {
        /// The incident's id (rec incidents lists them).
        id: String,
        #[command(flatten)]
        socket: crate::socket::SocketArg,
    },
}

/// `rec incidents`.
pub fn run(args: &IncidentsArgs) -> Result<ExitCode, String> {
    if let Some(IncidentsAction::Release { id, socket }) = &args.action {
        let response = ask(&socket.path, &Request::ReleaseIncident { id: id.clone() })?;
        let Response::IncidentsReleased(released) = &response else {
            return Err(unexpected(&response));
        };
        outln!(
            "released incident {} ({} session(s)): retention may delete its files again",
            released.id,
            released.released
        );
        return Ok(ExitCode::SUCCESS);
    }
    let incidents = list(&args.socket.path, args.session.as_deref())?;
    if args.json {
        crate::output::print_json(&incidents)?;
        return Ok(ExitCode::SUCCESS);
    }
    if incidents.is_empty() {
        outln!("no incidents");
    }
    for incident in &incidents {
        print(incident);
    }
    Ok(ExitCode::SUCCESS)
}

fn list(socket: &Path, session: Option<&str>) -> Result<Vec<Incident>, String> {
    let response = ask(
        socket,
        &Request::Incidents {
            name: session.map(String::from),
        },
    )?;
    match response {
        Response::Incidents { incidents } => Ok(incidents),
        other => Err(unexpected(&other)),
    }
}

fn print(incident: &Incident) {
    let state = match (&incident.released, incident.cut) {
        (Some(released), _) => format!("released ({})", released.why),
        (None, CutState::Waiting) => "pinned, to be cut".to_string(),
        (None, CutState::Failed) => "pinned, cut failed".to_string(),
        (None, _) => "pinned".to_string(),
    };
    outln!(
        "{}  {}  origin {}  {}{}",
        incident.id,
        incident.session,
        incident.origin,
        state,
        if incident.note.is_empty() {
            String::new()
        } else {
            format!("  \"{}\"", incident.note)
        }
    );
    outln!(
        "  T {}  window {} to {} ({:.1} s before, {:.1} s after)",
        crate::format::timestamp(incident.time_ns),
        crate::format::timestamp(incident.start_ns),
        crate::format::timestamp(incident.end_ns),
        incident.time_ns.saturating_sub(incident.start_ns) as f64 / 1e9,
        incident.end_ns.saturating_sub(incident.time_ns) as f64 / 1e9,
    );
    if let Some(fired) = &incident.rule {
        outln!(
            "  rule {} fired on {} at {}: {}",
            fired.rule,
            fired.topic,
            crate::format::timestamp(fired.sample_ns),
            serde_json::Value::from_iter(fired.values.clone())
        );
    }
    if let Some(error) = &incident.cut_error {
        outln!("  cut failed: {error}");
    }
    if incident.released.is_none() {
        if let Some(until) = incident.keep_until_ns {
            outln!("  kept until {}", crate::format::timestamp(until));
        }
    }
    for file in &incident.pinned_files {
        outln!(
            "  pins {} ({})",
            file.path.display(),
            crate::format::bytes(file.bytes)
        );
    }
    for file in &incident.cut_files {
        outln!(
            "  cut  {} ({}, upload: {})",
            file.path.display(),
            crate::format::bytes(file.bytes),
            file.upload.map_or("none", |state| state.as_str())
        );
    }
}

/// Prints the incident a trigger made on a session on disk; with `wait`, once it is cut
/// (within `longest`). Exit 1 when its cut failed.
pub fn print_taken(
    socket: &Path,
    triggered: &SessionTriggered,
    taken: &IncidentTaken,
    (wait, longest): (bool, Duration),
    json: bool,
) -> Result<ExitCode, String> {
    if !wait {
        if json {
            crate::output::print_json(triggered)?;
        } else {
            outln!(
                "{}: incident {} {} {} to {}: {} file(s) pinned so far; cut files go to {}",
                triggered.name,
                taken.id,
                if triggered.repeated {
                    "was taken already,"
                } else {
                    "pins"
                },
                crate::format::timestamp(taken.start_ns),
                crate::format::timestamp(taken.end_ns),
                taken.pinned_files.len(),
                taken.directory.display()
            );
        }
        return Ok(ExitCode::SUCCESS);
    }
    let deadline = Instant::now() + longest;
    loop {
        let found = list(socket, Some(&triggered.name))?
            .into_iter()
            .find(|incident| incident.id == taken.id);
        if let Some(incident) = found {
            if incident.cut != CutState::Waiting {
                if json {
                    crate::output::print_json(&incident)?;
                } else {
                    print(&incident);
                }
                return Ok(if incident.cut == CutState::Failed {
                    ExitCode::FAILURE
                } else {
                    ExitCode::SUCCESS
                });
            }
        }
        if Instant::now() >= deadline {
            return Err(format!(
                "incident {} is still not cut after {longest:?} (rec incidents {} shows it)",
                taken.id, triggered.name
            ));
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}
