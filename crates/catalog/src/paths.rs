//! Paths as the catalog keeps them: relative to the data directory, so that a data
//! directory that moves (a disk mounted at another place, a recording SSD read on a
//! workstation) keeps its sessions and files.

use std::path::{Component, Path, PathBuf};

use rusqlite::{params, Connection};

/// `PRAGMA user_version` of a catalog whose paths are relative to the data directory.
const RELATIVE_PATHS_VERSION: i64 = 1;

/// The data directory the catalog's paths are relative to.
#[derive(Debug, Clone)]
pub(crate) struct DataDir {
    root: PathBuf,
}

impl DataDir {
    pub(crate) fn new(root: &Path) -> Self {
        Self {
            root: root.to_path_buf(),
        }
    }

    /// The text the catalog keeps for `path`: relative to the data directory when it is
    /// inside it, else the path as it is.
    pub(crate) fn store(&self, path: &Path) -> String {
        path.strip_prefix(&self.root)
            .unwrap_or(path)
            .to_string_lossy()
            .into_owned()
    }

    /// The path a text the catalog keeps stands for.
    pub(crate) fn resolve(&self, stored: &str) -> PathBuf {
        if stored.is_empty() {
            self.root.clone()
        } else {
            self.root.join(stored)
        }
    }
}

/// Rewrites the absolute paths an older recd stored as paths relative to the data
/// directory, once. Paths inside `data_dir` lose it; a session directory elsewhere (the
/// data directory moved before this upgrade) is matched to the directory of the same
/// name(s) under `data_dir`, and every path under its old parent is rebased. Paths that
/// match nothing stay absolute (the reconciliation then finds them missing), and so does
/// a file whose relative path another row already has (a file an older recd adopted
/// again after the move).
pub(crate) fn migrate_to_relative(
    connection: &mut Connection,
    data_dir: &DataDir,
) -> rusqlite::Result<()> {
    let version: i64 = connection.query_row("PRAGMA user_version", [], |row| row.get(0))?;
    if version >= RELATIVE_PATHS_VERSION {
        return Ok(());
    }
    let transaction = connection.transaction()?;
    let session_directories: Vec<String> = transaction
        .prepare("SELECT directory FROM sessions")?
        .query_map([], |row| row.get(0))?
        .collect::<Result<_, _>>()?;
    let mut old_roots = vec![data_dir.root.clone()];
    for directory in session_directories {
        if let Some(root) = old_root(Path::new(&directory), &data_dir.root) {
            if !old_roots.contains(&root) {
                old_roots.push(root);
            }
        }
    }
    let relative = |stored: &str| -> Option<String> {
        let path = Path::new(stored);
        if !path.is_absolute() {
            return None;
        }
        old_roots.iter().find_map(|root| {
            path.strip_prefix(root)
                .ok()
                .map(|rest| rest.to_string_lossy().into_owned())
        })
    };
    for (table, column) in [("sessions", "directory"), ("files", "path")] {
        let stored: Vec<String> = transaction
            .prepare(&format!("SELECT {column} FROM {table}"))?
            .query_map([], |row| row.get(0))?
            .collect::<Result<_, _>>()?;
        for old in stored {
            if let Some(new) = relative(&old) {
                transaction.execute(
                    &format!("UPDATE OR IGNORE {table} SET {column} = ?2 WHERE {column} = ?1"),
                    params![old, new],
                )?;
            }
        }
    }
    transaction.pragma_update(None, "user_version", RELATIVE_PATHS_VERSION)?;
    transaction.commit()
}

/// Where the data directory was when `directory` (a session's, absolute) was recorded,
/// if it has moved to `data_dir`: the parent left when the shortest tail of `directory`
/// that names a directory under `data_dir` is taken off.
fn old_root(directory: &Path, data_dir: &Path) -> Option<PathBuf> {
    if !directory.is_absolute() || directory.starts_with(data_dir) {
        return None;
    }
    let names: Vec<Component> = directory.components().collect();
    (1..names.len()).find_map(|tail| {
        let split = names.len() - tail;
        let suffix: PathBuf = names[split..].iter().collect();
        data_dir
            .join(&suffix)
            .is_dir()
            .then(|| names[..split].iter().collect())
    })
}

