//! What background work has still to do: the files waiting to be finished and uploaded
//! (how many, and since when the oldest waits), and the files retention deleted before
//! they were finished or uploaded (kept in their rows, `files.deleted_unfinished` and
//! `files.deleted_unuploaded`).

use std::path::{Path, PathBuf};

use recd_control::{Backlog, FileState, UploadState};
use rusqlite::{params, OptionalExtension};

use crate::{Catalog, CatalogError, SessionId};

/// What retention's deletion of a file lost.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DeletedBefore {
    /// It was waiting to be finished.
    pub finished: bool,
    /// It was queued for upload and not uploaded yet.
    pub uploaded: bool,
}

/// The file that has waited longest for some background work, and since when.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OldestWaiting {
    /// The file.
    pub path: PathBuf,
    /// Its session's name.
    pub session: String,
    /// Since when it waits, ns since the Unix epoch.
    pub since_ns: i64,
}

impl Catalog {
    /// The backlog of `session`, or of every session; ages are counted to `now_ns`.
    pub fn backlog(
        &self,
        session: Option<SessionId>,
        now_ns: i64,
    ) -> Result<Backlog, CatalogError> {
        let age = |since: Option<i64>| since.map(|since| (now_ns - since).max(0) as f64 / 1e9);
        let (finish_waiting, finish_since): (i64, Option<i64>) = self.connection.query_row(
            "SELECT count(*), min(finish_since_ns) FROM files
             WHERE state = ?1 AND finish IS NOT NULL AND (?2 IS NULL OR session = ?2)",
            params![FileState::Complete.as_str(), session],
            |row| Ok((row.get(0)?, row.get(1)?)),
        )?;
        let (upload_waiting, upload_since): (i64, Option<i64>) = self.connection.query_row(
            "SELECT count(*), min(u.queued_ns) FROM uploads u
             WHERE u.state IN (?1, ?2)
               AND (?3 IS NULL OR EXISTS (SELECT 1 FROM files f WHERE f.path = u.path AND f.session = ?3))",
            params![
                UploadState::Queued.as_str(),
                UploadState::Uploading.as_str(),
                session
            ],
            |row| Ok((row.get(0)?, row.get(1)?)),
        )?;
        let (deleted_unfinished, deleted_unuploaded): (i64, i64) = self.connection.query_row(
            "SELECT COALESCE(sum(deleted_unfinished), 0), COALESCE(sum(deleted_unuploaded), 0)
             FROM files WHERE ?1 IS NULL OR session = ?1",
            params![session],
            |row| Ok((row.get(0)?, row.get(1)?)),
        )?;
        Ok(Backlog {
            finish_waiting: finish_waiting as u64,
            finish_oldest_s: age(finish_since),
            upload_waiting: upload_waiting as u64,
            upload_oldest_s: age(upload_since),
            deleted_unfinished: deleted_unfinished as u64,
            deleted_unuploaded: deleted_unuploaded as u64,
            background_mode: String::new(),
            background: String::new(),
            background_on: false,
            max_delay_s: None,
        })
    }

    /// The file waiting longest to be finished.
    pub fn oldest_waiting_to_finish(&self) -> Result<Option<OldestWaiting>, CatalogError> {
        self.oldest(
            "SELECT f.path, s.name, f.finish_since_ns FROM files f JOIN sessions s ON s.id = f.session
             WHERE f.state = ?1 AND f.finish IS NOT NULL AND f.finish_since_ns IS NOT NULL
             ORDER BY f.finish_since_ns LIMIT 1",
            params![FileState::Complete.as_str()],
        )
    }

    /// The file waiting longest to be uploaded.
    pub fn oldest_waiting_to_upload(&self) -> Result<Option<OldestWaiting>, CatalogError> {
        self.oldest(
            "SELECT u.path, COALESCE(s.name, ''), u.queued_ns FROM uploads u
             LEFT JOIN files f ON f.path = u.path LEFT JOIN sessions s ON s.id = f.session
             WHERE u.state IN (?1, ?2) ORDER BY u.queued_ns LIMIT 1",
            params![
                UploadState::Queued.as_str(),
                UploadState::Uploading.as_str()
            ],
        )
    }

    fn oldest(
        &self,
        query: &str,
        parameters: impl rusqlite::Params,
    ) -> Result<Option<OldestWaiting>, CatalogError> {
        let found = self
            .connection
            .query_row(query, parameters, |row| {
                Ok((row.get::<_, String>(0)?, row.get(1)?, row.get(2)?))
            })
            .optional()?;
        Ok(found.map(|(path, session, since_ns)| OldestWaiting {
            path: self.data_dir.resolve(&path),
            session,
            since_ns,
        }))
    }

