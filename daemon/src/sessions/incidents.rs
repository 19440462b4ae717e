//! Incidents of sessions on disk: a trigger pins the window of the session's files
//! (checked against the bound on pinned bytes), `rec incidents` lists them, and a release
//! ends a pin. Cutting them is the cutter's (`crate::incidents`).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use recd_catalog::{IncidentKey, NewIncident, SessionId};
use recd_control::{
    origin, CutState, ErrorKind, ErrorReply, Incident, IncidentTaken, IncidentsReleased,
    SessionTriggered, TriggerRequest,
};

use super::replies::{catalog_failure, error, unknown_session};
use super::Sessions;
use crate::clock::now_ns;
use crate::incidents::{naming, DIRECTORY};

/// How far ahead a trigger's moment may be: further is more likely a wrong clock or
/// unit than a plan.
pub const MAX_TRIGGER_LEAD: Duration = Duration::from_secs(600);

/// How far before its moment an incident keeps when the trigger names no `--before`.
pub const DEFAULT_BEFORE: Duration = Duration::from_secs(30);

/// What incidents were refused, by origin (`/metrics`).
pub type Refused = BTreeMap<String, u64>;

impl Sessions {
    /// Makes an incident of the session on disk `name` (running): its window is pinned
    /// at once, and cut once written to its end.
    pub(super) fn take_incident(
        &self,
        session: &OnDisk,
        request: &TriggerRequest,
    ) -> Result<SessionTriggered, ErrorReply> {
        let name = session.name.as_str();
        let now = now_ns().max(0) as u64;
        let time_ns = request.at_ns.unwrap_or(now);
        lead(time_ns, now)?;
        let before = request
            .before_ms
            .map_or(DEFAULT_BEFORE, Duration::from_millis);
        let start_ns = time_ns.saturating_sub(before.as_nanos() as u64);
        let end_ns = time_ns.saturating_add(request.after_ms * 1_000_000);
        let origin = request.origin.clone().unwrap_or(origin::CLI.to_string());
        let catalog = self.catalog();
        let id = match request.id.as_deref().filter(|id| !id.is_empty()) {
            Some(id) => id.to_string(),
            None => fresh_id(time_ns, |id| {
                catalog.has_incident(id, session.id).unwrap_or(true)
            }),
        };
        let key = IncidentKey {
            id: id.clone(),
            session: session.id,
        };
        if let Some(known) = catalog.incident(&key).map_err(catalog_failure)? {
            tracing::info!(session = %name, id, "incident repeated; it is kept already");
            return Ok(triggered(name, &known, true, self.incidents_dir()));
        }
        let overlapping = catalog
            .files_overlapping(session.id, start_ns, end_ns)
            .map_err(catalog_failure)?;
        if overlapping.is_empty() {
            return Err(error(
                ErrorKind::InvalidArgument,
                format!(
                    "none of session {name:?}'s files holds any of the window {} to {}: retention deleted them, or it lies before the session started",
                    crate::clock::rfc3339(start_ns),
                    crate::clock::rfc3339(end_ns)
                ),
            ));
        }
        let pinned_paths = catalog.pinned_paths().map_err(catalog_failure)?;
        let pinned = Pinned {
            bytes: on_disk_bytes(&pinned_paths),
            incidents: catalog.incident_tally().map_err(catalog_failure)?.pinned,
        };
        let unpinned = overlapping.iter().map(|file| &file.path);
        let estimate = estimate(
            on_disk_bytes(unpinned.filter(|path| !pinned_paths.contains(*path))),
            session.bytes_per_s,
            (start_ns, end_ns),
            now,
        );
        let bound = self.pinned_bound();
        if pinned.bytes + estimate > bound {
            self.refuse(&origin);
            let reason = format!(
                "incident refused: the files incidents pin would take {} ({} pinned now by {} incident(s), about {} for this one), more than max_pinned_size {}{}; release one (rec incidents release ID) or raise [incidents] max_pinned_size",
                bytesize::ByteSize::b(pinned.bytes + estimate),
                bytesize::ByteSize::b(pinned.bytes),
                pinned.incidents,
                bytesize::ByteSize::b(estimate),
                bytesize::ByteSize::b(bound),
                if self.config.incidents.max_pinned_size.is_none() {
                    " (its default: half of max_total_size, or a quarter of the disk)"
                } else {
                    ""
                }
            );
            tracing::warn!(session = %name, id, origin, "{reason}");
            return Err(error(ErrorKind::Failed, reason));
        }
        let incidents = &self.config.incidents;
        catalog
            .add_incident(&NewIncident {
                id: id.clone(),
                session: session.id,
                note: request.note.clone(),
                origin: origin.clone(),
                time_ns,
                start_ns,
                end_ns,
                created_ns: now,
                keep_until_ns: incidents.keep_until_ns(now),
                release_after_upload: incidents.release_after_upload,
                cut: CutState::Waiting,
                rule: request.rule.clone(),
            })
            .map_err(catalog_failure)?;
        let incident = catalog
            .incident(&key)
            .map_err(catalog_failure)?
            .ok_or_else(|| error(ErrorKind::Failed, "the incident vanished from the catalog"))?;
        drop(catalog);
        tracing::info!(
            session = %name,
            id,
            origin,
            note = %request.note,
            time_ns,
            before_s = before.as_secs_f64(),
            after_s = request.after_ms as f64 / 1e3,
            pinned_files = incident.pinned_files.len(),
            "incident: its window is pinned and will be cut"
        );
        Ok(triggered(name, &incident, false, self.incidents_dir()))
    }

