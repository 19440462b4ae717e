//! `rec status`: running sessions live (`--watch` redraws in place), or a finished
//! session's summary from the catalog.

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use clap::Args;
use recd_control::{Backlog, Request, Response, RuleStatus, SessionStatus, TopicReport};

use super::backlog::{backlog_line, backlog_text};
use super::list::kept_files;
use super::topic_table::{
    finished_counts, receive_thread_lines, rows_by_topic, unknown_loss_line, with_optional_counts,
    FINISHED_TOPIC_HEADER,
};
use crate::format;
use crate::output::{out, outln};
use crate::request::{ask, unexpected};
use crate::table::table;

/// Show running sessions: per-topic health, rates, drops.
///
/// Per topic: health (ok, slow, stalled for how long, `-` while its rate is learnt or its
/// checks are off), messages, msg/s, bytes, rate, dropped, lost and overflows; per session
/// a one-line health summary (required topics missing named), the file being written,
/// any warning, and its files waiting to be finished and uploaded (how many, the oldest's
/// wait, those retention deleted first). At the end: the same for every session, and how
/// much of the time background work gets now. A session that no longer records shows its
/// summary from the catalog.
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

/// Prints the status once, or every second with `--watch`.
pub fn status(socket: &Path, args: &StatusArgs) -> Result<ExitCode, String> {
    let request = Request::Status {
        name: args.name.clone(),
    };
    if !args.watch {
        let running = match (fetch_status(socket, &request), &args.name) {
            (Ok(running), _) => running,
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
            crate::output::print_json(&running.sessions)?;
        } else {
            out!(
                "{}{}{}{}",
                status_text(&running.sessions, None),
                backlog_text(running.backlog.as_ref()),
                upload_text(socket),
                super::rules_text(&running.rules)
            );
        }
        return Ok(ExitCode::SUCCESS);
    }
    let interactive = std::io::stdout().is_terminal();
    loop {
        let Running {
            sessions,
            backlog,
            rules,
        } = fetch_status(socket, &request)?;
        let background =
            backlog_text(backlog.as_ref()) + &upload_text(socket) + &super::rules_text(&rules);
        let text = if args.json {
            serde_json::to_string(&sessions).map_err(|e| e.to_string())? + "\n"
        } else if interactive {
            status_text(&sessions, topic_rows_that_fit(&sessions)) + &background
        } else {
            status_text(&sessions, None) + &background
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

/// The uploader's line for `rec status`, empty when uploads are off (or recd is older).
fn upload_text(socket: &Path) -> String {
    match crate::upload::fetch_status(socket) {
        Ok(status) => crate::upload::summary_line(&status)
            .map(|line| line + "\n")
            .unwrap_or_default(),
        Err(_) => String::new(),
    }
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
    out!(
        "{}",
        table(
            &with_optional_counts(&FINISHED_TOPIC_HEADER, &session.topics, |t| t),
            &rows
        )
    );
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

/// The running sessions, and every session's backlog (`None` from an older recd).
fn fetch_status(socket: &Path, request: &Request) -> Result<Running, String> {
    match ask(socket, request)? {
        Response::Status {
            sessions,
            backlog,
            rules,
        } => Ok(Running {
            sessions,
            backlog,
            rules,
        }),
        other => Err(unexpected(&other)),
    }
}

/// What `rec status` shows of the running sessions.
struct Running {
    sessions: Vec<SessionStatus>,
    backlog: Option<Backlog>,
    rules: Vec<RuleStatus>,
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
        + usize::from(!crate::health::summary_line(session).is_empty())
        + session.problems.len()
        + usize::from(session.disk_full.is_some())
        + usize::from(session.paused)
        + usize::from(session.buffer.is_some())
        + usize::from(session.write_error.is_some())
        + usize::from(!session.backlog.is_empty())
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
        let now = crate::health::now_ns();
        text += &crate::health::summary_line(session);
        let rows = rows_by_topic(
            &session.topics,
            |t| &t.report,
            |t| {
                vec![
                    t.health
                        .as_ref()
                        .map_or("-".into(), |h| crate::health::state_cell(h, now)),
                    t.report.written.to_string(),
                    format!("{:.1}", t.messages_per_s),
                    format::bytes(t.report.bytes_written),
                    format::rate(t.bytes_per_s),
                ]
            },
        );
        let shown = max_topic_rows.unwrap_or(rows.len()).min(rows.len());
        let header = with_optional_counts(
            &[
                "topic",
                "health",
                "messages",
                "msg/s",
                "bytes",
                "rate",
                "dropped",
                "lost",
                "overflows",
            ],
            &session.topics,
            |t| &t.report,
        );
        text += &table(&header, &rows[..shown]);
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
        text += &backlog_line("  waiting: ", &session.backlog).unwrap_or_default();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use recd_control::{RatedTopic, ReceiveThreadReport};

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
                        filtered: 0,
                        repeated: 0,
                        unknown_loss: false,
                    },
                    messages_per_s: 0.0,
                    bytes_per_s: 0.0,
                    health: None,
                    last_sample_ns: None,
                })
                .collect(),
            write_error: None,
            problems: Vec::new(),
            io_mode: "direct".into(),
            disk_full: None,
            paused: false,
            buffer: None,
            receive_threads: Vec::new(),
            required: Vec::new(),
            backlog: Backlog::default(),
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
