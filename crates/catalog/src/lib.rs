//! The catalog of recd: which sessions ran, their files and the final per-topic counts,
//! kept in a SQLite database (WAL) so that `rec list` survives daemon restarts and files
//! a crash left open are known to need reindexing.
//!
//! States and topic counts are the control protocol's types ([`SessionState`],
//! [`FileState`], [`TopicReport`]); the database keeps a state as its wire name.

#![warn(missing_docs)]
#![warn(clippy::undocumented_unsafe_blocks)]

mod finishing;
mod paths;
mod uploads;

use std::path::{Path, PathBuf};

use paths::DataDir;
use recd_control::{FileState, SessionState, TopicReport};
use rusqlite::{params, Connection, OptionalExtension};

pub use uploads::{Fingerprint, JournaledPart, NewUpload, QueuedUpload};

/// The database file inside the state directory.
pub const DATABASE_FILE: &str = "catalog.sqlite";

/// A session's catalog id.
pub type SessionId = i64;

/// One session as the catalog keeps it.
#[derive(Debug, Clone, PartialEq)]
pub struct Session {
    /// Its id.
    pub id: SessionId,
    /// Its name.
    pub name: String,
    /// The directory its files go to.
    pub directory: PathBuf,
    /// The recording configuration it ran with, as JSON.
    pub config: String,
    /// Start, ns since the Unix epoch.
    pub started_ns: i64,
    /// Stop, ns since the Unix epoch.
    pub stopped_ns: Option<i64>,
    /// Its state.
    pub state: SessionState,
    /// Why it failed, when it did.
    pub reason: Option<String>,
}

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

