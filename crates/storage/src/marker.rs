//! Markers (`rec mark`): moments of a recording with a note, kept as Metadata records
//! named [`MARKER`](crate::iceoryx2::MARKER) with entries `time` and `text`.

use std::collections::BTreeMap;

/// A moment of the recording with a note.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Marker {
    /// When it was set, ns since the Unix epoch.
    pub time_ns: u64,
    /// Its text.
    pub text: String,
}

impl Marker {
    /// The Metadata record's entries: `time` (ns since the epoch) and `text`.
    pub fn record(&self) -> BTreeMap<String, String> {
        BTreeMap::from([
            ("time".to_string(), self.time_ns.to_string()),
            ("text".to_string(), self.text.clone()),
        ])
    }

    /// The marker a Metadata record of `name` holds, if it is one.
    pub fn from_record(name: &str, entries: &BTreeMap<String, String>) -> Option<Self> {
        if name != crate::iceoryx2::MARKER {
            return None;
        }
        Some(Self {
            time_ns: entries.get("time")?.parse().ok()?,
            text: entries.get("text")?.clone(),
        })
    }
}
