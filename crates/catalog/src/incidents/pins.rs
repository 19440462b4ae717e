//! What incidents pin: the recording files whose log-time span overlaps an unreleased
//! incident's window, and its own files; the spans they are judged by.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use recd_control::FileState;
use recd_storage::LogWindow;
use rusqlite::params;

use super::{overlaps, own, spans, OWN_OF_I};
use crate::{Catalog, CatalogError, SessionId};

impl Catalog {
    /// Every file retention must leave: the recording files an incident that is not
    /// released overlaps, and its cut files.
    pub fn pinned_paths(&self) -> Result<HashSet<PathBuf>, CatalogError> {
        let mut statement = self.connection.prepare(&format!(
            "SELECT DISTINCT f.path FROM files f JOIN incidents i ON i.released_ns IS NULL
                 AND (({}) OR {OWN_OF_I})
             WHERE f.state NOT IN (?1, ?2)",
            overlaps()
        ))?;
        let rows = statement.query_map(
            params![FileState::Deleted.as_str(), FileState::Missing.as_str()],
            |row| row.get::<_, String>(0),
        )?;
        rows.map(|path| Ok(self.data_dir.resolve(&path?))).collect()
    }

    /// Whether an incident that is not released pins the file at `path` now.
    pub fn is_pinned(&self, path: &Path) -> Result<bool, CatalogError> {
        let pinned: bool = self.connection.query_row(
            &format!(
                "SELECT EXISTS (SELECT 1 FROM files f JOIN incidents i ON i.released_ns IS NULL
                     AND (({}) OR {OWN_OF_I})
                 WHERE f.path = ?1)",
                overlaps()
            ),
            params![self.data_dir.store(path)],
            |row| row.get(0),
        )?;
        Ok(pinned)
    }

    /// The recording files of `session` that overlap `window`, in the order they were
    /// started, deleted and missing ones left out.
    pub fn files_overlapping(
        &self,
        session: SessionId,
        window: LogWindow,
    ) -> Result<Vec<crate::File>, CatalogError> {
        let (start_ns, end_ns) = (window.start_ns, window.end_ns);
        self.files_where(
            &format!(
                "session = ?1 AND NOT {} AND state NOT IN (?2, ?3) AND {}",
                own("files."),
                spans("", "?4", "?5")
            ),
            "rowid",
            params![
                session,
                FileState::Deleted.as_str(),
                FileState::Missing.as_str(),
                start_ns as i64,
                end_ns as i64
            ],
        )
    }

    /// Records the log-time span of a recording file: its start when it is created (the
    /// end unknown), both once it ended.
    pub fn set_file_times(
        &self,
        path: &Path,
        start_ns: Option<u64>,
        end_ns: Option<u64>,
    ) -> Result<(), CatalogError> {
        self.connection.execute(
            "UPDATE files SET start_ns = COALESCE(?2, start_ns), end_ns = ?3 WHERE path = ?1",
            params![
                self.data_dir.store(path),
                start_ns.map(|ns| ns as i64),
                end_ns.map(|ns| ns as i64)
            ],
        )?;
        Ok(())
    }

    /// Whether the file at `path` is on the disk with its newest message older than
    /// `before_ns`, not being recorded, waiting for no finishing and pinned by no
    /// unreleased incident: no trigger reaching back to `before_ns` or later, and no
    /// finishing, will read it again.
    pub fn is_settled_before(&self, path: &Path, before_ns: u64) -> Result<bool, CatalogError> {
        let settled = self.connection.query_row(
            &format!(
                "SELECT EXISTS (SELECT 1 FROM files f
                 WHERE f.path = ?1 AND f.end_ns IS NOT NULL AND f.end_ns < ?2
                   AND f.finish IS NULL AND f.state NOT IN (?3, ?4, ?5)
                   AND NOT EXISTS (SELECT 1 FROM incidents i WHERE i.released_ns IS NULL
                       AND (({}) OR {OWN_OF_I})))",
                overlaps()
            ),
            params![
                self.data_dir.store(path),
                before_ns as i64,
                FileState::Recording.as_str(),
                FileState::Deleted.as_str(),
                FileState::Missing.as_str()
            ],
            |row| row.get(0),
        )?;
        Ok(settled)
    }

    /// The files of `session` whose newest message is older than `before_ns` (deleted and
    /// missing ones left out), oldest first.
    pub fn files_ended_before(
        &self,
        session: SessionId,
        before_ns: u64,
    ) -> Result<Vec<crate::File>, CatalogError> {
        self.files_where(
            "session = ?1 AND end_ns IS NOT NULL AND end_ns < ?2 AND state NOT IN (?3, ?4)",
            "end_ns, rowid",
            params![
                session,
                before_ns as i64,
                FileState::Deleted.as_str(),
                FileState::Missing.as_str()
            ],
        )
    }
}
