//! Keeping the catalog in step with a running session: its files as they are started and
//! closed, and its end.

use std::path::PathBuf;
use std::time::{SystemTime, UNIX_EPOCH};

use recd_catalog::{Catalog, CatalogError, File, SessionId};
use recd_control::{FileState, SessionState, SessionStopped};
use recd_engine::RecordingStatus;

/// The files of a session the catalog already has.
#[derive(Default)]
pub struct CatalogFiles {
    /// Files the session started, as recording (or since as complete).
    pub known: Vec<PathBuf>,
    /// Files a split closed, as complete.
    completed: Vec<PathBuf>,
}

impl CatalogFiles {
    /// Keeps the catalog's files of `session` current: a file it started is recording,
    /// a file a split closed is complete. Failures are logged; the next call retries.
    pub fn note(&mut self, catalog: &Catalog, session: SessionId, status: &RecordingStatus) {
        for closed in &status.closed_files {
            if self.completed.contains(&closed.path) {
                continue;
            }
            let file = File {
                session,
                path: closed.path.clone(),
                bytes: closed.bytes,
                messages: closed.messages,
                state: FileState::Complete,
            };
            match catalog.upsert_file(&file) {
                Ok(()) => self.completed.push(closed.path.clone()),
                Err(error) => {
                    tracing::error!("cannot mark {} complete: {error}", closed.path.display())
                }
            }
        }
        let Some(current) = &status.current_file else {
            return;
        };
        if self.known.contains(current) {
            return;
        }
        self.known.push(current.clone());
        let file = File {
            session,
            path: current.clone(),
            bytes: 0,
            messages: 0,
            state: FileState::Recording,
        };
        if let Err(error) = catalog.upsert_file(&file) {
            tracing::error!("cannot add {} to the catalog: {error}", current.display());
        }
    }
}

/// Records a session's end: its files as the stop report has them, its state, and its
/// final counts.
pub fn record_stop(
    catalog: &mut Catalog,
    session: SessionId,
    state: SessionState,
    stopped: &SessionStopped,
) -> Result<(), CatalogError> {
    for file in &stopped.files {
        catalog.upsert_file(&File {
            session,
            path: file.path.clone(),
            bytes: file.bytes,
            messages: file.messages,
            state: file.state,
        })?;
    }
    let topics: Vec<_> = stopped.topics.iter().map(|t| t.report.clone()).collect();
    catalog.finish_session(session, state, now_ns(), &topics)
}

/// Now, in ns since the Unix epoch, as the catalog keeps times.
pub fn now_ns() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as i64)
}
