//! What background work has still to do, and what it never got to: for `rec status`, the
//! metrics and the page.

use serde::{Deserialize, Serialize};

/// Files waiting for background work (finishing, uploads), and files retention deleted
/// before it got to them.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Backlog {
    /// Closed files waiting to be finished (indexed or compressed).
    pub finish_waiting: u64,
    /// Seconds the oldest of them has waited since it closed; `None` when none waits (or
    /// an older recd queued it without a time).
    pub finish_oldest_s: Option<f64>,
    /// Files waiting to be uploaded (queued or under way).
    pub upload_waiting: u64,
    /// Seconds the oldest of them has waited since it was queued.
    pub upload_oldest_s: Option<f64>,
    /// Files retention deleted before they were finished.
    pub deleted_unfinished: u64,
    /// Files retention deleted before they were uploaded (of those queued for upload).
    pub deleted_unuploaded: u64,
    /// How much of the time background work (for every session) gets now: `running`,
    /// `throttled` or `backed off`; empty from a catalog alone.
    pub background_mode: String,
    /// The same with why, in a line.
    pub background: String,
    /// Whether background work may run at this moment (it keeps off some windows while
    /// recordings lose samples).
    pub background_on: bool,
    /// `[upload] max_delay` in seconds: waiting longer is late (the log warns); `None`
    /// from a catalog alone.
    pub max_delay_s: Option<f64>,
}

impl Backlog {
    /// Whether anything waits or was lost.
    pub fn is_empty(&self) -> bool {
        self.finish_waiting == 0
            && self.upload_waiting == 0
            && self.deleted_unfinished == 0
            && self.deleted_unuploaded == 0
    }
}
