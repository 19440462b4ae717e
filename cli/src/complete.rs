//! Shell completion: `rec completions SHELL` prints a script that asks `rec` itself what to
//! offer (clap_complete's dynamic completion), so that session names come from recd's
//! catalog as they are at the time of typing.

use std::ffi::OsStr;
use std::path::PathBuf;
use std::time::Duration;

use clap_complete::engine::{
    ArgValueCompleter, CompletionCandidate, PathCompleter, ValueCompleter,
};
use recd_control::{Request, Response};

/// The environment variable the completion script sets when it asks `rec` for candidates.
const COMPLETE_VAR: &str = "COMPLETE";

/// How long completion waits for recd: a shell must not hang on a busy or absent daemon.
const ASK_TIMEOUT: Duration = Duration::from_millis(500);

/// Answers a completion request from the shell and exits, when this run is one.
pub fn answer_if_asked(command: fn() -> clap::Command) {
    clap_complete::CompleteEnv::with_factory(command)
        .var(COMPLETE_VAR)
        .complete();
}

/// Writes the registration script of `shell` for `rec`.
pub fn registration(shell: clap_complete::Shell) -> Result<Vec<u8>, String> {
    let name = shell.to_string();
    let shells = clap_complete::env::Shells::builtins();
    let completer = shells
        .completer(&name)
        .ok_or_else(|| format!("no dynamic completion for {name}"))?;
    let mut script = Vec::new();
    completer
        .write_registration(COMPLETE_VAR, "rec", "rec", "rec", &mut script)
        .map_err(|e| e.to_string())?;
    Ok(script)
}

/// Completes the names of recd's sessions (from its catalog).
pub fn session_names() -> ArgValueCompleter {
    ArgValueCompleter::new(sessions_matching)
}

/// Completes session names and paths (`rec info`, `rec reindex`).
pub fn sessions_or_paths() -> ArgValueCompleter {
    ArgValueCompleter::new(|current: &OsStr| {
        let mut candidates = sessions_matching(current);
        candidates.extend(PathCompleter::any().complete(current));
        candidates
    })
}

fn sessions_matching(current: &OsStr) -> Vec<CompletionCandidate> {
    let prefix = current.to_string_lossy();
    let mut names = listed_session_names();
    names.retain(|name| name.starts_with(prefix.as_ref()));
    names.sort();
    names.dedup();
    names.into_iter().map(CompletionCandidate::new).collect()
}

/// The names recd's catalog lists; none when recd does not answer in time.
fn listed_session_names() -> Vec<String> {
    let socket = std::env::var_os("RECD_SOCKET").map_or_else(
        || PathBuf::from(crate::socket::DEFAULT_SOCKET),
        PathBuf::from,
    );
    match crate::request::ask_within(&socket, &Request::List, ASK_TIMEOUT) {
        Ok(Response::List { sessions }) => sessions.into_iter().map(|s| s.name).collect(),
        _ => Vec::new(),
    }
}