    /// Records the window a pre-trigger session's trigger writes from its buffer as an
    /// incident (origin `buffer`), its files as the incident's own.
    pub(super) fn record_buffer_incident(
        &self,
        answer: &SessionTriggered,
        request: &TriggerRequest,
        session: SessionId,
    ) {
        let now = now_ns().max(0) as u64;
        let start_ns = answer
            .files
            .iter()
            .map(|f| f.start_ns)
            .min()
            .unwrap_or(answer.time_ns);
        let end_ns = answer
            .files
            .iter()
            .map(|f| f.end_ns)
            .max()
            .unwrap_or(answer.time_ns);
        let id = request
            .id
            .clone()
            .filter(|id| !id.is_empty())
            .unwrap_or_else(|| naming::incident_id(answer.time_ns));
        let catalog = self.catalog();
        let incidents = &self.config.incidents;
        let result = catalog
            .add_incident(&NewIncident {
                id: id.clone(),
                session,
                note: request.note.clone(),
                origin: origin::BUFFER.to_string(),
                time_ns: answer.time_ns,
                start_ns,
                end_ns,
                created_ns: now,
                keep_until_ns: incidents.keep_until_ns(now),
                release_after_upload: incidents.release_after_upload,
                cut: CutState::Buffer,
                rule: request.rule.clone(),
            })
            .and_then(|_| {
                let key = IncidentKey { id, session };
                answer
                    .files
                    .iter()
                    .try_for_each(|file| catalog.assign_to_incident(&file.path, &key))
            });
        if let Err(failure) = result {
            tracing::error!(session = %answer.name, "cannot record the trigger's incident: {failure}");
        }
    }

    /// The incidents of the newest session called `name`, or of all, newest first.
    pub fn incidents(&self, name: Option<&str>) -> Result<Vec<Incident>, ErrorReply> {
        let catalog = self.catalog();
        let session = match name {
            Some(name) => Some(
                catalog
                    .session_by_name(name)
                    .map_err(catalog_failure)?
                    .ok_or_else(|| unknown_session(name))?
                    .id,
            ),
            None => None,
        };
        catalog.incidents(session).map_err(catalog_failure)
    }

    /// Ends the pin of the incidents with `id`.
    pub fn release_incident(&self, id: &str) -> Result<IncidentsReleased, ErrorReply> {
        let catalog = self.catalog();
        let released = catalog
            .release_incidents(id, "released", now_ns().max(0) as u64)
            .map_err(catalog_failure)?;
        if released == 0 {
            let known = catalog.incidents(None).map_err(catalog_failure)?;
            let why = if known.iter().any(|i| i.id == id) {
                format!("incident {id:?} was released already")
            } else {
                format!("no incident has the id {id:?} (rec incidents lists them)")
            };
            return Err(error(ErrorKind::InvalidArgument, why));
        }
        tracing::info!(
            id,
            incidents = released,
            "incident released: retention may take its files again"
        );
        Ok(IncidentsReleased {
            id: id.to_string(),
            released,
        })
    }

    /// The bound on pinned bytes (`[incidents] max_pinned_size` or its default).
    pub fn pinned_bound(&self) -> u64 {
        let file_system = recd_storage::space_of(&self.config.data_dir).map_or(0, |s| s.total);
        self.config.incidents.pinned_bound(
            self.config.max_total_size.map(|size| size.as_u64()),
            file_system,
        )
    }

    fn refuse(&self, origin: &str) {
        *self
            .refused_incidents
            .lock()
            .expect("refused lock")
            .entry(origin.to_string())
            .or_default() += 1;
    }

    /// Incidents refused for want of room, by origin.
    pub fn refused_incidents(&self) -> Refused {
        self.refused_incidents.lock().expect("refused lock").clone()
    }

    /// Where cut files go.
    pub fn incidents_dir(&self) -> PathBuf {
        self.config.data_dir.join(DIRECTORY)
    }
}

