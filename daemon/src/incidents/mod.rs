//! Incidents: one concept for "keep this window". A trigger of a session on disk takes
//! an incident whose window is pinned at once ([`taking`]) and cut once written
//! ([`Cutter`]); a pre-trigger session writes its window from its buffer and records it
//! as an incident of origin `buffer` ([`triggering`], once per id: [`ledger`]).
//! `rec incidents` lists them, a release ends a pin, and the overview counts them for the
//! listener and remote status. What they pin is the catalog's; their files' life is
//! `crate::files`'.

mod admission;
mod cutter;
mod ids;
mod ledger;
pub mod moment;
pub mod naming;
mod overview;
mod taking;
mod topics;
mod triggering;
mod window;

pub use cutter::{Cutter, CutterParts};
pub use topics::topic_filter;
pub use window::WindowTake;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

use recd_catalog::Catalog;
use recd_control::{ErrorKind, ErrorReply, Incident, IncidentsReleased};

use crate::clock::now_ns;
use crate::config::DaemonConfig;
use crate::locks::lock;
use crate::sessions::registry::Registry;
use crate::sessions::replies::{catalog_failure, error, unknown_session};

/// The folder of the data directory that holds the cut files (no session may be called
/// so); the chain names them under it, and the bucket keeps them under it too.
pub const DIRECTORY: &str = recd_chain::INCIDENTS_DIR;

/// What incidents were refused, by origin (`/metrics`).
pub type Refused = std::collections::BTreeMap<String, u64>;

/// The daemon's incidents, and what taking, listing and releasing them needs.
pub struct Incidents {
    catalog: Arc<Mutex<Catalog>>,
    registry: Arc<Registry>,
    config: Arc<DaemonConfig>,
    /// Triggers of pre-trigger sessions taken by id.
    ledger: ledger::TriggerLedger,
    /// Incidents refused for want of room, by origin.
    refused: Mutex<Refused>,
    /// The keys of sealed files, when `[encryption]` is set: a cut needs its inputs'.
    keys: Option<recd_storage::SealKeys>,
}

impl Incidents {
    /// Incidents of the sessions in `registry`, kept in `catalog` under `config`
    /// (`[incidents]`, the data directory, `max_total_size`); `keys` are the sealed
    /// files' keys, when sealing is on.
    pub fn new(
        catalog: Arc<Mutex<Catalog>>,
        registry: Arc<Registry>,
        config: Arc<DaemonConfig>,
        keys: Option<recd_storage::SealKeys>,
    ) -> Self {
        Self {
            catalog,
            registry,
            config,
            ledger: Default::default(),
            refused: Mutex::default(),
            keys,
        }
    }

    fn catalog(&self) -> MutexGuard<'_, Catalog> {
        lock(&self.catalog)
    }

    /// The incidents of the newest session called `name`, or of all, newest first.
    pub fn list(&self, name: Option<&str>) -> Result<Vec<Incident>, ErrorReply> {
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
    pub fn release(&self, id: &str) -> Result<IncidentsReleased, ErrorReply> {
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
        *lock(&self.refused).entry(origin.to_string()).or_default() += 1;
    }

    /// Incidents refused for want of room, by origin.
    pub fn refused(&self) -> Refused {
        lock(&self.refused).clone()
    }

    /// Where cut files go.
    pub fn directory(&self) -> PathBuf {
        incidents_dir(&self.config.data_dir)
    }
}

/// Where the cut files of the recordings under `data_dir` go.
pub fn incidents_dir(data_dir: &Path) -> PathBuf {
    data_dir.join(DIRECTORY)
}

/// The bytes the files at `paths` take on disk now (those gone count nothing); looked at
/// with no lock held.
fn on_disk_bytes<'a>(paths: impl IntoIterator<Item = &'a PathBuf>) -> u64 {
    (paths.into_iter())
        .filter_map(|path| std::fs::metadata(path).ok())
        .map(|metadata| metadata.len())
        .sum()
}