/// What went wrong with the catalog.
#[derive(Debug, thiserror::Error)]
pub enum CatalogError {
    /// The database could not be opened or created.
    #[error("cannot open the catalog {}: {source}", path.display())]
    Open {
        /// The database file.
        path: PathBuf,
        /// Why.
        source: rusqlite::Error,
    },
    /// A query failed.
    #[error("catalog query failed: {0}")]
    Query(#[from] rusqlite::Error),
    /// A value in the database is not one this version writes.
    #[error("the catalog holds an unknown {what} {value:?}")]
    Corrupt {
        /// Which column.
        what: &'static str,
        /// The value.
        value: String,
    },
}

/// The catalog database.
pub struct Catalog {
    connection: Connection,
    data_dir: DataDir,
}

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS sessions (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    directory TEXT NOT NULL,
    config TEXT NOT NULL,
    started_ns INTEGER NOT NULL,
    stopped_ns INTEGER,
    state TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS files (
    path TEXT PRIMARY KEY,
    session INTEGER NOT NULL REFERENCES sessions(id),
    bytes INTEGER NOT NULL DEFAULT 0,
    messages INTEGER NOT NULL DEFAULT 0,
    state TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS files_by_session ON files(session);
CREATE TABLE IF NOT EXISTS topics (
    session INTEGER NOT NULL REFERENCES sessions(id),
    name TEXT NOT NULL,
    service TEXT NOT NULL,
    received INTEGER NOT NULL,
    written INTEGER NOT NULL,
    dropped INTEGER NOT NULL,
    lost INTEGER NOT NULL,
    bytes_written INTEGER NOT NULL,
    overflows INTEGER NOT NULL DEFAULT 0,
    paused INTEGER NOT NULL DEFAULT 0,
    evicted INTEGER NOT NULL DEFAULT 0,
    unknown_loss INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (session, service)
);
";

/// Columns added since the first schema, with their definitions: a catalog written by an
/// older recd gets them on open.
const ADDED_COLUMNS: &[(&str, &str, &str)] = &[
    ("topics", "overflows", "INTEGER NOT NULL DEFAULT 0"),
    ("sessions", "reason", "TEXT"),
    ("topics", "paused", "INTEGER NOT NULL DEFAULT 0"),
    ("topics", "evicted", "INTEGER NOT NULL DEFAULT 0"),
    ("topics", "unknown_loss", "INTEGER NOT NULL DEFAULT 0"),
    ("files", "markers", "INTEGER NOT NULL DEFAULT 0"),
    ("files", "finish", "TEXT"),
];

impl Catalog {
    /// Opens (or creates) the catalog in `state_dir`, which must exist, for the recordings
    /// under `data_dir`: it keeps their paths relative to `data_dir` (and rewrites an older
    /// catalog's absolute paths so), so the data directory may move between runs.
    pub fn open(state_dir: &Path, data_dir: &Path) -> Result<Self, CatalogError> {
        let path = state_dir.join(DATABASE_FILE);
        let open_error = |source| CatalogError::Open {
            path: path.clone(),
            source,
        };
        let mut connection = Connection::open(&path).map_err(open_error)?;
        connection
            .pragma_update(None, "journal_mode", "WAL")
            .map_err(open_error)?;
        // Every commit reaches the disk before it returns: a session and its file are known
        // before the file's first byte is written, even across a power cut. Commits are
        // few (a session's start and stop, a file's start and end).
        connection
            .pragma_update(None, "synchronous", "FULL")
            .map_err(open_error)?;
        connection
            .busy_timeout(std::time::Duration::from_secs(5))
            .map_err(open_error)?;
        connection.execute_batch(SCHEMA).map_err(open_error)?;
        connection
            .execute_batch(uploads::SCHEMA)
            .map_err(open_error)?;
        add_missing_columns(&connection).map_err(open_error)?;
        let data_dir = DataDir::new(data_dir);
        paths::migrate_to_relative(&mut connection, &data_dir).map_err(open_error)?;
        Ok(Self {
            connection,
            data_dir,
        })
    }

    /// Records a session that starts now; returns its id.
    pub fn begin_session(
        &self,
        name: &str,
        directory: &Path,
        config: &str,
        started_ns: i64,
    ) -> Result<SessionId, CatalogError> {
        self.connection.execute(
            "INSERT INTO sessions (name, directory, config, started_ns, state) VALUES (?1, ?2, ?3, ?4, ?5)",
            params![name, self.data_dir.store(directory), config, started_ns, SessionState::Recording.as_str()],
        )?;
        Ok(self.connection.last_insert_rowid())
    }

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

    /// Records a session's end: its state (with the reason of a failure), stop time and
    /// final topic counts.
    pub fn finish_session(
        &mut self,
        session: SessionId,
        state: SessionState,
        reason: Option<&str>,
        stopped_ns: i64,
        topics: &[TopicReport],
    ) -> Result<(), CatalogError> {
        let transaction = self.connection.transaction()?;
        transaction.execute(
            "UPDATE sessions SET state = ?2, stopped_ns = ?3, reason = ?4 WHERE id = ?1",
            params![session, state.as_str(), stopped_ns, reason],
        )?;
        for topic in topics {
            transaction.execute(
                "INSERT OR REPLACE INTO topics (session, name, service, received, written, dropped, lost, bytes_written, overflows, paused, evicted, unknown_loss)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
                params![
                    session,
                    topic.name,
                    topic.service,
                    topic.received as i64,
                    topic.written as i64,
                    topic.dropped as i64,
                    topic.lost as i64,
                    topic.bytes_written as i64,
                    topic.overflows as i64,
                    topic.paused as i64,
                    topic.evicted as i64,
                    topic.unknown_loss
                ],
            )?;
        }
        transaction.commit()?;
        Ok(())
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

    /// Every session, newest first.
    pub fn sessions(&self) -> Result<Vec<Session>, CatalogError> {
        let mut statement = self.connection.prepare(
            "SELECT id, name, directory, config, started_ns, stopped_ns, state, reason FROM sessions ORDER BY id DESC",
        )?;
        let rows = statement.query_map([], session_row)?;
        rows.map(|row| row?.into_session(&self.data_dir)).collect()
    }

    /// The newest session named `name`.
    pub fn session_by_name(&self, name: &str) -> Result<Option<Session>, CatalogError> {
        self.connection
            .query_row(
                "SELECT id, name, directory, config, started_ns, stopped_ns, state, reason FROM sessions
                 WHERE name = ?1 ORDER BY id DESC LIMIT 1",
                params![name],
                session_row,
            )
            .optional()?
            .map(|session| session.into_session(&self.data_dir))
            .transpose()
    }

    /// The files of a session, in the order they were started.
    pub fn files(&self, session: SessionId) -> Result<Vec<File>, CatalogError> {
        self.files_where("session = ?1", "rowid", params![session])
    }

    /// The file at `path`, if the catalog knows it.
    pub fn file(&self, path: &Path) -> Result<Option<File>, CatalogError> {
        Ok(self
            .files_where("path = ?1", "rowid", params![self.data_dir.store(path)])?
            .into_iter()
            .next())
    }

    /// The final topic counts of a session.
    pub fn topics(&self, session: SessionId) -> Result<Vec<TopicReport>, CatalogError> {
        let mut statement = self.connection.prepare(
            "SELECT name, service, received, written, dropped, lost, bytes_written, overflows, paused, evicted, unknown_loss FROM topics
             WHERE session = ?1 ORDER BY name",
        )?;
        let rows = statement.query_map(params![session], |row| {
            Ok(TopicReport {
                name: row.get(0)?,
                service: row.get(1)?,
                received: row.get::<_, i64>(2)? as u64,
                written: row.get::<_, i64>(3)? as u64,
                dropped: row.get::<_, i64>(4)? as u64,
                lost: row.get::<_, i64>(5)? as u64,
                bytes_written: row.get::<_, i64>(6)? as u64,
                overflows: row.get::<_, i64>(7)? as u64,
                paused: row.get::<_, i64>(8)? as u64,
                evicted: row.get::<_, i64>(9)? as u64,
                unknown_loss: row.get::<_, i64>(10)? != 0,
            })
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }

    /// The files matching `condition`, sorted by `order`.
    fn files_where(
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

struct RawSession {
    id: i64,
    name: String,
    directory: String,
    config: String,
    started_ns: i64,
    stopped_ns: Option<i64>,
    state: String,
    reason: Option<String>,
}

impl RawSession {
    fn into_session(self, data_dir: &DataDir) -> Result<Session, CatalogError> {
        Ok(Session {
            id: self.id,
            name: self.name,
            directory: data_dir.resolve(&self.directory),
            config: self.config,
            started_ns: self.started_ns,
            stopped_ns: self.stopped_ns,
            state: parse_session_state(&self.state)?,
            reason: self.reason,
        })
    }
}

fn session_row(row: &rusqlite::Row<'_>) -> rusqlite::Result<RawSession> {
    Ok(RawSession {
        id: row.get(0)?,
        name: row.get(1)?,
        directory: row.get(2)?,
        config: row.get(3)?,
        started_ns: row.get(4)?,
        stopped_ns: row.get(5)?,
        state: row.get(6)?,
        reason: row.get(7)?,
    })
}

fn add_missing_columns(connection: &Connection) -> rusqlite::Result<()> {
    for (table, column, definition) in ADDED_COLUMNS {
        let present: bool = connection.query_row(
            &format!("SELECT COUNT(*) > 0 FROM pragma_table_info('{table}') WHERE name = ?1"),
            params![column],
            |row| row.get(0),
        )?;
        if !present {
            connection.execute_batch(&format!(
                "ALTER TABLE {table} ADD COLUMN {column} {definition}"
            ))?;
        }
    }
    Ok(())
}

fn parse_session_state(text: &str) -> Result<SessionState, CatalogError> {
    text.parse().map_err(|_| CatalogError::Corrupt {
        what: "session state",
        value: text.to_string(),
    })
}

fn parse_file_state(text: &str) -> Result<FileState, CatalogError> {
    text.parse().map_err(|_| CatalogError::Corrupt {
        what: "file state",
        value: text.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(session: SessionId, path: &str, state: FileState) -> File {
        File {
            session,
            path: PathBuf::from(path),
            bytes: 10,
            messages: 2,
            state,
        }
    }

    #[test]
    fn sessions_files_and_counts_survive_reopening() {
        let dir = tempfile::tempdir().unwrap();
        let id = {
            let mut catalog = Catalog::open(dir.path(), Path::new("/data")).unwrap();
            let id = catalog
                .begin_session("drive", Path::new("/data/drive"), "{}", 5)
                .unwrap();
            catalog
                .upsert_file(&file(id, "/data/drive/a.mcap", FileState::Recording))
                .unwrap();
            let mut done = file(id, "/data/drive/a.mcap", FileState::Complete);
            done.bytes = 1000;
            catalog.upsert_file(&done).unwrap();
            let topics = [TopicReport {
                name: "/camera".into(),
                service: "camera".into(),
                received: 3,
                written: 3,
                dropped: 0,
                lost: 1,
                overflows: 2,
                bytes_written: 300,
                paused: 4,
                evicted: 5,
                unknown_loss: true,
            }];
            catalog
                .finish_session(id, SessionState::Stopped, None, 9, &topics)
                .unwrap();
            id
        };
        let catalog = Catalog::open(dir.path(), Path::new("/data")).unwrap();
        let session = catalog.session_by_name("drive").unwrap().unwrap();
        assert_eq!(session.id, id);
        assert_eq!(session.state, SessionState::Stopped);
        assert_eq!(session.stopped_ns, Some(9));
        let files = catalog.files(id).unwrap();
        assert_eq!(files.len(), 1);
        assert_eq!(files[0].state, FileState::Complete);
        assert_eq!(files[0].bytes, 1000);
        assert_eq!(catalog.topics(id).unwrap()[0].lost, 1);
        assert_eq!(catalog.topics(id).unwrap()[0].overflows, 2);
        assert_eq!(catalog.topics(id).unwrap()[0].paused, 4);
        assert_eq!(catalog.topics(id).unwrap()[0].evicted, 5);
        assert!(catalog.topics(id).unwrap()[0].unknown_loss);
        assert!(catalog.session_by_name("other").unwrap().is_none());
    }

    #[test]
    fn a_catalog_without_the_added_count_columns_gets_them_and_keeps_its_counts() {
        let dir = tempfile::tempdir().unwrap();
        let old_schema = SCHEMA.replace(
            "    overflows INTEGER NOT NULL DEFAULT 0,\n    paused INTEGER NOT NULL DEFAULT 0,\n    evicted INTEGER NOT NULL DEFAULT 0,\n",
            "",
        );
        assert_ne!(old_schema, SCHEMA);
        let old = Connection::open(dir.path().join("catalog.sqlite")).unwrap();
        old.execute_batch(&old_schema).unwrap();
        old.execute_batch(
            "INSERT INTO sessions (name, directory, config, started_ns, state)
                 VALUES ('s', '/d/s', '{}', 1, 'stopped');
             INSERT INTO topics (session, name, service, received, written, dropped, lost, bytes_written)
                 VALUES (1, '/t', 't', 5, 4, 1, 2, 40);",
        )
        .unwrap();
        drop(old);
        let catalog = Catalog::open(dir.path(), Path::new("/d")).unwrap();
        let topics = catalog.topics(1).unwrap();
        assert_eq!((topics[0].written, topics[0].lost), (4, 2));
        assert_eq!(
            (topics[0].overflows, topics[0].paused, topics[0].evicted),
            (0, 0, 0)
        );
        drop(catalog);
        Catalog::open(dir.path(), Path::new("/d")).expect("opens again once upgraded");
    }

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
