//! What can go wrong with the catalog.

use std::path::PathBuf;

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
