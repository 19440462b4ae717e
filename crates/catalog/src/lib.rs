//! The catalog of recd: which sessions ran, their files and the final per-topic counts,
//! kept in a SQLite database (WAL) so that `rec list` survives daemon restarts and files
//! a crash left open are known to need reindexing.
//!
//! States and topic counts are the control protocol's types ([`SessionState`],
//! [`FileState`], [`TopicReport`]); the database keeps a state as its wire name.
//!
//! [`SessionState`]: recd_control::SessionState
//! [`FileState`]: recd_control::FileState
//! [`TopicReport`]: recd_control::TopicReport

#![warn(missing_docs)]
#![warn(clippy::undocumented_unsafe_blocks)]

mod backlog;
mod chain_heads;
mod error;
mod files;
mod finishing;
mod fleet;
mod health;
mod held;
mod incident_tally;
mod incidents;
mod paths;
mod recovery;
mod schema;
mod sessions;
mod uploads;

use std::path::Path;

use paths::DataDir;
use rusqlite::Connection;

pub use backlog::{DeletedBefore, OldestWaiting};
pub use error::CatalogError;
pub use files::File;
pub use fleet::TakenRequest;
pub use held::HeldFile;
pub use incident_tally::IncidentTally;
pub use incidents::{IncidentKey, NewIncident};
pub use sessions::{Session, SessionId};
pub use uploads::{Fingerprint, JournaledPart, NewUpload, QueuedUpload};

/// The database file inside the state directory.
pub const DATABASE_FILE: &str = "catalog.sqlite";

/// The catalog database.
pub struct Catalog {
    connection: Connection,
    data_dir: DataDir,
}

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
        let data_dir = DataDir::new(data_dir);
        schema::create_or_upgrade(&mut connection, &data_dir).map_err(open_error)?;
        Ok(Self {
            connection,
            data_dir,
        })
    }

    /// Whether the catalog still answers: this connection reads it, and the database file
    /// at its path opens afresh (read-only) and reads as a catalog, as it would for a
    /// restarted recd. For `/readyz`.
    pub fn check(&self) -> Result<(), CatalogError> {
        let read = |connection: &Connection| {
            connection.query_row(
                "SELECT count(*) FROM (SELECT 1 FROM sessions LIMIT 1)",
                [],
                |row| row.get::<_, i64>(0),
            )
        };
        read(&self.connection)?;
        let path = self.connection.path().map(std::path::PathBuf::from);
        if let Some(path) = path.filter(|path| !path.as_os_str().is_empty()) {
            let open_error = |source| CatalogError::Open {
                path: path.clone(),
                source,
            };
            let fresh =
                Connection::open_with_flags(&path, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
                    .map_err(open_error)?;
            read(&fresh).map_err(open_error)?;
        }
        Ok(())
    }
}
