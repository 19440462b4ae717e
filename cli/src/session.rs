//! `rec start`, `rec stop`, `rec status`, `rec list`: sessions of the recd daemon.

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use clap::Args;
use recd_control::{
    Client, FileEntry, FileState, ListedSession, ReceiveThreadReport, Request, Response,
    SessionStatus, SessionStopped, StartRequest, TopicReport,
};
use recd_storage::IoMode;

use crate::format;
use crate::output::{out, outln};
use crate::table::{natural_cmp, table};

/// How long recd may take to answer (a stop finalizes files, which takes a moment).
const REPLY_TIMEOUT: Duration = Duration::from_secs(120);

/// Start recording a session.
///
/// With no --topic every topic is recorded. Files go to recd's data directory, in a
/// directory named after the session. Shared-memory (iceoryx2) topics are recorded
/// unless --no-iceoryx2; with --dds-domain (or `dds_domain` in recd's configuration)
/// DDS / ROS 2 topics of that domain are recorded too, as ROS 2 MCAP (CDR as received),
/// into files of their own (`…_dds_NNNN.mcap` beside `…_iceoryx2_NNNN.mcap`), listed in
/// the directory's rosbag2 metadata.yaml.
#[derive(Debug, Args)]
pub struct StartArgs {
    /// The session's name (letters, digits, '-', '_', '.'); recd picks one when left out.
    #[arg(long)]
    name: Option<String>,
    /// Record topics matching this glob; repeatable. Globs match iceoryx2 service names,
    /// ROS 2 topic names (`/chatter` for DDS topic `rt/chatter`) and other DDS topic
    /// names. ROS's internal topics (/parameter_events, ros_discovery_info) are recorded
    /// only when a --topic selects them.
    #[arg(long = "topic", value_name = "GLOB")]
    topics: Vec<String>,
    /// Never record topics matching this glob; repeatable.
    #[arg(long = "exclude", value_name = "GLOB")]
    exclude: Vec<String>,
    /// Start a new file once one holds this much, e.g. 4GiB; 0 is no splitting (also
    /// when recd.toml sets a size); at least 1MiB otherwise.
    #[arg(long, value_name = "SIZE", value_parser = format::parse_size)]
    max_file_size: Option<u64>,
    /// Start a new file after this long, e.g. 10min; 0s is no splitting (also when
    /// recd.toml sets a duration); at least 1s otherwise.
    #[arg(long, value_name = "DURATION", value_parser = recd_control::units::parse_duration)]
    max_duration: Option<Duration>,
    /// Keep a CRC-32 of each file's data section.
    #[arg(long)]
    crc: bool,
    /// Record DDS / ROS 2 topics of this domain too (0 to 232, ROS_DOMAIN_ID).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(0..=232))]
    dds_domain: Option<u16>,
    /// Record DDS topics only, no iceoryx2 shared memory.
    #[arg(long)]
    no_iceoryx2: bool,
    /// Start paused: subscribe and count, write nothing until `rec resume`.
    #[arg(long)]
    paused: bool,
    /// Keep the last DURATION (e.g. 30s) of every selected topic in memory and write
    /// nothing until `rec trigger`, which writes the window around its moment into a
    /// file of its own.
    #[arg(long, value_name = "DURATION", value_parser = recd_control::units::parse_duration)]
    pre_trigger: Option<Duration>,
    /// The pre-trigger buffer's memory, e.g. 512MiB (default 1GiB, at least 1MiB): when
    /// full, the oldest messages are let go before DURATION has passed (counted as
    /// evicted). A session recording iceoryx2 and DDS gives each half.
    #[arg(long, value_name = "SIZE", value_parser = format::parse_size, requires = "pre_trigger")]
    buffer_size: Option<u64>,
    /// How to write the files (overrides recd's `io_mode`): auto uses direct I/O
    /// (O_DIRECT, no copy through the page cache) where the file system accepts it and
    /// buffered I/O elsewhere; direct fails where it is refused; buffered goes through
    /// the page cache.
    #[arg(long, value_name = "MODE")]
    io_mode: Option<IoMode>,
    /// Keep only the newest N files of this session (the one being written included):
    /// with --max-file-size or --max-duration, a ring of the last N files. Older ones
    /// are deleted and marked deleted in `rec list`.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    max_files: Option<u32>,
    /// Stop by itself after this long, e.g. 60s or 2h (within a second of it).
    #[arg(long, value_name = "DURATION", value_parser = recd_control::units::parse_duration)]
    duration: Option<Duration>,
    /// Put KEY=VALUE into a Metadata record (`user/<file name>`) at the start of every file of
    /// the session (e.g. vehicle=test-car-3); repeatable.
    #[arg(long = "metadata", value_name = "KEY=VALUE", value_parser = crate::attach::parse_metadata_entry)]
    metadata: Vec<(String, String)>,
    /// Put FILE (a calibration, say) into every file of the session as an MCAP
    /// Attachment, named after it; repeatable, 4 MiB at most together. rec reads it, so
    /// it need only be readable by you.
    #[arg(long = "attach", value_name = "FILE")]
    attach: Vec<PathBuf>,
    /// Print the result as JSON.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    pub socket: crate::socket::SocketArg,
}

