//! What recd looks like now, taken from the backend at most a few times a second however
//! many clients ask: the metrics, the status and the page read the same snapshot.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use recd_control::{
    Backlog, IncidentsOverview, Request, Response, RuleStatus, SessionStatus, UploadStatus,
};

use crate::backend::{Backend, DaemonFacts};

/// A snapshot younger than this is served again rather than taken anew.
pub const FRESH_FOR: Duration = Duration::from_millis(250);

/// How many of the newest incidents a snapshot carries (the page's and
/// `/api/incidents`' list).
pub const NEWEST_INCIDENTS: usize = 20;

/// The daemon's state at one moment.
#[derive(Debug, Clone)]
pub struct Snapshot {
    /// When it was taken.
    pub taken: Instant,
    /// The running sessions, as `rec status --json` prints them.
    pub sessions: Vec<SessionStatus>,
    /// The uploader's state; `None` when uploads are off.
    pub uploads: Option<UploadStatus>,
    /// Every session's files waiting for background work, and the policy's state.
    pub backlog: Option<Backlog>,
    /// The rest.
    pub facts: DaemonFacts,
    /// The sizes of the sessions' current files.
    pub file_sizes: BTreeMap<PathBuf, u64>,
    /// The incidents counted and the newest of them; `None` when the catalog could not
    /// be read.
    pub incidents: Option<IncidentsOverview>,
    /// The `[[rule]]`s as they run.
    pub rules: Vec<RuleStatus>,
}

impl Snapshot {
    /// Takes one (blocking).
    pub fn take(backend: &dyn Backend) -> Result<Self, String> {
        let (sessions, backlog, rules) = match backend.answer(Request::Status { name: None }) {
            Ok(Response::Status {
                sessions,
                backlog,
                rules,
            }) => (sessions, backlog, rules),
            Ok(other) => return Err(format!("recd answered a status with {other:?}")),
            Err(error) => return Err(error.message),
        };
        let uploads = match backend.answer(Request::UploadStatus) {
            Ok(Response::Uploads(status)) if status.enabled => Some(status),
            _ => None,
        };
        let file_sizes = (sessions.iter())
            .flat_map(|session| &session.current_files)
            .filter_map(|path| Some((path.clone(), std::fs::metadata(path).ok()?.len())))
            .collect();
        // A catalog that cannot be read fails /readyz, which says so; not every snapshot.
        let incidents = backend
            .incidents(NEWEST_INCIDENTS)
            .map_err(|error| tracing::debug!("the snapshot has no incidents: {error}"))
            .ok();
        Ok(Self {
            taken: Instant::now(),
            sessions,
            uploads,
            backlog,
            facts: backend.facts(),
            file_sizes,
            incidents,
            rules,
        })
    }
}

/// The latest snapshot, renewed by one asker at a time.
pub struct Snapshots {
    backend: Arc<dyn Backend>,
    latest: tokio::sync::Mutex<Option<Arc<Snapshot>>>,
}

impl Snapshots {
    /// Snapshots of `backend`.
    pub fn new(backend: Arc<dyn Backend>) -> Self {
        Self {
            backend,
            latest: tokio::sync::Mutex::new(None),
        }
    }

    /// Forgets the latest snapshot: after an action, the next asker sees its effect.
    pub async fn invalidate(&self) {
        *self.latest.lock().await = None;
    }

    /// A snapshot no older than `max_age`; askers meanwhile wait for the one being taken.
    pub async fn get(&self, max_age: Duration) -> Result<Arc<Snapshot>, String> {
        let mut latest = self.latest.lock().await;
        if let Some(snapshot) = latest.as_ref() {
            if snapshot.taken.elapsed() <= max_age {
                return Ok(snapshot.clone());
            }
        }
        let backend = self.backend.clone();
        let snapshot = tokio::task::spawn_blocking(move || Snapshot::take(backend.as_ref()))
            .await
            .map_err(|error| format!("taking the status failed: {error}"))??;
        let snapshot = Arc::new(snapshot);
        *latest = Some(snapshot.clone());
        Ok(snapshot)
    }
}
