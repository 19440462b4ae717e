//! `rec stop`: a session's end and what its files hold.

use std::path::Path;
use std::process::ExitCode;

use clap::Args;
use recd_control::{Request, Response, SessionStopped, TopicReport};

use super::topic_table::{
    finished_counts, receive_thread_lines, rows_by_topic, unknown_loss_line, with_optional_counts,
    FINISHED_TOPIC_HEADER,
};
use crate::format;
use crate::output::{out, outln};
use crate::request::{ask, unexpected};
use crate::table::table;

/// Stop a session and finalize its files.
///
/// Exit status: 0 when every message is in the files or in the counts; 1 when a write
/// error ended the recording (or rec failed); 5 when a required topic (--expect
/// ...,required or [[expect]] required = true) was missing or stalled in the session; 4
/// when a topic shows `unknown loss`: its publisher's queue was found full and its samples
/// carry no sequence numbers, so samples may have been overwritten before recd could take
/// them, uncounted. When several hold, the first in this order: 1, 5, 4.
#[derive(Debug, Args)]
pub struct StopArgs {
    /// The session; may be left out when only one is recording.
    #[arg(add = crate::complete::session_names())]
    name: Option<String>,
    /// Stop every session.
    #[arg(long, conflicts_with = "name")]
    all: bool,
    /// Print the result as JSON.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    pub socket: crate::socket::SocketArg,
}

/// Asks recd to stop the session(s) and prints what each recorded; the exit status says
/// whether anything may be missing uncounted.
pub fn stop(socket: &Path, args: &StopArgs) -> Result<ExitCode, String> {
    let request = Request::Stop {
        name: args.name.clone(),
        all: args.all,
    };
    let response = ask(socket, &request)?;
    let Response::Stopped { sessions } = &response else {
        return Err(unexpected(&response));
    };
    if args.json {
        crate::output::print_json(sessions)?;
    } else if sessions.is_empty() {
        outln!("no session was recording");
    } else {
        sessions.iter().for_each(print_stopped);
    }
    let failed = sessions.iter().any(|s| s.write_error.is_some());
    let unknown_loss = sessions
        .iter()
        .any(|s| s.topics.iter().any(|t| t.report.unknown_loss));
    let required_failed = sessions.iter().any(|s| {
        s.health
            .as_ref()
            .is_some_and(|h| !h.failed_required.is_empty())
    });
    Ok(if failed {
        ExitCode::FAILURE
    } else if required_failed {
        ExitCode::from(EXIT_REQUIRED_FAILED)
    } else if unknown_loss {
        ExitCode::from(EXIT_UNKNOWN_LOSS)
    } else {
        ExitCode::SUCCESS
    })
}

/// `rec stop`'s exit status when a topic may have lost samples nobody could count.
const EXIT_UNKNOWN_LOSS: u8 = 4;

/// `rec stop`'s exit status when a required topic was missing or stalled.
const EXIT_REQUIRED_FAILED: u8 = 5;

fn print_stopped(session: &SessionStopped) {
    let messages: u64 = session.topics.iter().map(|t| t.report.written).sum();
    let bytes: u64 = session.files.iter().map(|f| f.bytes).sum();
    let dropped: u64 = session.topics.iter().map(|t| t.report.dropped).sum();
    let lost: u64 = session.topics.iter().map(|t| t.report.lost).sum();
    let overflows: u64 = session.topics.iter().map(|t| t.report.overflows).sum();
    let paused: u64 = session.topics.iter().map(|t| t.report.paused).sum();
    let evicted: u64 = session.topics.iter().map(|t| t.report.evicted).sum();
    let mut paused = if paused > 0 {
        format!(", {paused} not written while paused")
    } else {
        String::new()
    };
    if evicted > 0 {
        paused += &format!(", {evicted} let go by the pre-trigger buffer");
    }
    let filtered: u64 = session.topics.iter().map(|t| t.report.filtered).sum();
    if filtered > 0 {
        paused += &format!(", {filtered} filtered by rate limits or downsampling");
    }
    let repeated: u64 = session.topics.iter().map(|t| t.report.repeated).sum();
    if repeated > 0 {
        paused += &format!(", {repeated} arrived twice (recorded once)");
    }
    outln!(
        "stopped {}: {} messages, {} in {} file{}, {:.1} s ({}), {} dropped, {} lost, {} overflows{paused}",
        session.name,
        messages,
        format::bytes(bytes),
        session.files.len(),
        if session.files.len() == 1 { "" } else { "s" },
        session.duration_s,
        format::rate(bytes as f64 / session.duration_s.max(1e-9)),
        dropped,
        lost,
        overflows
    );
    let rows = rows_by_topic(
        &session.topics,
        |t| &t.report,
        |t| finished_counts(&t.report),
    );
    out!(
        "{}",
        table(
            &with_optional_counts(&FINISHED_TOPIC_HEADER, &session.topics, |t| &t.report),
            &rows
        )
    );
    let reports: Vec<&TopicReport> = session.topics.iter().map(|t| &t.report).collect();
    out!("{}", unknown_loss_line(&reports).unwrap_or_default());
    out!("{}", receive_thread_lines(&session.receive_threads));
    for file in &session.files {
        outln!(
            "file {}  {}",
            file.path.display(),
            format::bytes(file.bytes)
        );
    }
    if let Some(health) = &session.health {
        outln!("health: {}", health.verdict);
        for failed in &health.failed_required {
            let why = match failed.state {
                recd_health::HealthState::Missing => "never came (or came late)",
                _ => "stalled",
            };
            outln!("required topic {}: {} {why}", failed.topic, failed.state);
        }
    }
    if let Some(error) = &session.write_error {
        outln!("write error: {error}");
    }
}
