//! Taking an incident of a session on disk: its window is pinned at once (checked against
//! the bound on pinned bytes), and cut once written to its end. The catalog is read and
//! written under its lock; the pinned files' sizes are read with no lock held.

use std::collections::HashSet;
use std::path::PathBuf;

use recd_catalog::{IncidentKey, NewIncident, SessionId};
use recd_control::{
    origin, CutState, ErrorKind, ErrorReply, Incident, IncidentTaken, SessionTriggered,
    TriggerRequest,
};
use recd_storage::window::ON_DISK_BEFORE;
use recd_storage::LogWindow;

use super::admission::{estimate, keyless_refusal, refusal, Pinned};
use super::ids::fresh_id;
use super::moment::{lead, Sides};
use super::{on_disk_bytes, Incidents};
use crate::clock::now_ns;
use crate::sessions::replies::{catalog_failure, error};

/// A running session on disk, as taking an incident needs it.
pub struct OnDisk {
    /// Its name.
    pub name: String,
    /// Its catalog id.
    pub id: SessionId,
    /// What it writes per second now.
    pub bytes_per_s: f64,
}

/// What the catalog says before an incident is added: its id, and what its window
/// overlaps and what is pinned already.
struct Before {
    id: String,
    overlapping: Vec<PathBuf>,
    pinned_paths: HashSet<PathBuf>,
    pinned_incidents: u64,
}

impl Incidents {
    /// Makes an incident of the session on disk `session` (running) around the moment
    /// `request` names (now when none) with the window `sides` asks for: pinned at once,
    /// cut once written to its end, keeping the `topics` matching these glob patterns
    /// (`None`: every topic).
    pub(super) fn take(
        &self,
        session: &OnDisk,
        request: &TriggerRequest,
        sides: Sides,
        topics: Option<&[String]>,
    ) -> Result<SessionTriggered, ErrorReply> {
        let name = session.name.as_str();
        let now = now_ns().max(0) as u64;
        let time_ns = request.at_ns.unwrap_or(now);
        lead(time_ns, now)?;
        let before = sides.before.unwrap_or(ON_DISK_BEFORE);
        let window = LogWindow::around(time_ns, before, sides.after);
        let origin = request.origin.clone().unwrap_or(origin::CLI.to_string());
        let found = match self.before_adding(session, request, time_ns, window)? {
            Ok(before) => before,
            Err(known) => return Ok(self.triggered(name, &known, true)),
        };
        if found.overlapping.is_empty() {
            return Err(error(
                ErrorKind::InvalidArgument,
                format!(
                    "none of session {name:?}'s files holds any of the window {} to {}: retention deleted them, or it lies before the session started",
                    crate::clock::rfc3339(window.start_ns),
                    crate::clock::rfc3339(window.end_ns)
                ),
            ));
        }
        if let Some(reason) = self.keyless(name, &found.overlapping) {
            tracing::warn!(session = %name, id = found.id, origin, "{reason}");
            return Err(error(ErrorKind::InvalidArgument, reason));
        }
        let pinned = Pinned {
            bytes: on_disk_bytes(&found.pinned_paths),
            incidents: found.pinned_incidents,
        };
        let unpinned =
            (found.overlapping.iter()).filter(|path| !found.pinned_paths.contains(*path));
        let estimate = estimate(on_disk_bytes(unpinned), session.bytes_per_s, window, now);
        let default_bound = self.config.incidents.max_pinned_size.is_none();
        if let Some(reason) = refusal(pinned, estimate, self.pinned_bound(), default_bound) {
            self.refuse(&origin);
            tracing::warn!(session = %name, id = found.id, origin, "{reason}");
            return Err(error(ErrorKind::Failed, reason));
        }
        let id = found.id;
        let incidents = &self.config.incidents;
        let key = IncidentKey {
            id: id.clone(),
            session: session.id,
        };
        let catalog = self.catalog();
        let added = catalog
            .add_incident(&NewIncident {
                id: id.clone(),
                session: session.id,
                note: request.note.clone(),
                origin: origin.clone(),
                time_ns,
                window,
                created_ns: now,
                keep_until_ns: incidents.keep_until_ns(now),
                release_after_upload: incidents.release_after_upload,
                cut: CutState::Waiting,
                rule: request.rule.clone(),
                topics: topics.map(<[String]>::to_vec),
            })
            .map_err(catalog_failure)?;
        let incident = catalog
            .incident(&key)
            .map_err(catalog_failure)?
            .ok_or_else(|| error(ErrorKind::Failed, "the incident vanished from the catalog"))?;
        drop(catalog);
        if !added {
            // Taken by the same id meanwhile.
            return Ok(self.triggered(name, &incident, true));
        }
        let (before, after) = window.sides(time_ns);
        tracing::info!(
            session = %name,
            id,
            origin,
            note = %request.note,
            time_ns,
            before_s = before.as_secs_f64(),
            after_s = after.as_secs_f64(),
            pinned_files = incident.pinned_files.len(),
            "incident: its window is pinned and will be cut"
        );
        Ok(self.triggered(name, &incident, false))
    }

    /// Under the catalog's lock: the incident's id (the asker's or a fresh one), and what
    /// its `window` overlaps and what is pinned; the incident itself when one with its id
    /// was taken already.
    fn before_adding(
        &self,
        session: &OnDisk,
        request: &TriggerRequest,
        time_ns: u64,
        window: LogWindow,
    ) -> Result<Result<Before, Incident>, ErrorReply> {
        let catalog = self.catalog();
        let id = match request.id.as_deref().filter(|id| !id.is_empty()) {
            Some(id) => id.to_string(),
            None => fresh_id(time_ns, |id| catalog.has_incident(id, session.id))
                .map_err(catalog_failure)?
                .ok_or_else(|| {
                    error(
                        ErrorKind::Failed,
                        "every id made from the incident's moment is taken; give one (--id)",
                    )
                })?,
        };
        let key = IncidentKey {
            id: id.clone(),
            session: session.id,
        };
        if let Some(known) = catalog.incident(&key).map_err(catalog_failure)? {
            tracing::info!(session = %session.name, id, "incident repeated; it is kept already");
            return Ok(Err(known));
        }
        let overlapping = (catalog.files_overlapping(session.id, window))
            .map_err(catalog_failure)?
            .into_iter()
            .map(|file| file.path)
            .collect();
        Ok(Ok(Before {
            id,
            overlapping,
            pinned_paths: catalog.pinned_paths().map_err(catalog_failure)?,
            pinned_incidents: catalog.incident_tally().map_err(catalog_failure)?.pinned,
        }))
    }

    /// Why the cut of an incident of session `name` could not read the `overlapping`
    /// files: sealed ones whose keys recd no longer holds.
    fn keyless(&self, name: &str, overlapping: &[PathBuf]) -> Option<String> {
        let keys = self.keys.as_ref()?;
        let reach = self.config.encryption.as_ref()?.key_reach;
        let keyless: Vec<PathBuf> = (overlapping.iter())
            .filter(|path| recd_storage::is_sealed(path) && !keys.holds(path))
            .cloned()
            .collect();
        keyless_refusal(name, &keyless, reach)
    }

    /// The answer to a trigger that took (or had taken, `repeated`) `incident`.
    fn triggered(&self, name: &str, incident: &Incident, repeated: bool) -> SessionTriggered {
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
                directory: self.directory(),
            }),
        }
    }
}