/// Stop a session and finalize its files.
///
/// Exit status: 0 when every message is in the files or in the counts; 1 when a write
/// error ended the recording (or rec failed); 4 when a topic shows `unknown loss`: its
/// publisher's queue was found full and its samples carry no sequence numbers, so samples
/// may have been overwritten before recd could take them, uncounted.
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

/// Show running sessions: per topic messages, rate, MB/s, drops; the current file.
#[derive(Debug, Args)]
pub struct StatusArgs {
    /// Only this session.
    #[arg(add = crate::complete::session_names())]
    name: Option<String>,
    /// Refresh every second until Ctrl-C.
    #[arg(long)]
    watch: bool,
    /// Print the status as JSON.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    pub socket: crate::socket::SocketArg,
}

/// List sessions and their files from recd's catalog, newest first.
#[derive(Debug, Args)]
pub struct ListArgs {
    /// Print the list as JSON.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    pub socket: crate::socket::SocketArg,
}

/// Sends one request; recd's error replies become the command's error.
pub fn ask(socket: &Path, request: &Request) -> Result<Response, String> {
    ask_within(socket, request, REPLY_TIMEOUT)
}

/// [`ask`], waiting at most `timeout` to connect and for the reply.
pub fn ask_within(socket: &Path, request: &Request, timeout: Duration) -> Result<Response, String> {
    let mut client = Client::connect(socket, timeout).map_err(|e| e.to_string())?;
    match client.request(request).map_err(|e| e.to_string())? {
        Response::Error(error) => Err(error.message),
        response => Ok(response),
    }
}

pub fn unexpected(response: &Response) -> String {
    format!("recd answered with an unexpected {response:?}")
}

pub fn start(socket: &Path, args: &StartArgs) -> Result<ExitCode, String> {
    let metadata = crate::attach::metadata(&args.metadata)?;
    let attachments = crate::attach::read_attachments(&args.attach)?;
    let request = Request::Start(StartRequest {
        name: args.name.clone(),
        topics: args.topics.clone(),
        exclude: args.exclude.clone(),
        max_file_size: args.max_file_size,
        max_duration_ms: args.max_duration.map(|d| d.as_millis() as u64),
        crc: args.crc,
        dds_domain: args.dds_domain,
        no_iceoryx2: args.no_iceoryx2,
        io_mode: args.io_mode.map(|mode| mode.to_string()),
        max_files: args.max_files,
        duration_ms: args.duration.map(|d| d.as_millis() as u64),
        metadata,
        attachments,
        paused: args.paused,
        pre_trigger_ms: args.pre_trigger.map(|d| d.as_millis() as u64),
        buffer_size: args.buffer_size,
    });
    let Response::Started(started) = ask(socket, &request)? else {
        return Err("recd answered a start with something else".into());
    };
    if args.json {
        crate::output::print_json(&started)?;
    } else {
        outln!(
            "recording session {} into {} ({} I/O)",
            started.name,
            started.directory.display(),
            started.io_mode
        );
    }
    Ok(ExitCode::SUCCESS)
}

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
    Ok(if failed {
        ExitCode::FAILURE
    } else if unknown_loss {
        ExitCode::from(EXIT_UNKNOWN_LOSS)
    } else {
        ExitCode::SUCCESS
    })
}

