//! The catalog's tables: created on first open, and an older recd's catalog brought up
//! to date (added columns, paths made relative to the data directory).

use rusqlite::{params, Connection};

use crate::paths::{self, DataDir};
use crate::{chain_heads, fleet, incidents, uploads};

/// The sessions, files and topics tables (the upload queue's are `uploads::SCHEMA`).
pub(crate) const SCHEMA: &str = "
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
    filtered INTEGER NOT NULL DEFAULT 0,
    repeated INTEGER NOT NULL DEFAULT 0,
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
    ("files", "health", "TEXT"),
    ("sessions", "health", "TEXT"),
    ("files", "damaged_at", "INTEGER"),
    ("topics", "filtered", "INTEGER NOT NULL DEFAULT 0"),
    ("files", "finish_since_ns", "INTEGER"),
    ("files", "deleted_unfinished", "INTEGER NOT NULL DEFAULT 0"),
    ("files", "deleted_unuploaded", "INTEGER NOT NULL DEFAULT 0"),
    ("files", "start_ns", "INTEGER"),
    ("files", "end_ns", "INTEGER"),
    // An incident's own file, before incidents owned files many to many: moved into
    // `incident_files` on open (`incidents::MOVE_OWN_FILES`), then always empty.
    ("files", "incident", "TEXT"),
    // What fired a rule's incident (`recd_control::RuleFiring` as JSON).
    ("incidents", "rule", "TEXT"),
    // An upload that replaces the object under its key (a session's hash chain).
    ("uploads", "replace", "INTEGER NOT NULL DEFAULT 0"),
    // The topics an incident keeps (a JSON array of glob patterns); NULL keeps all.
    ("incidents", "topics", "TEXT"),
    // Samples that arrived a second time (`TopicReport::repeated`).
    ("topics", "repeated", "INTEGER NOT NULL DEFAULT 0"),
];

/// Creates the tables a new catalog lacks and brings an older one up to date: the added
/// columns, then its absolute paths made relative to `data_dir`.
pub(crate) fn create_or_upgrade(
    connection: &mut Connection,
    data_dir: &DataDir,
) -> rusqlite::Result<()> {
    connection.execute_batch(SCHEMA)?;
    connection.execute_batch(uploads::SCHEMA)?;
    connection.execute_batch(incidents::SCHEMA)?;
    connection.execute_batch(chain_heads::SCHEMA)?;
    connection.execute_batch(fleet::SCHEMA)?;
    add_missing_columns(connection)?;
    paths::migrate_to_relative(connection, data_dir)?;
    connection.execute_batch(incidents::MOVE_OWN_FILES)
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

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::Catalog;

    #[test]
    fn a_catalog_without_the_added_count_columns_gets_them_and_keeps_its_counts() {
        let dir = tempfile::tempdir().unwrap();
        let old_schema = SCHEMA.replace(
            "    overflows INTEGER NOT NULL DEFAULT 0,\n    paused INTEGER NOT NULL DEFAULT 0,\n    evicted INTEGER NOT NULL DEFAULT 0,\n",
            "",
        )
        .replace("    filtered INTEGER NOT NULL DEFAULT 0,\n", "")
        .replace("    repeated INTEGER NOT NULL DEFAULT 0,\n", "");
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
            (
                topics[0].overflows,
                topics[0].paused,
                topics[0].evicted,
                topics[0].filtered,
                topics[0].repeated
            ),
            (0, 0, 0, 0, 0)
        );
        drop(catalog);
        Catalog::open(dir.path(), Path::new("/d")).expect("opens again once upgraded");
    }
}
