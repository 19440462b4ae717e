//! Start-up recovery: what a crash left marked as recording, and sessions found on disk
//! that the catalog lost.

use std::path::Path;

use recd_control::{FileState, SessionState};
use rusqlite::params;

use crate::{Catalog, CatalogError, File, SessionId};

impl Catalog {
    /// Records a session found on disk but not in the catalog (its transactions were lost,
    /// say to a power cut): interrupted, started at `started_ns`; returns its id.
    pub fn adopt_session(
        &self,
        name: &str,
        directory: &Path,
        started_ns: i64,
    ) -> Result<SessionId, CatalogError> {
        self.connection.execute(
            "INSERT INTO sessions (name, directory, config, started_ns, state) VALUES (?1, ?2, '{}', ?3, ?4)",
            params![name, self.data_dir.store(directory), started_ns, SessionState::Interrupted.as_str()],
        )?;
        Ok(self.connection.last_insert_rowid())
    }

    /// After a crash: sessions still marked recording become interrupted, and their
    /// files still marked recording need reindexing. Returns those files.
    pub fn recover_after_crash(&mut self) -> Result<Vec<File>, CatalogError> {
        let transaction = self.connection.transaction()?;
        transaction.execute(
            "UPDATE sessions SET state = ?1 WHERE state = ?2",
            params![
                SessionState::Interrupted.as_str(),
                SessionState::Recording.as_str()
            ],
        )?;
        transaction.execute(
            "UPDATE files SET state = ?1 WHERE state = ?2",
            params![
                FileState::NeedsReindex.as_str(),
                FileState::Recording.as_str()
            ],
        )?;
        transaction.commit()?;
        self.files_where(
            "state = ?1",
            "rowid",
            params![FileState::NeedsReindex.as_str()],
        )
    }
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;
    use crate::files::tests::file;

    #[test]
    fn a_crash_leaves_recording_files_needing_reindex() {
        let dir = tempfile::tempdir().unwrap();
        let mut catalog = Catalog::open(dir.path(), Path::new("/d")).unwrap();
        let done = catalog
            .begin_session("old", Path::new("/d/old"), "{}", 1)
            .unwrap();
        catalog
            .upsert_file(&file(done, "/d/old/a.mcap", FileState::Complete))
            .unwrap();
        catalog
            .finish_session(done, SessionState::Stopped, None, 2, &[])
            .unwrap();
        let live = catalog
            .begin_session("live", Path::new("/d/live"), "{}", 3)
            .unwrap();
        catalog
            .upsert_file(&file(live, "/d/live/a.mcap", FileState::Complete))
            .unwrap();
        catalog
            .upsert_file(&file(live, "/d/live/b.mcap", FileState::Recording))
            .unwrap();
        drop(catalog);

        let mut catalog = Catalog::open(dir.path(), Path::new("/d")).unwrap();
        let recovered = catalog.recover_after_crash().unwrap();
        assert_eq!(recovered.len(), 1);
        assert_eq!(recovered[0].path, PathBuf::from("/d/live/b.mcap"));
        assert_eq!(recovered[0].state, FileState::NeedsReindex);
        let sessions = catalog.sessions().unwrap();
        assert_eq!(sessions[0].name, "live", "newest first");
        assert_eq!(sessions[0].state, SessionState::Interrupted);
        assert_eq!(sessions[1].state, SessionState::Stopped);
    }
}