/// `rec stop`'s exit status when a topic may have lost samples nobody could count.
const EXIT_UNKNOWN_LOSS: u8 = 4;

/// A line saying which topics may have lost samples uncounted; none when no topic did.
fn unknown_loss_line(topics: &[&TopicReport]) -> Option<String> {
    let names: Vec<&str> = topics
        .iter()
        .filter(|t| t.unknown_loss)
        .map(|t| t.name.as_str())
        .collect();
    (!names.is_empty()).then(|| {
        format!(
            "  unknown loss on {} topic{} ({}): a publisher's queue was found full and its samples carry no sequence numbers, so samples may be missing uncounted\n",
            names.len(),
            if names.len() == 1 { "" } else { "s" },
            names.join(", ")
        )
    })
}

/// One line per receive thread (how it is scheduled, how late its passes came, loans it
/// took back), and its warnings.
fn receive_thread_lines(threads: &[ReceiveThreadReport]) -> String {
    let mut text = String::new();
    for thread in threads {
        text += &format!(
            "  receive {}: {}, {} scheduled passes, late p99.9 {} max {}, {} spilled, {} reclaimed\n",
            thread.source,
            thread.scheduling,
            thread.passes,
            format::micros(thread.lateness_p999_us),
            format::micros(thread.lateness_max_us),
            thread.spilled,
            thread.reclaimed,
        );
        for warning in thread.priority_warning.iter().chain(&thread.memory_warning) {
            text += &format!("  warning: {warning}\n");
        }
    }
    text
}

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
    out!("{}", table(&FINISHED_TOPIC_HEADER, &rows));
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
    if let Some(error) = &session.write_error {
        outln!("write error: {error}");
    }
}

pub fn status(socket: &Path, args: &StatusArgs) -> Result<ExitCode, String> {
    let request = Request::Status {
        name: args.name.clone(),
    };
    if !args.watch {
        let sessions = match (fetch_status(socket, &request), &args.name) {
            (Ok(sessions), _) => sessions,
            (Err(not_running), Some(name)) => {
                return if finished_status(socket, name, args.json)? {
                    Ok(ExitCode::SUCCESS)
                } else {
                    Err(not_running)
                };
            }
            (Err(error), None) => return Err(error),
        };
        if args.json {
            crate::output::print_json(&sessions)?;
        } else {
            out!("{}", status_text(&sessions, None));
        }
        return Ok(ExitCode::SUCCESS);
    }
    let interactive = std::io::stdout().is_terminal();
    loop {
        let sessions = fetch_status(socket, &request)?;
        let text = if args.json {
            serde_json::to_string(&sessions).map_err(|e| e.to_string())? + "\n"
        } else if interactive {
            status_text(&sessions, topic_rows_that_fit(&sessions))
        } else {
            status_text(&sessions, None)
        };
        let mut stdout = std::io::stdout().lock();
        if interactive && !args.json {
            // Clear the screen and draw from the top, so the view refreshes in place.
            let _ = write!(stdout, "\x1b[2J\x1b[H");
        }
        if stdout
            .write_all(text.as_bytes())
            .and_then(|()| stdout.flush())
            .is_err()
        {
            return Ok(ExitCode::SUCCESS);
        }
        drop(stdout);
        std::thread::sleep(Duration::from_secs(1));
    }
}

