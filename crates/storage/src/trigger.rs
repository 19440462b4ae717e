//! Triggers (`rec trigger`): the moment a pre-trigger session was asked to keep, and the
//! window of messages its file holds, kept as Metadata records named
//! [`TRIGGER`](crate::iceoryx2::TRIGGER).

use std::collections::BTreeMap;

/// A trigger and the window it keeps.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Trigger {
    /// When it was asked for, ns since the Unix epoch.
    pub time_ns: u64,
    /// The window's first log time, ns since the Unix epoch.
    pub start_ns: u64,
    /// The window's last log time, ns since the Unix epoch.
    pub end_ns: u64,
    /// Why it was asked for (may be empty).
    pub note: String,
    /// The asker's id of the trigger (may be empty); a repeated id writes no second file.
    pub id: String,
    /// What the host knew of its clock's synchronisation when triggered, e.g.
    /// `kernel: synchronized, max error 16 ms`, or `unknown`; empty in older files.
    pub clock_sync: String,
}

impl Trigger {
    /// The Metadata record's entries: `time`, `start` and `end` (ns since the epoch),
    /// `note`, `id` and `clock_sync`.
    pub fn record(&self) -> BTreeMap<String, String> {
        BTreeMap::from([
            ("time".to_string(), self.time_ns.to_string()),
            ("start".to_string(), self.start_ns.to_string()),
            ("end".to_string(), self.end_ns.to_string()),
            ("note".to_string(), self.note.clone()),
            ("id".to_string(), self.id.clone()),
            ("clock_sync".to_string(), self.clock_sync.clone()),
        ])
    }

    /// The trigger a Metadata record of `name` holds, if it is one.
    pub fn from_record(name: &str, entries: &BTreeMap<String, String>) -> Option<Self> {
        if name != crate::iceoryx2::TRIGGER {
            return None;
        }
        let number = |key: &str| entries.get(key)?.parse().ok();
        Some(Self {
            time_ns: number("time")?,
            start_ns: number("start")?,
            end_ns: number("end")?,
            note: entries.get("note").cloned().unwrap_or_default(),
            id: entries.get("id").cloned().unwrap_or_default(),
            clock_sync: entries.get("clock_sync").cloned().unwrap_or_default(),
        })
    }
}
