//! What recd last appended to each session's hash chain: kept apart from the chain, so
//! that a chain cut short on disk is known when recd reopens it.

use std::path::Path;

use recd_chain::Head;
use rusqlite::{params, OptionalExtension};

use crate::{Catalog, CatalogError};

/// The table of chain heads, by session directory.
pub(crate) const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS chain_heads (
    directory TEXT PRIMARY KEY,
    entries INTEGER NOT NULL,
    digest TEXT NOT NULL
);
";

impl Catalog {
    /// The head recd last appended to the chain of session directory `directory`.
    pub fn chain_head(&self, directory: &Path) -> Result<Option<Head>, CatalogError> {
        Ok(self
            .connection
            .query_row(
                "SELECT entries, digest FROM chain_heads WHERE directory = ?1",
                params![self.data_dir.store(directory)],
                |row| {
                    Ok(Head {
                        entries: row.get::<_, i64>(0)? as u64,
                        digest: row.get(1)?,
                    })
                },
            )
            .optional()?)
    }

    /// Records `head` as what recd last appended to the chain of `directory`.
    pub fn set_chain_head(&self, directory: &Path, head: &Head) -> Result<(), CatalogError> {
        self.connection.execute(
            "INSERT INTO chain_heads (directory, entries, digest) VALUES (?1, ?2, ?3)
             ON CONFLICT(directory) DO UPDATE SET entries = ?2, digest = ?3",
            params![
                self.data_dir.store(directory),
                head.entries as i64,
                head.digest
            ],
        )?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_chain_head_is_kept_per_directory_and_moves_with_the_data_directory() {
        let state = tempfile::tempdir().unwrap();
        let catalog = Catalog::open(state.path(), Path::new("/data")).unwrap();
        let drive = Path::new("/data/drive");
        assert_eq!(catalog.chain_head(drive).unwrap(), None);
        let first = Head {
            entries: 1,
            digest: "a".repeat(64),
        };
        catalog.set_chain_head(drive, &first).unwrap();
        let second = Head {
            entries: 2,
            digest: "b".repeat(64),
        };
        catalog.set_chain_head(drive, &second).unwrap();
        assert_eq!(catalog.chain_head(drive).unwrap(), Some(second.clone()));
        assert_eq!(catalog.chain_head(Path::new("/data/other")).unwrap(), None);
        drop(catalog);
        let moved = Catalog::open(state.path(), Path::new("/mnt/data")).unwrap();
        assert_eq!(
            moved.chain_head(Path::new("/mnt/data/drive")).unwrap(),
            Some(second)
        );
    }
}
