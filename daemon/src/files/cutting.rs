//! An incident's cut files, from the moment the cut made them: its own in the catalog
//! (pinned with it), first in the upload queue, and in its session's chain.

use std::path::PathBuf;

use recd_catalog::{CatalogError, IncidentKey};
use recd_chain::Kind;
use recd_control::{CutState, Incident};
use recd_storage::LogWindow;

use super::FileLife;
use crate::uploads::SessionFiles;

/// A file an incident's cut made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CutFile {
    /// Where it is.
    pub path: PathBuf,
    /// Its size.
    pub bytes: u64,
    /// The messages it holds (latched ones included).
    pub messages: u64,
}

impl FileLife {
    /// The cut of `incident` (`key`) made `made`, complete and indexed: the catalog
    /// records them as the incident's own and the cut as done, in one step; then each is
    /// queued for upload before every other file (when `[upload]` is set) under its
    /// session's prefix, and enters its session's chain as a cut.
    pub fn cut(
        &self,
        key: &IncidentKey,
        incident: &Incident,
        made: &[CutFile],
    ) -> Result<(), CatalogError> {
        let window = LogWindow {
            start_ns: incident.start_ns,
            end_ns: incident.end_ns,
        };
        {
            let catalog = self.catalog();
            for file in made {
                catalog.add_cut_file(key, &file.path, (file.bytes, file.messages), window)?;
            }
            catalog.set_cut(key, CutState::Cut, None)?;
        }
        for file in made {
            self.queue_cut_upload(key, incident, file);
            self.chain(key.session, &file.path, Kind::Cut);
        }
        Ok(())
    }

    /// Queues the cut `file` of `incident` for upload first, under its session's prefix.
    fn queue_cut_upload(&self, key: &IncidentKey, incident: &Incident, file: &CutFile) {
        let Some(uploads) = &self.uploads else {
            return;
        };
        let session = match self.catalog().session(key.session) {
            Ok(Some(session)) => session,
            Ok(None) => return,
            Err(error) => {
                tracing::error!(file = %file.path.display(), "cannot find the cut's session to upload it: {error}");
                return;
            }
        };
        let files = SessionFiles {
            session: session.name,
            started_ns: session.started_ns,
            priority: true,
        };
        if let Err(failure) =
            uploads.queue_cut(&self.catalog, &files, &file.path, file.messages, incident)
        {
            tracing::error!(file = %file.path.display(), "cannot queue the incident's file for upload: {failure}");
        }
    }
}
