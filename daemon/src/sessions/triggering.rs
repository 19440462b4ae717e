//! Triggers: a session on disk makes an incident of one (`super::incidents`); a
//! pre-trigger session writes its window from the buffer, at a moment of the asker's
//! (`--at`), waited for when ahead, taken once per id however often it is repeated, and
//! recorded as an incident of origin `buffer`.

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;
use std::time::Duration;

use recd_control::{ErrorKind, ErrorReply, SessionTriggered, TriggerRequest, TriggeredFile};
use recd_engine::{TriggerError, TriggerWindow};

use super::incidents::{lead, OnDisk};
use super::replies::error;
use super::{resolve, Sessions};
use crate::clock::now_ns;

fn epoch_ns() -> u64 {
    now_ns().max(0) as u64
}

/// How many trigger ids are remembered for idempotence.
const REMEMBERED_IDS: usize = 4096;

/// The triggers taken by id: their answers, or `None` while one waits for its moment.
#[derive(Default)]
pub(super) struct TriggerLedger {
    answers: Mutex<Ledger>,
}

#[derive(Default)]
struct Ledger {
    by_id: HashMap<String, Option<SessionTriggered>>,
    order: VecDeque<String>,
}

/// What the ledger says of an id.
enum Taken {
    New,
    Answered(SessionTriggered),
    Waiting,
}

impl TriggerLedger {
    fn take(&self, id: &str) -> Taken {
        let mut ledger = self.answers.lock().expect("trigger ledger lock");
        match ledger.by_id.get(id) {
            Some(Some(answer)) => Taken::Answered(answer.clone()),
            Some(None) => Taken::Waiting,
            None => {
                ledger.by_id.insert(id.to_string(), None);
                ledger.order.push_back(id.to_string());
                while ledger.order.len() > REMEMBERED_IDS {
                    let oldest = ledger.order.pop_front().expect("not empty");
                    ledger.by_id.remove(&oldest);
                }
                Taken::New
            }
        }
    }

    fn settle(&self, id: &str, answer: Option<&SessionTriggered>) {
        let mut ledger = self.answers.lock().expect("trigger ledger lock");
        match answer {
            Some(answer) => {
                ledger.by_id.insert(id.to_string(), Some(answer.clone()));
            }
            None => {
                ledger.by_id.remove(id);
                ledger.order.retain(|taken| taken != id);
            }
        }
    }
}

impl Sessions {
    /// Makes an incident around a trigger's moment (now when it gives none): on a session
    /// on disk its window is pinned (the catalog keeps one per id and session); a
    /// pre-trigger session writes it from its buffer, blocking until a moment ahead has
    /// come.
    pub fn trigger(&self, request: &TriggerRequest) -> Result<SessionTriggered, ErrorReply> {
        let name = {
            let running = self.running.lock().expect("sessions lock");
            let name = resolve(&running, request.name.as_deref())?;
            let session = &running[&name];
            if session.recording.pre_trigger().is_none() {
                let on_disk = OnDisk {
                    name,
                    id: session.id,
                    bytes_per_s: session.rates.bytes_per_s,
                };
                // The catalog's work (pins, sizes) is done without holding the sessions.
                drop(running);
                return self.take_incident(&on_disk, request);
            }
            name
        };
        let id = request.id.as_deref().filter(|id| !id.is_empty());
        // Ids are kept per session: a rule's firing gives all its sessions one id.
        let key = id.map(|id| format!("{name}/{id}"));
        if let (Some(id), Some(key)) = (id, &key) {
            match self.triggers.take(key) {
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
        let answer = self.trigger_once(request);
        if let Some(key) = &key {
            self.triggers.settle(key, answer.as_ref().ok());
        }
        answer
    }

    fn trigger_once(&self, request: &TriggerRequest) -> Result<SessionTriggered, ErrorReply> {
        if let Some(at_ns) = request.at_ns {
            wait_for(at_ns)?;
        }
        let window = TriggerWindow {
            before: request.before_ms.map(Duration::from_millis),
            after: Duration::from_millis(request.after_ms),
            note: request.note.clone(),
            id: request.id.clone().unwrap_or_default(),
            clock_sync: crate::clock_sync::evidence(),
        };
        let running = self.running.lock().expect("sessions lock");
        let name = resolve(&running, request.name.as_deref())?;
        let triggered = running[&name]
            .recording
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
        let session = running[&name].id;
        drop(running);
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
            name,
            time_ns: triggered.time_ns,
            files: triggered
                .files
                .into_iter()
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
        self.record_buffer_incident(&answer, request, session);
        Ok(answer)
    }
}

/// Sleeps until `at_ns` (ns since the epoch) when it is ahead, within
/// `incidents::MAX_TRIGGER_LEAD`.
fn wait_for(at_ns: u64) -> Result<(), ErrorReply> {
    std::thread::sleep(lead(at_ns, epoch_ns())?);
    Ok(())
}
