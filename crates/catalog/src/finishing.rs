//! The finishing queue: closed files waiting to be reindexed in place in the background
//! (`[recording] finish`). A file's mode is kept in its row (`files.finish`), so that a
//! restart goes on where recd stopped, and the uploader leaves a file alone until it is
//! finished (or given up on).

use std::path::Path;

use recd_control::{FileState, FinishMode};
use rusqlite::params;

use crate::{Catalog, CatalogError, File};

impl Catalog {
    /// Marks the file at `path` to be finished with `mode`; `None` takes it off the queue.
    pub fn set_finish(&self, path: &Path, mode: Option<FinishMode>) -> Result<(), CatalogError> {
        self.connection.execute(
            "UPDATE files SET finish = ?2 WHERE path = ?1",
            params![self.data_dir.store(path), mode.map(FinishMode::as_str)],
        )?;
        Ok(())
    }

    /// The files waiting to be finished, each with its mode, in the order they closed.
    pub fn waiting_to_finish(&self) -> Result<Vec<(File, FinishMode)>, CatalogError> {
        let files = self.files_where(
            "state = ?1 AND finish IS NOT NULL",
            "(SELECT started_ns FROM sessions WHERE id = files.session), rowid",
            params![FileState::Complete.as_str()],
        )?;
        files
            .into_iter()
            .map(|file| {
                let mode: String = self.connection.query_row(
                    "SELECT finish FROM files WHERE path = ?1",
                    params![self.data_dir.store(&file.path)],
                    |row| row.get(0),
                )?;
                let mode = mode.parse().map_err(|_| CatalogError::Corrupt {
                    what: "finish mode",
                    value: mode,
                })?;
                Ok((file, mode))
            })
            .collect()
    }

    /// The file at `path` was rewritten chunked and indexed (by finishing or by `rec
    /// reindex`): it holds `bytes` and `messages` now, and no longer waits.
    pub fn mark_indexed(&self, path: &Path, bytes: u64, messages: u64) -> Result<(), CatalogError> {
        self.connection.execute(
            "UPDATE files SET state = ?2, bytes = ?3, messages = ?4, finish = NULL WHERE path = ?1",
            params![
                self.data_dir.store(path),
                FileState::Indexed.as_str(),
                bytes as i64,
                messages as i64
            ],
        )?;
        Ok(())
    }
}
