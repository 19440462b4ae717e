//! `rec list`: sessions and their files from recd's catalog.

use std::path::Path;
use std::process::ExitCode;
use std::time::Duration;

use clap::Args;
use recd_control::{FileEntry, FileState, ListedSession, Request, Response};

use crate::format;
use crate::output::outln;
use crate::request::{ask, unexpected};
use crate::table::table;

/// List sessions and their files from recd's catalog.
///
/// Newest first. Each file with its size, messages and state (recording, complete,
/// indexed, needs-reindex, deleted, missing), and its upload state when it is queued (queued, uploading,
/// uploaded, failed).
#[derive(Debug, Args)]
pub struct ListArgs {
    /// Print the list as JSON.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    pub socket: crate::socket::SocketArg,
}

/// Prints every session of the catalog with its files, newest first.
pub fn list(socket: &Path, args: &ListArgs) -> Result<ExitCode, String> {
    let response = ask(socket, &Request::List)?;
    let Response::List { sessions } = &response else {
        return Err(unexpected(&response));
    };
    if args.json {
        crate::output::print_json(sessions)?;
        return Ok(ExitCode::SUCCESS);
    }
    if sessions.is_empty() {
        outln!("no sessions yet");
        return Ok(ExitCode::SUCCESS);
    }
    let rows: Vec<Vec<String>> = sessions.iter().map(session_row).collect();
    let text = table(
        &[
            "session", "state", "started", "files", "size", "messages", "health",
        ],
        &rows,
    );
    let mut lines = text.lines();
    outln!("{}", lines.next().unwrap_or_default());
    for (session, line) in sessions.iter().zip(lines) {
        outln!("{line}");
        if let Some(reason) = &session.reason {
            outln!("    failed: {reason}");
        }
        for file in &session.files {
            let messages = match file.state {
                FileState::NeedsReindex if file.messages == 0 => "messages: after reindex".into(),
                _ => format!("{} messages", file.messages),
            };
            let upload = file
                .upload
                .map(|state| format!("  upload: {state}"))
                .unwrap_or_default();
            let health = (file.health.as_ref())
                .map(|verdict| format!("  health: {verdict}"))
                .unwrap_or_default();
            let state = match file.damaged_at {
                Some(offset) => format!("{}, recovered, damaged at offset {offset}", file.state),
                None => file.state.to_string(),
            };
            outln!(
                "    {}  {}  {}  {state}{health}{upload}",
                file.path.display(),
                format::bytes(file.bytes),
                messages,
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn session_row(session: &ListedSession) -> Vec<String> {
    let kept = kept_files(session);
    vec![
        session.name.clone(),
        session.state.to_string(),
        humantime::format_rfc3339_seconds(
            std::time::UNIX_EPOCH + Duration::from_nanos(session.started_ns.max(0) as u64),
        )
        .to_string(),
        kept.len().to_string(),
        format::bytes(kept.iter().map(|f| f.bytes).sum()),
        kept.iter().map(|f| f.messages).sum::<u64>().to_string(),
        session.health.clone().unwrap_or_else(|| "-".into()),
    ]
}

/// A listed session's files still on disk (neither deleted by retention nor missing).
pub(super) fn kept_files(session: &ListedSession) -> Vec<&FileEntry> {
    (session.files.iter())
        .filter(|f| !matches!(f.state, FileState::Deleted | FileState::Missing))
        .collect()
}
