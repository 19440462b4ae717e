//! The health verdict of each file (from its health record) and of each session: `ok`,
//! `degraded` (a topic stalled or was slow) or `missing` (a required topic never came),
//! and where a file a crash cut was damaged, so that `rec list` and the uploads can tell
//! a usable recording from a useless one.

use std::path::Path;

use rusqlite::{params, OptionalExtension};

use crate::{Catalog, CatalogError, SessionId};

impl Catalog {
    /// Records the verdict of the file at `path`.
    pub fn set_file_health(&self, path: &Path, verdict: &str) -> Result<(), CatalogError> {
        self.connection.execute(
            "UPDATE files SET health = ?2 WHERE path = ?1",
            params![self.data_dir.store(path), verdict],
        )?;
        Ok(())
    }

    /// The verdict of the file at `path`, where one was recorded.
    pub fn file_health(&self, path: &Path) -> Result<Option<String>, CatalogError> {
        Ok(self
            .connection
            .query_row(
                "SELECT health FROM files WHERE path = ?1",
                params![self.data_dir.store(path)],
                |row| row.get::<_, Option<String>>(0),
            )
            .optional()?
            .flatten())
    }

    /// Records that the file at `path` was recovered with damage: readable records ended
    /// at byte `offset`, what followed is lost.
    pub fn set_damaged_at(&self, path: &Path, offset: u64) -> Result<(), CatalogError> {
        self.connection.execute(
            "UPDATE files SET damaged_at = ?2 WHERE path = ?1",
            params![self.data_dir.store(path), offset as i64],
        )?;
        Ok(())
    }

    /// Where the file at `path` was damaged, if it was recovered with damage.
    pub fn damaged_at(&self, path: &Path) -> Result<Option<u64>, CatalogError> {
        Ok(self
            .connection
            .query_row(
                "SELECT damaged_at FROM files WHERE path = ?1",
                params![self.data_dir.store(path)],
                |row| row.get::<_, Option<i64>>(0),
            )
            .optional()?
            .flatten()
            .map(|offset| offset as u64))
    }

    /// Records the verdict of `session`.
    pub fn set_session_health(
        &self,
        session: SessionId,
        verdict: &str,
    ) -> Result<(), CatalogError> {
        self.connection.execute(
            "UPDATE sessions SET health = ?2 WHERE id = ?1",
            params![session, verdict],
        )?;
        Ok(())
    }

    /// The verdict of `session`, where one was recorded.
    pub fn session_health(&self, session: SessionId) -> Result<Option<String>, CatalogError> {
        Ok(self
            .connection
            .query_row(
                "SELECT health FROM sessions WHERE id = ?1",
                params![session],
                |row| row.get::<_, Option<String>>(0),
            )
            .optional()?
            .flatten())
    }
}

#[cfg(test)]
mod tests {
    use recd_control::FileState;

    use super::*;
    use crate::files::tests::file;

    #[test]
    fn verdicts_survive_reopening() {
        let dir = tempfile::tempdir().unwrap();
        let catalog = Catalog::open(dir.path(), Path::new("/d")).unwrap();
        let id = catalog
            .begin_session("drive", Path::new("/d/drive"), "{}", 1)
            .unwrap();
        catalog
            .upsert_file(&file(id, "/d/drive/a.mcap", FileState::Complete))
            .unwrap();
        assert_eq!(
            catalog.file_health(Path::new("/d/drive/a.mcap")).unwrap(),
            None
        );
        catalog
            .set_file_health(Path::new("/d/drive/a.mcap"), "degraded")
            .unwrap();
        catalog.set_session_health(id, "missing").unwrap();
        catalog
            .set_damaged_at(Path::new("/d/drive/a.mcap"), 4096)
            .unwrap();
        drop(catalog);
        let catalog = Catalog::open(dir.path(), Path::new("/d")).unwrap();
        assert_eq!(
            catalog
                .file_health(Path::new("/d/drive/a.mcap"))
                .unwrap()
                .as_deref(),
            Some("degraded")
        );
        assert_eq!(
            catalog.session_health(id).unwrap().as_deref(),
            Some("missing")
        );
        assert_eq!(
            catalog.damaged_at(Path::new("/d/drive/a.mcap")).unwrap(),
            Some(4096)
        );
        assert_eq!(
            catalog.file_health(Path::new("/d/other.mcap")).unwrap(),
            None
        );
    }
}
