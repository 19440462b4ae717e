//! Triggers: a session on disk takes an incident of one ([`super::taking`]); a
//! pre-trigger session writes its window from the buffer, at a moment of the asker's
//! (`--at`), waited for when ahead, taken once per id however often it is repeated, and
//! recorded as an incident of origin `buffer` that owns its files. No lock is held while
//! a moment is waited for or a writer answers.

use recd_catalog::{IncidentKey, NewIncident, SessionId};
use recd_control::{
    origin, CutState, ErrorKind, ErrorReply, SessionTriggered, TriggerRequest, TriggeredFile,
};
use recd_engine::{TriggerError, TriggerWindow};
use recd_storage::LogWindow;

use super::ledger::Taken;
use super::moment::{lead, Sides};
use super::taking::OnDisk;
use super::{naming, Incidents};
use crate::clock::now_ns;
use crate::sessions::replies::error;

fn epoch_ns() -> u64 {
    now_ns().max(0) as u64
}

impl Incidents {
    /// Makes an incident around a trigger's moment (now when it gives none): on a session
    /// on disk its window is pinned (the catalog keeps one per id and session); a
    /// pre-trigger session writes it from its buffer, blocking until a moment ahead has
    /// come.
    pub fn trigger(&self, request: &TriggerRequest) -> Result<SessionTriggered, ErrorReply> {
        let sides = Sides::of(request)?;
        let session = self.registry.get(request.name.as_deref())?;
        if session.recording.pre_trigger().is_none() {
            let on_disk = OnDisk {
                name: session.name.clone(),
                id: session.id,
                bytes_per_s: session.bytes_per_s(),
            };
            drop(session);
            return self.take(&on_disk, request, sides, None);
        }
        let name = session.name.clone();
        drop(session);
        let id = request.id.as_deref().filter(|id| !id.is_empty());
        // Ids are kept per session: a rule's firing gives all its sessions one id.
        let key = id.map(|id| format!("{name}/{id}"));
        if let (Some(id), Some(key)) = (id, &key) {
            match self.ledger.take(key) {
                Taken::New => {}
                Taken::Answered(mut answer) => {
                    answer.repeated = true;
                    tracing::info!(id, "trigger repeated; its file was written already");
                    return Ok(answer);
                }
                Taken::Waiting => {
                    return Err(error(
                        ErrorKind::InvalidArgument,
                        format!("trigger {id:?} was taken already and waits for its moment"),
                    ))
                }
            }
        }
        let answer = self.trigger_buffer(&name, request, sides);
        if let Some(key) = &key {
            self.ledger.settle(key, answer.as_ref().ok());
        }
        answer
    }

    /// Writes the window of the pre-trigger session `name` from its buffer.
    fn trigger_buffer(
        &self,
        name: &str,
        request: &TriggerRequest,
        sides: Sides,
    ) -> Result<SessionTriggered, ErrorReply> {
        if let Some(at_ns) = request.at_ns {
            std::thread::sleep(lead(at_ns, epoch_ns())?);
        }
        let window = TriggerWindow {
            before: sides.before,
            after: sides.after,
            note: request.note.clone(),
            id: request.id.clone().unwrap_or_default(),
            clock_sync: crate::clock_sync::evidence(),
        };
        let session = self.registry.get(Some(name))?;
        let triggered = (session.recording)
            .trigger(&window, request.at_ns)
            .map_err(|failure| {
                let kind = match failure {
                    TriggerError::NotBuffered
                    | TriggerError::TooOld { .. }
                    | TriggerError::Ahead { .. } => ErrorKind::InvalidArgument,
                    _ => ErrorKind::Failed,
                };
                error(kind, format!("cannot trigger session {name:?}: {failure}"))
            })?;
        let id = session.id;
        drop(session);
        tracing::info!(
            session = %name,
            files = triggered.files.len(),
            note = %request.note,
            id = request.id.as_deref().unwrap_or(""),
            late_ms = epoch_ns().saturating_sub(triggered.time_ns) / 1_000_000,
            clock_sync = %window.clock_sync,
            "triggered"
        );
        let answer = SessionTriggered {
            name: name.to_string(),
            time_ns: triggered.time_ns,
            files: (triggered.files.into_iter())
                .map(|file| TriggeredFile {
                    path: file.path,
                    start_ns: file.start_ns,
                    end_ns: file.end_ns,
                    extended: file.extended,
                })
                .collect(),
            id: request.id.clone(),
            repeated: false,
            incident: None,
        };
        self.record_buffer_incident(&answer, triggered.window, request, id);
        Ok(answer)
    }

    /// Records the window a pre-trigger session's trigger wrote from its buffer as an
    /// incident (origin `buffer`) of its own `window`, owning the files it went to
    /// (beside the incidents of earlier triggers whose file it extended).
    fn record_buffer_incident(
        &self,
        answer: &SessionTriggered,
        window: LogWindow,
        request: &TriggerRequest,
        session: SessionId,
    ) {
        let now = epoch_ns();
        let id = (request.id.clone())
            .filter(|id| !id.is_empty())
            .unwrap_or_else(|| naming::incident_id(answer.time_ns));
        let incidents = &self.config.incidents;
        let catalog = self.catalog();
        let result = catalog
            .add_incident(&NewIncident {
                id: id.clone(),
                session,
                note: request.note.clone(),
                origin: origin::BUFFER.to_string(),
                time_ns: answer.time_ns,
                window,
                created_ns: now,
                keep_until_ns: incidents.keep_until_ns(now),
                release_after_upload: incidents.release_after_upload,
                cut: CutState::Buffer,
                rule: request.rule.clone(),
                topics: None,
            })
            .and_then(|_| {
                let key = IncidentKey { id, session };
                (answer.files.iter()).try_for_each(|file| catalog.own_file(&file.path, &key))
            });
        if let Err(failure) = result {
            tracing::error!(session = %answer.name, "cannot record the trigger's incident: {failure}");
        }
    }
}