/// One row per topic, sorted by name (naturally: `topic_6` before `topic_56`): the
/// name, `middle`'s cells, dropped, lost and overflows.
fn rows_by_topic<T>(
    topics: &[T],
    report: impl Fn(&T) -> &TopicReport,
    middle: impl Fn(&T) -> Vec<String>,
) -> Vec<Vec<String>> {
    let mut topics: Vec<&T> = topics.iter().collect();
    topics.sort_by(|a, b| natural_cmp(&report(a).name, &report(b).name));
    topics
        .into_iter()
        .map(|t| {
            let counts = report(t);
            let mut row = vec![counts.name.clone()];
            row.extend(middle(t));
            let lost = if counts.unknown_loss {
                "unknown loss".to_string()
            } else {
                counts.lost.to_string()
            };
            row.extend([
                counts.dropped.to_string(),
                lost,
                counts.overflows.to_string(),
            ]);
            row
        })
        .collect()
}

/// The header of a finished session's topic table (`rec stop`, `rec status` of a
/// stopped session).
const FINISHED_TOPIC_HEADER: [&str; 7] = [
    "topic",
    "received",
    "written",
    "bytes",
    "dropped",
    "lost",
    "overflows",
];

/// The counts a finished session's table shows between a topic's name and its losses.
fn finished_counts(report: &TopicReport) -> Vec<String> {
    vec![
        report.received.to_string(),
        report.written.to_string(),
        format::bytes(report.bytes_written),
    ]
}

/// `rec status NAME` of a session that no longer records: its summary from the catalog
/// (the newest session of that name); false when the catalog has none.
fn finished_status(socket: &Path, name: &str, json: bool) -> Result<bool, String> {
    let response = ask(socket, &Request::List)?;
    let Response::List { sessions } = response else {
        return Err(unexpected(&response));
    };
    let Some(session) = sessions
        .iter()
        .filter(|s| s.name == name)
        .max_by_key(|s| s.started_ns)
    else {
        return Ok(false);
    };
    if json {
        crate::output::print_json(&[session])?;
        return Ok(true);
    }
    let kept = kept_files(session);
    let sum = |count: fn(&TopicReport) -> u64| session.topics.iter().map(count).sum::<u64>();
    let seconds = session
        .stopped_ns
        .map(|stopped| (stopped - session.started_ns).max(0) as f64 / 1e9);
    outln!(
        "{} {} (not recording): {} messages, {} in {} file{}{}, {} dropped, {} lost, {} overflows",
        session.name,
        session.state,
        sum(|t| t.written),
        format::bytes(kept.iter().map(|f| f.bytes).sum()),
        kept.len(),
        if kept.len() == 1 { "" } else { "s" },
        seconds.map_or(String::new(), |s| format!(", {s:.1} s")),
        sum(|t| t.dropped),
        sum(|t| t.lost),
        sum(|t| t.overflows),
    );
    let rows = rows_by_topic(&session.topics, |t| t, finished_counts);
    out!("{}", table(&FINISHED_TOPIC_HEADER, &rows));
    let reports: Vec<&TopicReport> = session.topics.iter().collect();
    out!("{}", unknown_loss_line(&reports).unwrap_or_default());
    for file in &session.files {
        outln!(
            "file {}  {}  {}",
            file.path.display(),
            format::bytes(file.bytes),
            file.state
        );
    }
    if let Some(reason) = &session.reason {
        outln!("failed: {reason}");
    }
    Ok(true)
}

fn fetch_status(socket: &Path, request: &Request) -> Result<Vec<SessionStatus>, String> {
    match ask(socket, request)? {
        Response::Status { sessions } => Ok(sessions),
        other => Err(unexpected(&other)),
    }
}

/// How many topic rows each session may show so that every session line and column
/// heading stays on the terminal; `None` when all fit or the height is unknown.
fn topic_rows_that_fit(sessions: &[SessionStatus]) -> Option<usize> {
    let (rows, _) = console::Term::stdout().size_checked()?;
    let rows = usize::from(rows);
    let topics: usize = sessions.iter().map(|s| s.topics.len()).sum();
    let fixed: usize = sessions.iter().map(status_lines_besides_topics).sum();
    // One line is left for the cursor.
    if fixed + topics < rows {
        return None;
    }
    let cut_marks = sessions.len();
    Some(rows.saturating_sub(1 + fixed + cut_marks) / sessions.len().max(1))
}

