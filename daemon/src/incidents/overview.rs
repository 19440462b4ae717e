//! The incidents at a glance for the listener and the remote status: counted and the
//! newest read in two queries under the catalog's lock, the pinned files' sizes read
//! after it is let go, and never under the sessions' lock.

use recd_control::{ErrorReply, Incident, IncidentsOverview};

use super::{on_disk_bytes, Incidents};
use crate::sessions::replies::catalog_failure;

impl Incidents {
    /// The incidents counted, the bytes they pin, and the `newest` newest of them.
    pub fn overview(&self, newest: usize) -> Result<IncidentsOverview, ErrorReply> {
        let (tally, newest, pinned_paths) = {
            let catalog = self.catalog();
            let tally = catalog.incident_tally().map_err(catalog_failure)?;
            let newest = catalog.newest_incidents(newest).map_err(catalog_failure)?;
            let pinned_paths = catalog.pinned_paths().map_err(catalog_failure)?;
            (tally, newest, pinned_paths)
        };
        let pinned_bytes = on_disk_bytes(&pinned_paths);
        Ok(IncidentsOverview {
            newest,
            by_origin: tally.by_origin,
            pinned: tally.pinned,
            waiting_to_cut: tally.waiting_to_cut,
            refused: self.refused(),
            pinned_bytes,
            pinned_bytes_limit: self.pinned_bound(),
        })
    }

    /// The `newest` newest incidents, newest first, with their files.
    pub fn newest(&self, newest: usize) -> Result<Vec<Incident>, ErrorReply> {
        (self.catalog().newest_incidents(newest)).map_err(catalog_failure)
    }
}
