//! Changing a running session's topics (`rec topics-set`).

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// Topics to add to and remove from a running session.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct SetTopicsRequest {
    /// The session; `None` means the only one running.
    pub name: Option<String>,
    /// Glob patterns of topics to record from now on.
    pub add: Vec<String>,
    /// Glob patterns of topics to record no more.
    pub remove: Vec<String>,
}

/// A session's topics, changed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionTopicsChanged {
    /// The session.
    pub name: String,
    /// Its include patterns now (empty: every topic).
    pub topics: Vec<String>,
    /// Its exclude patterns now.
    pub exclude: Vec<String>,
    /// When each receive thread took the change, ns since the Unix epoch: what it
    /// records no more was received before, what it records now after. The same moment
    /// is in the marker written into its files.
    pub times_ns: Vec<u64>,
    /// The files being written, which hold the marker.
    pub files: Vec<PathBuf>,
}
