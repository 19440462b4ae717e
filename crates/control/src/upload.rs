//! The upload queue on the wire: what `rec upload` asks for and what `rec upload
//! --status`, `rec status` and `rec list` show of the files leaving for object storage.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::state::UploadState;

/// `rec upload SESSION|FILE`: queue a session's files, or one file, by hand.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct UploadRequest {
    /// The newest session of this name: all its finished files.
    pub session: Option<String>,
    /// One file of the catalog.
    pub file: Option<PathBuf>,
}

/// The files a [`UploadRequest`] queued.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UploadsQueued {
    /// Queued now (or again, after a failure).
    pub queued: Vec<PathBuf>,
    /// Already in the queue or uploaded: left as they are.
    pub unchanged: Vec<PathBuf>,
}

/// One file of the upload queue.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UploadEntry {
    /// The local file.
    pub path: PathBuf,
    /// Its session's name.
    pub session: String,
    /// The object's key in the bucket.
    pub key: String,
    /// Where it is.
    pub state: UploadState,
    /// Its size.
    pub bytes: u64,
    /// Bytes the bucket holds of it (parts sent, journaled).
    pub sent: u64,
    /// Files of trigger windows and files with markers go first.
    pub priority: bool,
    /// Queued, ns since the Unix epoch.
    pub queued_ns: i64,
    /// Uploaded and verified, ns since the Unix epoch.
    pub uploaded_ns: Option<i64>,
    /// Why it failed, or what the last attempt met (it is retried).
    pub reason: Option<String>,
}

/// How many uploaded files [`UploadStatus`] lists, newest first.
pub const UPLOADED_LISTED: usize = 100;

/// The uploader's state for `rec upload --status` and `rec status`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct UploadStatus {
    /// An `[upload]` section is configured.
    pub enabled: bool,
    /// Where files go: `s3://bucket/prefix` at the endpoint (no credentials).
    pub destination: Option<String>,
    /// What stops uploads now (wrong credentials, a missing bucket, the network); they
    /// are retried until it clears.
    pub error: Option<String>,
    /// Waiting because a recording is falling behind (the uploader never competes with
    /// one for the disk).
    pub yielding: Option<String>,
    /// Bytes per second sent over the last seconds.
    pub bytes_per_s: f64,
    /// Files uploaded so far.
    #[serde(default)]
    pub uploaded_files: u64,
    /// Their bytes.
    #[serde(default)]
    pub uploaded_bytes: u64,
    /// The files waiting, in the order they go, then those that failed, then the newest
    /// uploaded ones (at most [`UPLOADED_LISTED`]).
    pub files: Vec<UploadEntry>,
    /// What the uploads may carry now, as the fleet last set it (`all` unless it did).
    #[serde(default)]
    pub mode: crate::UploadsMode,
}
