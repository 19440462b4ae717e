//! What a recorder reports: its state as the contract names it and recd's detail, its
//! newest incidents included.

use std::collections::{BTreeMap, HashSet};
use std::sync::Mutex;

use recd_control::{SessionStatus, UploadState};
use recd_remote::{IncidentInfo, RecorderState, SessionInfo, StatusInfo, TopicInfo};

use crate::locks::lock;
use crate::sessions::Sessions;

/// Who this recorder is, for every status it writes.
#[derive(Debug, Clone)]
pub struct Identity {
    /// The name in the fleet.
    pub recorder: String,
    /// The host's name.
    pub host: String,
    /// The DDS participant's GUID prefix.
    pub participant: String,
    /// Commands are taken.
    pub control: bool,
}

/// The sessions suspended by a remote `suspend` (reported SUSPENDED rather than PAUSED
/// until resumed).
#[derive(Debug, Default)]
pub struct Suspended(Mutex<HashSet<String>>);

impl Suspended {
    /// Notes that `session` is suspended (`true`) or not any more.
    pub fn set(&self, session: &str, suspended: bool) {
        let mut names = lock(&self.0);
        if suspended {
            names.insert(session.to_string());
        } else {
            names.remove(session);
        }
    }

    fn contains(&self, session: &str) -> bool {
        lock(&self.0).contains(session)
    }
}

/// The state of `session`, or of the recorder as a whole when `None`: running when any
/// session writes everything it gets, else paused or suspended when one is, else
/// stopped.
pub fn state_of(
    statuses: &[SessionStatus],
    session: Option<&str>,
    suspended: &Suspended,
) -> RecorderState {
    let states = statuses
        .iter()
        .filter(|status| session.is_none_or(|name| status.name == name))
        .map(|status| session_state(status, suspended));
    states
        .min_by_key(|state| match state {
            RecorderState::Running => 0,
            RecorderState::Paused => 1,
            RecorderState::Suspended => 2,
            RecorderState::Stopped => 3,
        })
        .unwrap_or(RecorderState::Stopped)
}

fn session_state(status: &SessionStatus, suspended: &Suspended) -> RecorderState {
    if status.paused && suspended.contains(&status.name) {
        RecorderState::Suspended
    } else if status.paused || status.buffer.is_some() {
        RecorderState::Paused
    } else {
        RecorderState::Running
    }
}

/// The running sessions' statuses (none when they cannot be had).
pub fn statuses(sessions: &Sessions) -> Vec<SessionStatus> {
    sessions.status(None).unwrap_or_default()
}

/// recd's detail for a status: its sessions, disk and uploads.
pub fn info(
    identity: &Identity,
    sessions: &Sessions,
    statuses: &[SessionStatus],
    suspended: &Suspended,
) -> StatusInfo {
    StatusInfo {
        recorder: identity.recorder.clone(),
        host: identity.host.clone(),
        participant: identity.participant.clone(),
        time_ns: crate::clock::now_ns().max(0) as u64,
        control: identity.control,
        reply: None,
        sessions: statuses
            .iter()
            .map(|status| session_info(status, suspended))
            .collect(),
        disk_free_bytes: recd_storage::space_of(sessions.data_dir())
            .ok()
            .map(|space| space.available),
        upload: upload_summary(sessions),
        incidents: incidents(sessions),
    }
}

/// The newest incidents, as a status carries them (none when the catalog cannot be read).
fn incidents(sessions: &Sessions) -> Vec<IncidentInfo> {
    let newest = (sessions.incidents())
        .newest(recd_remote::STATUS_INCIDENTS)
        .unwrap_or_default();
    (newest.into_iter())
        .map(|incident| IncidentInfo {
            id: incident.id,
            session: incident.session,
            origin: incident.origin,
            note: incident.note,
            time_ns: incident.time_ns,
            start_ns: incident.start_ns,
            end_ns: incident.end_ns,
            cut: incident.cut.as_str().to_string(),
            released: incident.released.is_some(),
        })
        .collect()
}

fn session_info(status: &SessionStatus, suspended: &Suspended) -> SessionInfo {
    let topics: BTreeMap<String, TopicInfo> = status
        .topics
        .iter()
        .map(|topic| {
            let counts = &topic.report;
            let info = TopicInfo {
                received: counts.received,
                written: counts.written,
                dropped: counts.dropped,
                lost: (!counts.unknown_loss).then_some(counts.lost),
                paused: counts.paused,
                evicted: counts.evicted,
                filtered: counts.filtered,
                repeated: counts.repeated,
                health: topic.health.as_ref().map(|h| h.state.to_string()),
            };
            (counts.name.clone(), info)
        })
        .collect();
    SessionInfo {
        name: status.name.clone(),
        state: session_state(status, suspended).to_string(),
        files: status
            .current_files
            .iter()
            .map(|path| path.display().to_string())
            .collect(),
        bytes_per_s: status.bytes_per_s,
        topics,
        missing: (status.required.iter())
            .filter(|r| r.state == recd_health::HealthState::Missing)
            .map(|r| r.pattern.clone())
            .collect(),
    }
}

/// The uploader in a few words: how many files wait, failed and went, and its trouble.
fn upload_summary(sessions: &Sessions) -> Option<String> {
    let status = sessions.upload_status().ok()?;
    if !status.enabled {
        return None;
    }
    let count = |state: UploadState| status.files.iter().filter(|f| f.state == state).count();
    let mut summary = format!(
        "{} waiting, {} uploading, {} failed, {} uploaded",
        count(UploadState::Queued),
        count(UploadState::Uploading),
        count(UploadState::Failed),
        status.uploaded_files
    );
    if let Some(error) = &status.error {
        summary.push_str(&format!("; {error}"));
    }
    Some(summary)
}
