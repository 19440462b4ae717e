//! The protocol's replies from what the engine and the catalog say: live status, stop
//! reports, catalog listings and error replies.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use recd_catalog::{Catalog, CatalogError, Session};
use recd_control::{
    Backlog, BufferStatus, DiskFull, ErrorKind, ErrorReply, FileEntry, FileState, ListedSession,
    RatedTopic, ReceiveThreadReport, SessionState, SessionStatus, SessionStopped, TopicReport,
    UploadState,
};
use recd_engine::{ReceiveThreadStatus, RecordingStatus, RecordingSummary, StopError, TopicStatus};

use super::rates::Rates;

/// A failed request of `kind`.
pub fn error(kind: ErrorKind, message: impl Into<String>) -> ErrorReply {
    ErrorReply {
        kind,
        message: message.into(),
    }
}

/// A request that failed because the catalog did.
pub fn catalog_failure(failure: CatalogError) -> ErrorReply {
    error(ErrorKind::Failed, failure.to_string())
}

/// No session is called `name`.
pub fn unknown_session(name: &str) -> ErrorReply {
    error(
        ErrorKind::UnknownSession,
        format!("no session named {name:?} (see `rec status` and `rec list`)"),
    )
}

/// The live status of a running session.
pub fn session_status(
    name: &str,
    id: i64,
    directory: &Path,
    status: RecordingStatus,
    rates: &Rates,
    backlog: Backlog,
) -> SessionStatus {
    SessionStatus {
        name: name.to_string(),
        id,
        directory: directory.to_path_buf(),
        current_files: status.current_files,
        elapsed_s: status.elapsed.as_secs_f64(),
        bytes_written: status.bytes_written,
        bytes_per_s: rates.bytes_per_s,
        topics: status
            .topics
            .iter()
            .map(|t| rated_topic(t, rates.of(&t.service), t.last_sample_ns))
            .collect(),
        write_error: status.write_error,
        problems: status.problems.into_iter().collect(),
        io_mode: status.io_mode.to_string(),
        disk_full: status.disk_full.map(|full| DiskFull {
            free: full.free,
            minimum: full.minimum,
        }),
        paused: status.paused,
        buffer: status.buffer.map(|buffer| BufferStatus {
            duration_s: buffer.duration.as_secs_f64(),
            capacity_bytes: buffer.capacity_bytes,
            messages: buffer.messages,
            bytes: buffer.bytes,
            span_s: buffer.span.as_secs_f64(),
            evicted: status.topics.iter().map(|t| t.counts.evicted).sum(),
        }),
        receive_threads: receive_threads(&status.receive_threads),
        required: status.required,
        backlog,
    }
}

/// The receive threads' reports as the protocol carries them.
pub fn receive_threads(threads: &[ReceiveThreadStatus]) -> Vec<ReceiveThreadReport> {
    let micros = |d: std::time::Duration| d.as_secs_f64() * 1e6;
    threads
        .iter()
        .map(|t| ReceiveThreadReport {
            source: t.source.clone(),
            scheduling: t.scheduling.clone(),
            priority_warning: t.priority_warning.clone(),
            memory_warning: t.memory_warning.clone(),
            passes: t.passes,
            lateness_p999_us: micros(t.lateness_p999),
            lateness_max_us: micros(t.lateness_max),
            spilled: t.spilled,
            reclaimed: t.reclaimed,
        })
        .collect()
}

/// The report of a stopped session, with the state the catalog records for it. A clean
/// stop leaves complete files; after a panicked thread the files recd knew of may lack
/// their summary and need reindexing.
pub fn stop_report(
    name: &str,
    outcome: Result<RecordingSummary, StopError>,
    known_files: &[PathBuf],
) -> (SessionState, SessionStopped) {
    match outcome {
        Ok(summary) => {
            let files = summary
                .files
                .iter()
                .map(|f| FileEntry {
                    path: f.path.clone(),
                    bytes: f.bytes,
                    messages: f.message_count,
                    state: crate::files::closed_state(f.indexed),
                    upload: None,
                    health: None,
                    damaged_at: None,
                })
                .collect();
            let write_error = summary.write_error.as_ref().map(|e| e.to_string());
            let state = if write_error.is_some() {
                SessionState::Failed
            } else {
                SessionState::Stopped
            };
            let stopped = SessionStopped {
                name: name.to_string(),
                files,
                duration_s: summary.duration.as_secs_f64(),
                topics: summary
                    .topics
                    .iter()
                    .map(|t| rated_topic(t, (0.0, 0.0), None))
                    .collect(),
                write_error,
                receive_threads: receive_threads(&summary.receive_threads),
                health: Some(super::verdict::session_health(&summary)),
            };
            (state, stopped)
        }
        Err(error) => {
            let stopped = SessionStopped {
                name: name.to_string(),
                files: known_files
                    .iter()
                    .map(|path| FileEntry {
                        path: path.clone(),
                        bytes: 0,
                        messages: 0,
                        state: FileState::NeedsReindex,
                        upload: None,
                        health: None,
                        damaged_at: None,
                    })
                    .collect(),
                duration_s: 0.0,
                topics: Vec::new(),
                write_error: Some(error.to_string()),
                receive_threads: Vec::new(),
                health: None,
            };
            (SessionState::Failed, stopped)
        }
    }
}

/// The catalog's record of the file at `path`; an error naming it when it is none of a
/// session's.
pub fn catalog_file(catalog: &Catalog, path: &Path) -> Result<recd_catalog::File, ErrorReply> {
    catalog.file(path).map_err(catalog_failure)?.ok_or_else(|| {
        error(
            ErrorKind::InvalidArgument,
            format!("{} is not a file of any session", path.display()),
        )
    })
}

/// A catalog session with its files (and their upload states, from `uploads`) and final
/// topic counts.
pub fn listed(
    catalog: &Catalog,
    session: Session,
    uploads: &HashMap<PathBuf, UploadState>,
) -> Result<ListedSession, CatalogError> {
    let files = catalog.files(session.id)?;
    let topics = catalog.topics(session.id)?;
    Ok(ListedSession {
        name: session.name,
        id: session.id,
        state: session.state,
        directory: session.directory,
        started_ns: session.started_ns,
        stopped_ns: session.stopped_ns,
        files: files
            .into_iter()
            .map(|f| FileEntry {
                upload: uploads.get(&f.path).copied(),
                health: catalog.file_health(&f.path).ok().flatten(),
                damaged_at: catalog.damaged_at(&f.path).ok().flatten(),
                path: f.path,
                bytes: f.bytes,
                messages: f.messages,
                state: f.state,
            })
            .collect(),
        topics,
        health: catalog.session_health(session.id)?,
        reason: session.reason,
    })
}

/// A topic's counts from the engine, with its recent rates.
fn rated_topic(
    topic: &TopicStatus,
    (messages_per_s, bytes_per_s): (f64, f64),
    last_sample_ns: Option<u64>,
) -> RatedTopic {
    RatedTopic {
        report: TopicReport {
            name: topic.name.clone(),
            service: topic.service.clone(),
            received: topic.counts.received,
            written: topic.counts.written,
            dropped: topic.counts.dropped,
            lost: topic.counts.lost,
            overflows: topic.counts.overflows,
            bytes_written: topic.counts.bytes_written,
            paused: topic.counts.paused,
            evicted: topic.counts.evicted,
            filtered: topic.counts.filtered,
            repeated: topic.counts.repeated,
            unknown_loss: topic.counts.unknown_loss,
        },
        messages_per_s,
        bytes_per_s,
        health: Some(topic.health.clone()),
        last_sample_ns,
    }
}