/// How far a trigger's moment `at_ns` lies ahead of `now_ns` (zero when it has come);
/// refused beyond [`MAX_TRIGGER_LEAD`].
pub(super) fn lead(at_ns: u64, now_ns: u64) -> Result<Duration, ErrorReply> {
    let ahead = Duration::from_nanos(at_ns.saturating_sub(now_ns));
    if ahead > MAX_TRIGGER_LEAD {
        return Err(error(
            ErrorKind::InvalidArgument,
            format!(
                "the trigger's moment is {:.1} s ahead, more than the {} s recd accepts (a clock or unit mistake?)",
                ahead.as_secs_f64(),
                MAX_TRIGGER_LEAD.as_secs()
            ),
        ));
    }
    Ok(ahead)
}

/// A running session on disk, as taking an incident needs it.
pub(super) struct OnDisk {
    /// Its name.
    pub name: String,
    /// Its catalog id.
    pub id: SessionId,
    /// What it writes per second now.
    pub bytes_per_s: f64,
}

/// Bytes pinned, and by how many incidents.
struct Pinned {
    /// Bytes on disk.
    bytes: u64,
    /// Incidents not released.
    incidents: u64,
}

/// The bytes the files at `paths` take on disk now (those gone count nothing).
pub(super) fn on_disk_bytes<'a>(paths: impl IntoIterator<Item = &'a PathBuf>) -> u64 {
    (paths.into_iter())
        .filter_map(|path| std::fs::metadata(path).ok())
        .map(|metadata| metadata.len())
        .sum()
}

/// What a new incident over [start_ns, end_ns] will pin beyond what is pinned: the
/// `unpinned` bytes of the files its window overlaps that no incident pins yet, what its
/// session writes until the window's end at `bytes_per_s`, and its cut files (as much
/// as the window).
fn estimate(unpinned: u64, bytes_per_s: f64, (start_ns, end_ns): (u64, u64), now: u64) -> u64 {
    let ahead_s = end_ns.saturating_sub(now.max(start_ns)) as f64 / 1e9;
    let window_s = end_ns.saturating_sub(start_ns) as f64 / 1e9;
    unpinned + (bytes_per_s.max(0.0) * (ahead_s + window_s)) as u64
}

/// An id from the incident's moment that `taken` says is free (`-2`, `-3`… appended).
fn fresh_id(time_ns: u64, taken: impl Fn(&str) -> bool) -> String {
    let base = naming::incident_id(time_ns);
    std::iter::once(base.clone())
        .chain((2u32..).map(|n| format!("{base}-{n}")))
        .find(|id| !taken(id))
        .expect("some suffix is free")
}

fn triggered(
    name: &str,
    incident: &Incident,
    repeated: bool,
    directory: PathBuf,
) -> SessionTriggered {
    SessionTriggered {
        name: name.to_string(),
        time_ns: incident.time_ns,
        files: Vec::new(),
        id: Some(incident.id.clone()),
        repeated,
        incident: Some(IncidentTaken {
            id: incident.id.clone(),
            start_ns: incident.start_ns,
            end_ns: incident.end_ns,
            pinned_files: incident
                .pinned_files
                .iter()
                .map(|f| f.path.clone())
                .collect(),
            directory,
        }),
    }
}

/// What the cutter asks of the sessions.
impl Sessions {
    /// The catalog, shared.
    pub fn shared_catalog(&self) -> std::sync::Arc<std::sync::Mutex<recd_catalog::Catalog>> {
        self.catalog.clone()
    }

    /// Of a running session: up to which log time its files hold every message (`None`
    /// before any), and what finishing does to its files; `None` when it is not running.
    pub fn written_until(
        &self,
        session: SessionId,
    ) -> Option<(Option<u64>, recd_control::FinishMode)> {
        let running = self.running.lock().expect("sessions lock");
        let found = running.values().find(|s| s.id == session)?;
        Some((found.recording.status().written_until_ns, found.finish))
    }

    /// Why background work (cutting included) must wait now, if it must, and its pace.
    pub fn background_hold(&self) -> Option<String> {
        self.finish_gate.background_hold()
    }

    /// The pace background work keeps to now, if any (bytes read per second).
    pub fn background_pace(&self) -> Option<u64> {
        self.finish_gate.pace()
    }

    /// Queues incident `incident`'s cut file at `path` for upload first, when its
    /// session uploads (or `[upload]` is set and the session is gone).
    pub fn queue_cut_upload(&self, incident: &Incident, path: &std::path::Path, messages: u64) {
        let Some(uploads) = &self.uploads else {
            return;
        };
        let catalog = self.catalog();
        let session = match catalog.session_by_name(&incident.session) {
            Ok(Some(session)) => session,
            _ => return,
        };
        let files = crate::uploads::SessionFiles {
            session: session.name.clone(),
            started_ns: session.started_ns,
            priority: true,
        };
        if let Err(failure) = uploads.queue_cut(&catalog, &files, path, messages, incident) {
            tracing::error!(file = %path.display(), "cannot queue the incident's file for upload: {failure}");
        }
    }
}
