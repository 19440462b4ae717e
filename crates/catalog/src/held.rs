//! What the disk holds, for the fleet's holdings: every file on it with its session, size,
//! log-time span and health verdict, in one read.

use recd_control::FileState;
use rusqlite::params;

use crate::{Catalog, CatalogError, SessionId};

/// One file on the disk, as the holdings take it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HeldFile {
    /// Its session.
    pub session: SessionId,
    /// Its size in bytes, as last known.
    pub bytes: u64,
    /// Its first message's time, ns since the epoch, when known.
    pub start_ns: Option<u64>,
    /// Its last message's time, when known (none while it is written).
    pub end_ns: Option<u64>,
    /// Its health verdict, when it has one.
    pub health: Option<String>,
    /// Being recorded now.
    pub recording: bool,
}

impl Catalog {
    /// Every file on the disk (not deleted, not missing), oldest first.
    pub fn held_files(&self) -> Result<Vec<HeldFile>, CatalogError> {
        let mut statement = self.connection.prepare(
            "SELECT session, bytes, start_ns, end_ns, health, state FROM files
             WHERE state NOT IN (?1, ?2) ORDER BY start_ns, rowid",
        )?;
        let rows = statement.query_map(
            params![FileState::Deleted.as_str(), FileState::Missing.as_str()],
            |row| {
                Ok(HeldFile {
                    session: row.get(0)?,
                    bytes: row.get::<_, i64>(1)?.max(0) as u64,
                    start_ns: row.get::<_, Option<i64>>(2)?.map(|ns| ns.max(0) as u64),
                    end_ns: row.get::<_, Option<i64>>(3)?.map(|ns| ns.max(0) as u64),
                    health: row.get(4)?,
                    recording: row.get::<_, String>(5)? == FileState::Recording.as_str(),
                })
            },
        )?;
        Ok(rows.collect::<Result<_, _>>()?)
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::files::tests::file;

    #[test]
    fn held_files_are_those_on_the_disk_with_their_spans_and_verdicts() {
        let dir = tempfile::tempdir().unwrap();
        let catalog = Catalog::open(dir.path(), Path::new("/d")).unwrap();
        let id = catalog
            .begin_session("drive", Path::new("/d/drive"), "{}", 1)
            .unwrap();
        for (name, state) in [
            ("a", FileState::Complete),
            ("b", FileState::Deleted),
            ("c", FileState::Recording),
        ] {
            let path = format!("/d/drive/{name}.mcap");
            catalog.upsert_file(&file(id, &path, state)).unwrap();
        }
        catalog
            .set_file_times(Path::new("/d/drive/a.mcap"), Some(10), Some(20))
            .unwrap();
        catalog
            .set_file_health(Path::new("/d/drive/a.mcap"), "ok")
            .unwrap();
        catalog
            .set_file_times(Path::new("/d/drive/c.mcap"), Some(30), None)
            .unwrap();
        let held = catalog.held_files().unwrap();
        assert_eq!(held.len(), 2, "{held:?}");
        assert_eq!(
            (
                held[0].start_ns,
                held[0].end_ns,
                held[0].health.as_deref(),
                held[0].recording
            ),
            (Some(10), Some(20), Some("ok"), false)
        );
        assert_eq!(
            (held[1].start_ns, held[1].end_ns, held[1].recording),
            (Some(30), None, true)
        );
    }
}
