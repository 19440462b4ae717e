//! A closed file replaced in place by its finished copy (chunked, indexed, maybe
//! compressed), only while the catalog still has it as it was: nobody else deletes it
//! meanwhile (it is claimed), and what depends on it follows the new bytes.

use std::path::{Path, PathBuf};

use recd_catalog::{CatalogError, File};
use recd_chain::Kind;
use recd_control::FileState;

use super::FileLife;

/// What became of a finished copy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Replaced {
    /// It is in the file's place, which holds `bytes` now.
    Indexed {
        /// The file's size now.
        bytes: u64,
    },
    /// The file changed meanwhile (deleted, reindexed by hand, being deleted): the copy
    /// was discarded.
    Gone,
}

/// Why a finished copy could not take its file's place.
#[derive(Debug, thiserror::Error)]
pub enum ReplaceError {
    /// Renaming the copy over the file failed; the file stays as recorded.
    #[error("cannot put the finished copy in place of {}: {source}", path.display())]
    Rename {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The copy is in place, but the catalog could not record it.
    #[error("indexed in place, but the catalog could not record it: {0}")]
    Catalog(#[from] CatalogError),
}

impl FileLife {
    /// Puts `staged`, the finished copy of `file` holding `bytes` and `messages`, in its
    /// place if the catalog still has the file complete: renamed over it, the rename made
    /// durable before the catalog says indexed. Its upload then starts over with the new
    /// content, the copy's seal key becomes the file's, and it enters its session's chain
    /// as finished. Otherwise the copy is discarded.
    pub fn replace_finished(
        &self,
        file: &File,
        staged: &Path,
        (bytes, messages): (u64, u64),
    ) -> Result<Replaced, ReplaceError> {
        let claim = self.claim(&file.path);
        let listed = claim.is_some()
            && matches!(self.catalog().file(&file.path), Ok(Some(now)) if now.state == FileState::Complete);
        // Looked at with the catalog's lock let go.
        let unchanged = listed && file.path.exists();
        if !unchanged {
            self.discard_staged(staged);
            return Ok(Replaced::Gone);
        }
        if let Err(source) = std::fs::rename(staged, &file.path) {
            self.discard_staged(staged);
            return Err(ReplaceError::Rename {
                path: file.path.clone(),
                source,
            });
        }
        if let Some(directory) = file.path.parent() {
            let _ = std::fs::File::open(directory).and_then(|directory| directory.sync_all());
        }
        if let Some(keys) = &self.keys {
            keys.rename(staged, &file.path);
        }
        self.catalog()
            .record_indexed_in_place(&file.path, bytes, messages)?;
        self.chain(file.session, &file.path, Kind::Finished);
        drop(claim);
        Ok(Replaced::Indexed { bytes })
    }

    /// `rec reindex` rewrote the catalog's `file` in place (a file a crash left open, or
    /// one to index again): it holds `bytes` and `messages` now, its upload starts over
    /// with its new content, and it enters its session's chain as finished.
    pub fn reindexed(&self, file: &File, bytes: u64, messages: u64) -> Result<(), CatalogError> {
        self.catalog()
            .record_indexed_in_place(&file.path, bytes, messages)?;
        self.chain(file.session, &file.path, Kind::Finished);
        Ok(())
    }

    /// Removes a finished copy that will not take its file's place, and its seal key.
    pub fn discard_staged(&self, staged: &Path) {
        let _ = std::fs::remove_file(staged);
        self.forget_key(staged);
    }
}
