//! The finishing queue: closed files waiting to be reindexed in place in the background
//! (`[recording] finish`). A file's mode is kept in its row (`files.finish`), so that a
//! restart goes on where recd stopped, and the uploader leaves a file alone until it is
//! finished (or given up on).

use std::path::Path;

use recd_control::{FileState, FinishMode};
use rusqlite::params;

use crate::{Catalog, CatalogError, File};

impl Catalog {
    /// Marks the file at `path` to be finished with `mode`, waiting since `now_ns` (the
    /// first time it is queued); `None` takes it off the queue.
    pub fn set_finish(
        &self,
        path: &Path,
        mode: Option<FinishMode>,
        now_ns: i64,
    ) -> Result<(), CatalogError> {
        self.connection.execute(
            "UPDATE files SET finish = ?2,
                 finish_since_ns = CASE WHEN ?2 IS NULL THEN NULL ELSE COALESCE(finish_since_ns, ?3) END
             WHERE path = ?1",
            params![self.data_dir.store(path), mode.map(FinishMode::as_str), now_ns],
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

    /// The file at `path` was rewritten in place, chunked and indexed (by finishing or by
    /// `rec reindex`): unless uploaded already, its upload starts over with the new
    /// content, then it is [marked indexed](Self::mark_indexed). In that order, because
    /// the uploader leaves a file waiting to be finished alone: it never takes the new
    /// file with the old fingerprint. A file that cannot be read for its fingerprint is
    /// marked all the same.
    pub fn record_indexed_in_place(
        &self,
        path: &Path,
        bytes: u64,
        messages: u64,
    ) -> Result<(), CatalogError> {
        if let Ok(fingerprint) = crate::Fingerprint::of(path) {
            self.requeue_rewritten(path, fingerprint)?;
        }
        self.mark_indexed(path, bytes, messages)
    }

    /// The file at `path` was rewritten chunked and indexed: it holds `bytes` and
    /// `messages` now, and no longer waits to be finished.
    pub fn mark_indexed(&self, path: &Path, bytes: u64, messages: u64) -> Result<(), CatalogError> {
        self.connection.execute(
            "UPDATE files SET state = ?2, bytes = ?3, messages = ?4, finish = NULL, finish_since_ns = NULL WHERE path = ?1",
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

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::path::PathBuf;

    use super::*;
    use crate::{Fingerprint, NewUpload};

    fn complete(session: i64, path: &str) -> File {
        File {
            session,
            path: PathBuf::from(path),
            bytes: 100,
            messages: 5,
            state: FileState::Complete,
        }
    }

    #[test]
    fn waiting_files_keep_their_mode_hold_back_their_upload_and_stay_indexed_once_done() {
        let dir = tempfile::tempdir().unwrap();
        let data = Path::new("/data");
        let (a, b) = (
            Path::new("/data/drive/a.mcap"),
            Path::new("/data/drive/b.mcap"),
        );
        {
            let catalog = Catalog::open(dir.path(), data).unwrap();
            let session = catalog
                .begin_session("drive", Path::new("/data/drive"), "{}", 1)
                .unwrap();
            for path in [a, b] {
                catalog
                    .upsert_file(&complete(session, path.to_str().unwrap()))
                    .unwrap();
            }
            catalog.set_finish(a, Some(FinishMode::Zstd), 1).unwrap();
            catalog.set_finish(b, Some(FinishMode::Index), 2).unwrap();
            let upload = NewUpload {
                path: a.to_path_buf(),
                key: "car/a.mcap".into(),
                priority: true,
                incident: false,
                fingerprint: Fingerprint {
                    bytes: 100,
                    changed_ns: 1,
                },
                metadata: BTreeMap::new(),
            };
            assert!(catalog.queue_upload(&upload, 10).unwrap());
        }
        // Across a restart: both wait, in the order they closed, with their modes.
        let catalog = Catalog::open(dir.path(), data).unwrap();
        let waiting = catalog.waiting_to_finish().unwrap();
        let listed: Vec<_> = waiting
            .iter()
            .map(|(f, m)| (f.path.as_path(), *m))
            .collect();
        assert_eq!(listed, [(a, FinishMode::Zstd), (b, FinishMode::Index)]);
        assert!(
            catalog.next_upload().unwrap().is_none(),
            "a waits to be finished"
        );

        catalog.mark_indexed(a, 60, 5).unwrap();
        let done = catalog.file(a).unwrap().unwrap();
        assert_eq!((done.state, done.bytes), (FileState::Indexed, 60));
        assert_eq!(catalog.next_upload().unwrap().unwrap().path, a);
        // A stop report written after the file was finished leaves it indexed.
        let session = done.session;
        catalog
            .upsert_file(&complete(session, "/data/drive/a.mcap"))
            .unwrap();
        let after = catalog.file(a).unwrap().unwrap();
        assert_eq!((after.state, after.bytes), (FileState::Indexed, 60));

        catalog.set_finish(b, None, 3).unwrap();
        assert!(catalog.waiting_to_finish().unwrap().is_empty());
    }
}