#[cfg(test)]
mod tests {
    use recd_control::FileState;

    use super::*;
    use crate::files::tests::file;
    use crate::schema::SCHEMA;
    use crate::{Catalog, DATABASE_FILE};

    /// Writes a catalog as recd wrote it before paths were relative (absolute paths,
    /// `user_version` 0) with one session recorded into `old_data/drive`.
    fn write_absolute_catalog(state: &Path, old_data: &Path) {
        let old = Connection::open(state.join(DATABASE_FILE)).unwrap();
        old.execute_batch(SCHEMA).unwrap();
        old.execute(
            "INSERT INTO sessions (name, directory, config, started_ns, state) VALUES ('drive', ?1, '{}', 1, 'stopped')",
            params![old_data.join("drive").to_string_lossy()],
        )
        .unwrap();
        old.execute(
            "INSERT INTO files (path, session, state) VALUES (?1, 1, 'complete')",
            params![old_data.join("drive/a.mcap").to_string_lossy()],
        )
        .unwrap();
        old.execute(
            "INSERT INTO files (path, session, state) VALUES ('/elsewhere/b.mcap', 1, 'complete')",
            [],
        )
        .unwrap();
    }

    #[test]
    fn paths_follow_a_data_directory_that_moved() {
        let state = tempfile::tempdir().unwrap();
        {
            let catalog = Catalog::open(state.path(), Path::new("/mnt/ssd/recordings")).unwrap();
            let id = catalog
                .begin_session("drive", Path::new("/mnt/ssd/recordings/drive"), "{}", 1)
                .unwrap();
            catalog
                .upsert_file(&file(
                    id,
                    "/mnt/ssd/recordings/drive/a.mcap",
                    FileState::Complete,
                ))
                .unwrap();
        }
        let catalog = Catalog::open(state.path(), Path::new("/media/usb/recordings")).unwrap();
        let session = catalog.session_by_name("drive").unwrap().unwrap();
        assert_eq!(session.directory, Path::new("/media/usb/recordings/drive"));
        let moved = Path::new("/media/usb/recordings/drive/a.mcap");
        assert_eq!(catalog.files(session.id).unwrap()[0].path, moved);
        assert_eq!(
            catalog.file(moved).unwrap().unwrap().state,
            FileState::Complete
        );
        catalog.set_file_state(moved, FileState::Deleted).unwrap();
        assert_eq!(catalog.files_on_disk().unwrap(), vec![]);
    }

    #[test]
    fn an_older_catalogs_absolute_paths_become_relative_to_the_data_directory() {
        let state = tempfile::tempdir().unwrap();
        let data = Path::new("/var/lib/recd/recordings");
        write_absolute_catalog(state.path(), data);
        drop(Catalog::open(state.path(), data).unwrap());
        let catalog = Catalog::open(state.path(), Path::new("/mnt/elsewhere")).unwrap();
        let files = catalog.files(1).unwrap();
        assert_eq!(files[0].path, Path::new("/mnt/elsewhere/drive/a.mcap"));
        assert_eq!(
            files[1].path,
            Path::new("/elsewhere/b.mcap"),
            "a path outside the data directory stays as it was"
        );
    }

    #[test]
    fn an_older_catalog_opened_after_its_data_directory_moved_finds_its_sessions_there() {
        let state = tempfile::tempdir().unwrap();
        let data = tempfile::tempdir().unwrap();
        std::fs::create_dir(data.path().join("drive")).unwrap();
        write_absolute_catalog(state.path(), Path::new("/media/old-mount/recordings"));
        let catalog = Catalog::open(state.path(), data.path()).unwrap();
        let session = catalog.session_by_name("drive").unwrap().unwrap();
        assert_eq!(session.directory, data.path().join("drive"));
        let files = catalog.files(session.id).unwrap();
        assert_eq!(files[0].path, data.path().join("drive/a.mcap"));
        assert_eq!(files[1].path, Path::new("/elsewhere/b.mcap"));
    }
}
