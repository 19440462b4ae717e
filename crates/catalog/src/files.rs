//! File rows: the files each session wrote, what is known of them and their states.

use std::path::{Path, PathBuf};

use recd_control::FileState;
use rusqlite::params;

use crate::{Catalog, CatalogError, SessionId};

/// One file of a session.
#[derive(Debug, Clone, PartialEq)]
pub struct File {
    /// The session it belongs to.
    pub session: SessionId,
    /// Where it is.
    pub path: PathBuf,
    /// Size in bytes, as last known.
    pub bytes: u64,
    /// Messages, as last known.
    pub messages: u64,
    /// Its state.
    pub state: FileState,
}

impl Catalog {
    /// Removes the file at `path` from the catalog: it was never created.
    pub fn forget_file(&self, path: &Path) -> Result<(), CatalogError> {
        self.connection.execute(
            "DELETE FROM files WHERE path = ?1",
            params![self.data_dir.store(path)],
        )?;
        Ok(())
    }

    /// Changes the state of the file at `path`.
    pub fn set_file_state(&self, path: &Path, state: FileState) -> Result<(), CatalogError> {
        self.connection.execute(
            "UPDATE files SET state = ?2 WHERE path = ?1",
            params![self.data_dir.store(path), state.as_str()],
        )?;
        Ok(())
    }

    /// Marks the file at `path` missing (gone from the disk, not by recd's hand), unless
    /// the catalog already says it is gone: a file that another of recd's threads deleted
    /// meanwhile stays `deleted`. True when it was marked now.
    pub fn mark_missing(&self, path: &Path) -> Result<bool, CatalogError> {
        let marked = self.connection.execute(
            "UPDATE files SET state = ?2 WHERE path = ?1 AND state NOT IN (?2, ?3)",
            params![
                self.data_dir.store(path),
                FileState::Missing.as_str(),
                FileState::Deleted.as_str()
            ],
        )?;
        Ok(marked > 0)
    }

    /// Every file that should be on disk (neither deleted nor missing), oldest session
    /// first and in the order each session started them.
    pub fn files_on_disk(&self) -> Result<Vec<File>, CatalogError> {
        self.files_where(
            "state NOT IN (?1, ?2)",
            "(SELECT started_ns FROM sessions WHERE id = files.session), rowid",
            params![FileState::Deleted.as_str(), FileState::Missing.as_str()],
        )
    }

    /// Records a file the session started writing (or updates what is known of it). A
    /// file indexed in place already keeps what it holds now: a session's stop report,
    /// written after, knows only what it recorded.
    pub fn upsert_file(&self, file: &File) -> Result<(), CatalogError> {
        self.connection.execute(
            "INSERT INTO files (path, session, bytes, messages, state) VALUES (?1, ?2, ?3, ?4, ?5)
             ON CONFLICT(path) DO UPDATE SET bytes = ?3, messages = ?4, state = ?5
             WHERE files.state != ?6",
            params![
                self.data_dir.store(&file.path),
                file.session,
                file.bytes as i64,
                file.messages as i64,
                file.state.as_str(),
                FileState::Indexed.as_str()
            ],
        )?;
        Ok(())
    }

    /// The files of a session, in the order they were started.
    pub fn files(&self, session: SessionId) -> Result<Vec<File>, CatalogError> {
        self.files_where("session = ?1", "rowid", params![session])
    }

    /// The recording files of a session (its incidents' cut files left out), in the order
    /// they were started.
    pub fn recording_files(&self, session: SessionId) -> Result<Vec<File>, CatalogError> {
        self.files_where(
            &format!("session = ?1 AND NOT {}", crate::incidents::own("files.")),
            "rowid",
            params![session],
        )
    }

    /// The file at `path`, if the catalog knows it.
    pub fn file(&self, path: &Path) -> Result<Option<File>, CatalogError> {
        Ok(self
            .files_where("path = ?1", "rowid", params![self.data_dir.store(path)])?
            .into_iter()
            .next())
    }

    /// The files matching `condition`, sorted by `order`.
    pub(crate) fn files_where(
        &self,
        condition: &str,
        order: &str,
        parameters: impl rusqlite::Params,
    ) -> Result<Vec<File>, CatalogError> {
        let mut statement = self.connection.prepare(&format!(
            "SELECT session, path, bytes, messages, state FROM files WHERE {condition} ORDER BY {order}"
        ))?;
        let rows = statement.query_map(parameters, |row| {
            Ok((
                row.get::<_, i64>(0)?,
                row.get::<_, String>(1)?,
                row.get::<_, i64>(2)?,
                row.get::<_, i64>(3)?,
                row.get::<_, String>(4)?,
            ))
        })?;
        rows.map(|row| {
            let (session, path, bytes, messages, state) = row?;
            Ok(File {
                session,
                path: self.data_dir.resolve(&path),
                bytes: bytes as u64,
                messages: messages as u64,
                state: parse_file_state(&state)?,
            })
        })
        .collect()
    }
}

pub(crate) fn parse_file_state(text: &str) -> Result<FileState, CatalogError> {
    text.parse().map_err(|_| CatalogError::Corrupt {
        what: "file state",
        value: text.to_string(),
    })
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A file row for the tests: 10 bytes, 2 messages.
    pub(crate) fn file(session: SessionId, path: &str, state: FileState) -> File {
        File {
            session,
            path: PathBuf::from(path),
            bytes: 10,
            messages: 2,
            state,
        }
    }

    #[test]
    fn a_file_deleted_by_recd_is_never_marked_missing() {
        let dir = tempfile::tempdir().unwrap();
        let catalog = Catalog::open(dir.path(), Path::new("/d")).unwrap();
        let id = catalog
            .begin_session("s", Path::new("/d/s"), "{}", 1)
            .unwrap();
        let (gone, deleted) = (Path::new("/d/s/a.mcap"), Path::new("/d/s/b.mcap"));
        for path in [gone, deleted] {
            let path = path.to_str().unwrap();
            catalog
                .upsert_file(&file(id, path, FileState::Complete))
                .unwrap();
        }
        catalog.set_file_state(deleted, FileState::Deleted).unwrap();
        assert!(catalog.mark_missing(gone).unwrap());
        assert!(!catalog.mark_missing(gone).unwrap(), "marked once");
        assert!(!catalog.mark_missing(deleted).unwrap());
        let state = |path| catalog.file(path).unwrap().unwrap().state;
        assert_eq!(state(gone), FileState::Missing);
        assert_eq!(state(deleted), FileState::Deleted);
    }

    #[test]
    fn states_are_stored_as_their_wire_names() {
        let dir = tempfile::tempdir().unwrap();
        let mut catalog = Catalog::open(dir.path(), Path::new("/d")).unwrap();
        let id = catalog
            .begin_session("live", Path::new("/d/live"), "{}", 1)
            .unwrap();
        catalog
            .upsert_file(&file(id, "/d/live/a.mcap", FileState::Recording))
            .unwrap();
        catalog.recover_after_crash().unwrap();
        let text = |query: &str| -> String {
            catalog
                .connection
                .query_row(query, [], |row| row.get(0))
                .unwrap()
        };
        assert_eq!(text("SELECT state FROM sessions"), "interrupted");
        assert_eq!(text("SELECT state FROM files"), "needs-reindex");
        catalog
            .connection
            .execute("UPDATE sessions SET state = 'paused'", [])
            .unwrap();
        assert!(matches!(
            catalog.sessions(),
            Err(CatalogError::Corrupt { value, .. }) if value == "paused"
        ));
    }
}