/// The lines of a session's status that are not topic rows.
fn status_lines_besides_topics(session: &SessionStatus) -> usize {
    let reports: Vec<&TopicReport> = session.topics.iter().map(|t| &t.report).collect();
    2 + usize::from(session.topics.is_empty())
        + receive_thread_lines(&session.receive_threads)
            .lines()
            .count()
        + usize::from(unknown_loss_line(&reports).is_some())
        + session.problems.len()
        + usize::from(session.disk_full.is_some())
        + usize::from(session.paused)
        + usize::from(session.buffer.is_some())
        + usize::from(session.write_error.is_some())
}

/// "file F", "files F, G" (a file per source family), or "file -" while none is open.
fn current_files(files: &[PathBuf]) -> String {
    let paths: Vec<String> = files.iter().map(|p| p.display().to_string()).collect();
    match paths.len() {
        0 => "file -".to_string(),
        1 => format!("file {}", paths[0]),
        _ => format!("files {}", paths.join(", ")),
    }
}

/// The status of running sessions as text; with `max_topic_rows`, each session's topic
/// table stops after that many rows and says how many it left out.
fn status_text(sessions: &[SessionStatus], max_topic_rows: Option<usize>) -> String {
    if sessions.is_empty() {
        return "no session is recording\n".into();
    }
    let mut text = String::new();
    for session in sessions {
        text += &format!(
            "{}  {:.0} s  {}  {}  {} I/O  {}\n",
            session.name,
            session.elapsed_s,
            format::bytes(session.bytes_written),
            format::rate(session.bytes_per_s),
            session.io_mode,
            current_files(&session.current_files)
        );
        let rows = rows_by_topic(
            &session.topics,
            |t| &t.report,
            |t| {
                vec![
                    t.report.written.to_string(),
                    format!("{:.1}", t.messages_per_s),
                    format::bytes(t.report.bytes_written),
                    format::rate(t.bytes_per_s),
                ]
            },
        );
        let shown = max_topic_rows.unwrap_or(rows.len()).min(rows.len());
        text += &table(
            &[
                "topic",
                "messages",
                "msg/s",
                "bytes",
                "rate",
                "dropped",
                "lost",
                "overflows",
            ],
            &rows[..shown],
        );
        if rows.is_empty() {
            text += "  no topic matches the selection yet\n";
        }
        if shown < rows.len() {
            text += &format!(
                "  … {} more topics (a taller terminal, or rec status {} --json, shows them)\n",
                rows.len() - shown,
                session.name
            );
        }
        let reports: Vec<&TopicReport> = session.topics.iter().map(|t| &t.report).collect();
        text += &unknown_loss_line(&reports).unwrap_or_default();
        text += &receive_thread_lines(&session.receive_threads);
        for (service, problem) in &session.problems {
            text += &format!("  problem: {service}: {problem}\n");
        }
        if let Some(full) = &session.disk_full {
            text += &format!(
                "  paused: disk full (free {}, minimum {})\n",
                format::bytes(full.free),
                format::bytes(full.minimum)
            );
        }
        if session.paused {
            let paused: u64 = session.topics.iter().map(|t| t.report.paused).sum();
            text += &format!(
                "  paused (rec resume {} writes again): {paused} messages not written\n",
                session.name
            );
        }
        if let Some(buffer) = &session.buffer {
            text += &format!(
                "  pre-trigger buffer (rec trigger {} writes it): {:.1} of {} s, {} of {} ({} messages), {} evicted\n",
                session.name,
                buffer.span_s,
                buffer.duration_s,
                format::bytes(buffer.bytes),
                format::bytes(buffer.capacity_bytes),
                buffer.messages,
                buffer.evicted
            );
        }
        if let Some(error) = &session.write_error {
            text += &format!("  write error: {error}\n");
        }
    }
    text
}

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
        &["session", "state", "started", "files", "size", "messages"],
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
            outln!(
                "    {}  {}  {}  {}",
                file.path.display(),
                format::bytes(file.bytes),
                messages,
                file.state
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
    ]
}