    /// Retention deleted the file at `path`: marks it deleted, and says (and keeps in its
    /// row) whether it was still waiting to be finished or uploaded. Its upload, if not
    /// done, fails with the reason.
    pub fn mark_deleted_by_retention(&self, path: &Path) -> Result<DeletedBefore, CatalogError> {
        let stored = self.data_dir.store(path);
        let finished_pending: bool = self
            .connection
            .query_row(
                "SELECT finish IS NOT NULL FROM files WHERE path = ?1",
                params![stored],
                |row| row.get(0),
            )
            .optional()?
            .unwrap_or(false);
        let upload_pending: bool = self
            .connection
            .query_row(
                "SELECT state != ?2 FROM uploads WHERE path = ?1",
                params![stored, UploadState::Uploaded.as_str()],
                |row| row.get(0),
            )
            .optional()?
            .unwrap_or(false);
        self.connection.execute(
            "UPDATE files SET state = ?2, finish = NULL, deleted_unfinished = ?3,
                 deleted_unuploaded = ?4 WHERE path = ?1",
            params![
                stored,
                FileState::Deleted.as_str(),
                finished_pending,
                upload_pending
            ],
        )?;
        if upload_pending {
            self.connection.execute(
                "UPDATE uploads SET state = ?2, reason = ?3, upload_id = NULL, part_size = NULL
                 WHERE path = ?1 AND state != ?4",
                params![
                    stored,
                    UploadState::Failed.as_str(),
                    "deleted by retention before it was uploaded",
                    UploadState::Uploaded.as_str()
                ],
            )?;
        }
        Ok(DeletedBefore {
            finished: finished_pending,
            uploaded: upload_pending,
        })
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use recd_control::FinishMode;

    use super::*;
    use crate::{File, Fingerprint, NewUpload};

    const SECOND: i64 = 1_000_000_000;

    fn complete(session: i64, path: &Path) -> File {
        File {
            session,
            path: path.to_path_buf(),
            bytes: 100,
            messages: 5,
            state: FileState::Complete,
        }
    }

    fn upload(path: &Path) -> NewUpload {
        NewUpload {
            path: path.to_path_buf(),
            key: format!("car/{}", path.display()),
            priority: false,
            incident: false,
            fingerprint: Fingerprint {
                bytes: 100,
                changed_ns: 1,
            },
            metadata: BTreeMap::new(),
        }
    }

    #[test]
    fn the_backlog_counts_waiting_files_their_age_and_those_deleted_before_their_turn() {
        let dir = tempfile::tempdir().unwrap();
        let catalog = Catalog::open(dir.path(), Path::new("/data")).unwrap();
        let a = catalog
            .begin_session("a", Path::new("/data/a"), "{}", 1)
            .unwrap();
        let b = catalog
            .begin_session("b", Path::new("/data/b"), "{}", 2)
            .unwrap();
        let paths: Vec<PathBuf> = (0..4)
            .map(|i| PathBuf::from(format!("/data/a/{i}.mcap")))
            .collect();
        for (i, path) in paths.iter().enumerate() {
            catalog.upsert_file(&complete(a, path)).unwrap();
            let at = (10 + i as i64) * SECOND;
            catalog
                .set_finish(path, Some(FinishMode::Zstd), at)
                .unwrap();
            assert!(catalog.queue_upload(&upload(path), at).unwrap());
        }
        let other = PathBuf::from("/data/b/0.mcap");
        catalog.upsert_file(&complete(b, &other)).unwrap();
        catalog.queue_upload(&upload(&other), 5 * SECOND).unwrap();
        // 0 is finished and uploaded; 1 finished, not uploaded; 2 and 3 neither.
        catalog.mark_indexed(&paths[0], 60, 5).unwrap();
        catalog
            .finish_upload(
                &paths[0],
                upload(&paths[0]).fingerprint,
                "etag",
                20 * SECOND,
            )
            .unwrap();
        catalog.mark_indexed(&paths[1], 60, 5).unwrap();

        let now = 100 * SECOND;
        let all = catalog.backlog(None, now).unwrap();
        assert_eq!((all.finish_waiting, all.upload_waiting), (2, 4));
        assert_eq!(all.finish_oldest_s, Some(88.0));
        assert_eq!(all.upload_oldest_s, Some(95.0), "b's file waits longest");
        let of_a = catalog.backlog(Some(a), now).unwrap();
        assert_eq!((of_a.upload_waiting, of_a.upload_oldest_s), (3, Some(89.0)));
        let oldest = catalog.oldest_waiting_to_finish().unwrap().unwrap();
        assert_eq!(
            (oldest.path, oldest.session),
            (paths[2].clone(), "a".into())
        );
        let oldest = catalog.oldest_waiting_to_upload().unwrap().unwrap();
        assert_eq!((oldest.path, oldest.session), (other.clone(), "b".into()));

        let deleted: Vec<DeletedBefore> = (paths.iter().take(3))
            .map(|path| catalog.mark_deleted_by_retention(path).unwrap())
            .collect();
        let before = |finished, uploaded| DeletedBefore { finished, uploaded };
        assert_eq!(
            deleted,
            [
                before(false, false),
                before(false, true),
                before(true, true)
            ]
        );
        let all = catalog.backlog(None, now).unwrap();
        assert_eq!(
            (all.deleted_unfinished, all.deleted_unuploaded),
            (1, 2),
            "{all:?}"
        );
        assert_eq!((all.finish_waiting, all.upload_waiting), (1, 2));
        assert_eq!(catalog.backlog(Some(b), now).unwrap().deleted_unuploaded, 0);
        let failed = catalog.upload(&paths[2]).unwrap().unwrap();
        assert_eq!(failed.state, UploadState::Failed);
        assert_eq!(
            failed.reason.as_deref(),
            Some("deleted by retention before it was uploaded")
        );
        // An upload that still ends well (the file was open) is no loss after all.
        let queued_as = upload(&paths[1]).fingerprint;
        catalog
            .finish_upload(&paths[1], queued_as, "etag", now)
            .unwrap();
        assert_eq!(catalog.backlog(None, now).unwrap().deleted_unuploaded, 1);
    }
}
