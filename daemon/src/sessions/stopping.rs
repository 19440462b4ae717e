//! Stopping sessions: each taken out of the registry, its recording stopped with no lock
//! held, its end recorded in the catalog and reported.

use recd_catalog::{Catalog, CatalogError, SessionId};
use recd_control::{ErrorReply, FileState, SessionState, SessionStopped};

use super::replies;
use super::session::Session;
use super::Sessions;
use crate::clock::now_ns;

impl Sessions {
    /// Stops the named session, the only one running, or all; finalizes their files.
    pub fn stop(&self, name: Option<&str>, all: bool) -> Result<Vec<SessionStopped>, ErrorReply> {
        let taken = self.registry.remove(name, all)?;
        let stopped = (taken.into_iter())
            .map(|session| self.finish(session))
            .collect();
        // Told before the reply: a recording started next meets the policy without them.
        self.finish_gate.set_recording(self.registry.count());
        Ok(stopped)
    }

    /// Stops a session's recording, records the end in the catalog and reports it.
    pub(super) fn finish(&self, session: Session) -> SessionStopped {
        let Session {
            name,
            id,
            recording,
            files,
            sampled,
            ..
        } = session;
        let told_unknown_loss = (sampled.into_inner())
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .told_unknown_loss;
        let (state, mut stopped) = replies::stop_report(&name, recording.stop(), &files.started());
        // The recording's ports and buffers, freed, would stay resident else.
        recd_engine::give_back_freed_memory();
        self.rules.session_ended(id);
        // Looked at before the catalog is: no lock while files are looked at.
        let gone: Vec<bool> = (stopped.files.iter())
            .map(|file| !file.path.exists())
            .collect();
        let catalog = self.catalog();
        mark_gone(&catalog, &mut stopped, &gone);
        add_file_health(&catalog, &mut stopped);
        drop(catalog);
        let recorded = (self.files.session_stopped(id, &stopped.files))
            .and_then(|()| record_stop(&mut self.catalog(), id, state, &stopped));
        if let Err(failure) = recorded {
            tracing::error!(session = %name, "cannot record the stop in the catalog: {failure}");
        }
        // Its files are closed and recorded: its incidents may be cut from them now.
        self.registry.stopped(id);
        for topic in &stopped.topics {
            let topic = &topic.report;
            if topic.unknown_loss && !told_unknown_loss.contains(&topic.service) {
                tracing::warn!(
                    session = %name,
                    topic = %topic.name,
                    service = %topic.service,
                    "unknown loss: the publisher's queue was found full and its samples carry no sequence numbers, so samples may have been overwritten uncounted"
                );
            }
        }
        tracing::info!(
            session = %name,
            files = stopped.files.len(),
            messages = stopped.topics.iter().map(|t| t.report.written).sum::<u64>(),
            "session stopped"
        );
        stopped
    }
}

/// Records a session's end: its state and its final counts (its files are the files'
/// life's to record).
fn record_stop(
    catalog: &mut Catalog,
    session: SessionId,
    state: SessionState,
    stopped: &SessionStopped,
) -> Result<(), CatalogError> {
    let topics: Vec<_> = stopped.topics.iter().map(|t| t.report.clone()).collect();
    let reason = stopped.write_error.as_deref();
    catalog.finish_session(session, state, reason, now_ns(), &topics)?;
    if let Some(health) = &stopped.health {
        catalog.set_session_health(session, health.verdict.name())?;
    }
    Ok(())
}

/// Each file of a stop report with the health verdict the catalog keeps for it (recorded
/// as the file ended).
fn add_file_health(catalog: &Catalog, stopped: &mut SessionStopped) {
    for file in &mut stopped.files {
        file.health = catalog.file_health(&file.path).ok().flatten();
    }
}

/// Files of a stop report that are gone by now (`gone`, one per file): deleted by recd
/// (as the catalog says), or missing (deleted by hand while the session ran).
fn mark_gone(catalog: &Catalog, stopped: &mut SessionStopped, gone: &[bool]) {
    for (file, gone) in stopped.files.iter_mut().zip(gone) {
        if !gone {
            continue;
        }
        let deleted = matches!(catalog.file(&file.path), Ok(Some(known)) if known.state == FileState::Deleted);
        file.state = if deleted {
            FileState::Deleted
        } else {
            FileState::Missing
        };
    }
}