/// A listed session's files still on disk (neither deleted by retention nor missing).
fn kept_files(session: &ListedSession) -> Vec<&FileEntry> {
    (session.files.iter())
        .filter(|f| !matches!(f.state, FileState::Deleted | FileState::Missing))
        .collect()
}

/// The catalog's files of a session, for `rec reindex SESSION`.
pub fn session_files(socket: &Path, name: &str) -> Result<Vec<PathBuf>, String> {
    match ask(
        socket,
        &Request::Files {
            name: name.to_string(),
        },
    )? {
        Response::Files { session } => Ok(session.files.into_iter().map(|f| f.path).collect()),
        other => Err(unexpected(&other)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use recd_control::RatedTopic;

    fn session_with_topics(count: usize) -> SessionStatus {
        SessionStatus {
            name: "drive".into(),
            id: 1,
            directory: PathBuf::from("/data/drive"),
            current_files: Vec::new(),
            elapsed_s: 1.0,
            bytes_written: 0,
            bytes_per_s: 0.0,
            topics: (0..count)
                .map(|n| RatedTopic {
                    report: TopicReport {
                        name: format!("topic_{n}"),
                        service: format!("topic_{n}"),
                        received: 0,
                        written: 0,
                        dropped: 0,
                        lost: 0,
                        overflows: 0,
                        bytes_written: 0,
                        paused: 0,
                        evicted: 0,
                        unknown_loss: false,
                    },
                    messages_per_s: 0.0,
                    bytes_per_s: 0.0,
                })
                .collect(),
            write_error: None,
            problems: Vec::new(),
            io_mode: "direct".into(),
            disk_full: None,
            paused: false,
            buffer: None,
            receive_threads: Vec::new(),
        }
    }

    #[test]
    fn a_topic_that_may_have_lost_samples_uncounted_says_so_and_so_does_a_refused_priority() {
        let mut session = session_with_topics(2);
        session.topics[1].report.overflows = 3;
        session.topics[1].report.unknown_loss = true;
        session.receive_threads = vec![ReceiveThreadReport {
            source: "iceoryx2".into(),
            scheduling: "nice -10".into(),
            priority_warning: Some("cannot run SCHED_FIFO 10: recd lacks CAP_SYS_NICE".into()),
            memory_warning: None,
            passes: 100,
            lateness_p999_us: 1500.0,
            lateness_max_us: 2100.0,
            spilled: 2,
            reclaimed: 3,
        }];
        let text = status_text(&[session.clone()], None);
        let row = text.lines().find(|l| l.starts_with("topic_1")).unwrap();
        assert!(row.contains("unknown loss"), "{text}");
        assert!(!text
            .lines()
            .find(|l| l.starts_with("topic_0"))
            .unwrap()
            .contains("unknown"));
        assert!(text.contains("unknown loss on 1 topic (topic_1)"), "{text}");
        assert!(
            text.contains("receive iceoryx2: nice -10, 100 scheduled passes, late p99.9 1.5 ms max 2.1 ms, 2 spilled, 3 reclaimed"),
            "{text}"
        );
        assert!(text.contains("warning: cannot run SCHED_FIFO 10: recd lacks CAP_SYS_NICE"));
        assert_eq!(
            text.lines().count(),
            status_lines_besides_topics(&session) + session.topics.len(),
            "{text}"
        );
    }

    #[test]
    fn a_cut_status_keeps_the_session_line_and_headings_and_says_what_it_left_out() {
        let text = status_text(&[session_with_topics(60)], Some(5));
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines[0].starts_with("drive "), "{text}");
        assert!(lines[1].starts_with("topic "), "{text}");
        // Natural order: topic_2 before topic_10.
        let shown: Vec<&str> = lines[2..7]
            .iter()
            .map(|l| l.split_whitespace().next().unwrap())
            .collect();
        assert_eq!(
            shown,
            ["topic_0", "topic_1", "topic_2", "topic_3", "topic_4"]
        );
        assert!(lines[7].contains("55 more topics"), "{text}");
        assert_eq!(lines.len(), 8, "{text}");

        let whole = status_text(&[session_with_topics(60)], None);
        assert_eq!(whole.lines().count(), 62);
    }
}
