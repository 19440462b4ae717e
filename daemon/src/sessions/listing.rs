//! What the catalog says of the sessions: `rec list`, a session's files, and a file `rec
//! reindex` rewrote.

use std::path::Path;

use recd_control::{ErrorReply, ListedSession};

use super::replies::{catalog_failure, catalog_file, listed, unknown_session};
use super::Sessions;

impl Sessions {
    /// Sessions and files from the catalog, newest first.
    pub fn list(&self) -> Result<Vec<ListedSession>, ErrorReply> {
        let catalog = self.catalog();
        let sessions = catalog.sessions().map_err(catalog_failure)?;
        let uploads = catalog.upload_states().map_err(catalog_failure)?;
        sessions
            .into_iter()
            .map(|session| listed(&catalog, session, &uploads).map_err(catalog_failure))
            .collect()
    }

    /// The newest session of that name, with its files.
    pub fn files(&self, name: &str) -> Result<ListedSession, ErrorReply> {
        let catalog = self.catalog();
        let session = catalog
            .session_by_name(name)
            .map_err(catalog_failure)?
            .ok_or_else(|| unknown_session(name))?;
        let uploads = catalog.upload_states().map_err(catalog_failure)?;
        listed(&catalog, session, &uploads).map_err(catalog_failure)
    }

    /// Marks a catalog file that `rec reindex` rewrote in place as indexed.
    pub fn mark_reindexed(&self, path: &Path, bytes: u64, messages: u64) -> Result<(), ErrorReply> {
        let file = catalog_file(&self.catalog(), path)?;
        (self.files)
            .reindexed(&file, bytes, messages)
            .map_err(catalog_failure)
    }
}
