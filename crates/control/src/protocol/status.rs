//! The live status of a running session: files, rates, disk space, buffer and receive threads.

use std::path::PathBuf;

use recd_health::Requirement;
use serde::{Deserialize, Serialize};

use super::topics::RatedTopic;
use crate::Backlog;

/// Live view of a running session.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionStatus {
    /// Its name.
    pub name: String,
    /// Its catalog id.
    pub id: i64,
    /// The directory its files go to.
    pub directory: PathBuf,
    /// The files being written: one, or two when the session records iceoryx2 and DDS
    /// (a file per source family); none while paused for disk space.
    pub current_files: Vec<PathBuf>,
    /// Seconds since the start.
    pub elapsed_s: f64,
    /// Bytes written so far.
    pub bytes_written: u64,
    /// Bytes per second over the last second or so.
    pub bytes_per_s: f64,
    /// Per-topic counts and rates.
    pub topics: Vec<RatedTopic>,
    /// A write error that stopped the writing, if any.
    pub write_error: Option<String>,
    /// Services that match but could not be opened, with the reason.
    pub problems: Vec<(String, String)>,
    /// How its files are written: `direct` or `buffered` (what `auto` chose).
    #[serde(default)]
    pub io_mode: String,
    /// Set while writing is paused because its file system is nearly full.
    #[serde(default)]
    pub disk_full: Option<DiskFull>,
    /// Paused by request (`rec pause`): messages are counted as paused, not written.
    #[serde(default)]
    pub paused: bool,
    /// A pre-trigger session's buffer; `None` for one that writes everything.
    #[serde(default)]
    pub buffer: Option<BufferStatus>,
    /// Its receive threads: scheduling, lateness, loans taken back.
    #[serde(default)]
    pub receive_threads: Vec<ReceiveThreadReport>,
    /// The required rules, and whether a topic each names has come.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub required: Vec<Requirement>,
    /// Its files waiting to be finished and uploaded, and those retention deleted first.
    #[serde(default)]
    pub backlog: Backlog,
}

/// A receive thread of a session: how it is scheduled and how late its passes came.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReceiveThreadReport {
    /// The source it receives for: `iceoryx2` or `dds`.
    pub source: String,
    /// `SCHED_FIFO <priority>`, or `nice <value>`.
    pub scheduling: String,
    /// Why it did not get the real-time priority configured (`receive_priority`).
    pub priority_warning: Option<String>,
    /// Why its preallocated memory could not be locked.
    #[serde(default)]
    pub memory_warning: Option<String>,
    /// Passes started by a poll schedule (topics without an event service).
    pub passes: u64,
    /// How late such a pass started behind its schedule, 99.9th percentile, in µs.
    pub lateness_p999_us: f64,
    /// The latest, in µs.
    pub lateness_max_us: f64,
    /// Large samples copied into the spill pool to free their loan for a waiting one.
    pub spilled: u64,
    /// Loans taken back from the writer: spilled, or given up (dropped) with the pool full.
    pub reclaimed: u64,
}

/// What a pre-trigger session's buffer holds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BufferStatus {
    /// Seconds of messages it keeps (`--pre-trigger`).
    pub duration_s: f64,
    /// Its memory in bytes (`--buffer-size`).
    pub capacity_bytes: u64,
    /// Messages held.
    pub messages: u64,
    /// Their bytes.
    pub bytes: u64,
    /// Seconds between the oldest and the newest held.
    pub span_s: f64,
    /// Messages let go without a trigger so far (the topics' `evicted`, summed).
    pub evicted: u64,
}

/// A session paused because the free space on its file system fell below recd's
/// `min_free_space`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct DiskFull {
    /// Bytes free when last looked at.
    pub free: u64,
    /// `min_free_space`.
    pub minimum: u64,
}
