//! A recorder's state as the contract names it.

use std::fmt;

use serde::{Deserialize, Serialize};

/// The state a status reports (eProsima's names).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum RecorderState {
    /// A session writes what it receives.
    Running,
    /// A session receives but does not write: paused, or keeping a pre-trigger buffer
    /// until an `event`.
    Paused,
    /// A session was suspended: paused until `start`.
    Suspended,
    /// No session records.
    Stopped,
}

impl RecorderState {
    /// The name on the wire.
    pub fn name(self) -> &'static str {
        match self {
            Self::Running => "RUNNING",
            Self::Paused => "PAUSED",
            Self::Suspended => "SUSPENDED",
            Self::Stopped => "STOPPED",
        }
    }
}

impl fmt::Display for RecorderState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
