//! Rules as `rec status` shows them: what each watches, whether it can run, and how often
//! it was evaluated, fired, fell behind or failed.

use serde::{Deserialize, Serialize};

/// Where a rule stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RuleState {
    /// Its topic has not been seen yet: it is checked against the schema when it is.
    Waiting,
    /// It is evaluated on every sample of its topic (or every health change).
    Watching,
    /// It cannot run: its expression does not fit the topic's schema (see `problem`).
    Refused,
}

/// A `[[rule]]` of recd.toml as it runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RuleStatus {
    /// Its name.
    pub name: String,
    /// Where it came from: `recd.toml`, or `campaign NAME@VERSION` (pushed by the fleet).
    #[serde(default)]
    pub origin: String,
    /// What it watches: `topic /vehicle/status` or `health lidar/*`.
    pub watches: String,
    /// Where it stands.
    pub state: RuleState,
    /// Why it cannot run, or the last evaluation's error (a message it could not decode).
    #[serde(default)]
    pub problem: Option<String>,
    /// Samples (or health changes) it was evaluated on.
    pub evaluated: u64,
    /// Samples it did not evaluate because it fell behind (its queue was full): skipped
    /// rather than delay the recording.
    pub skipped: u64,
    /// Samples it could not evaluate (undecodable, or the expression failed on them).
    pub errors: u64,
    /// Times it fired.
    pub fired: u64,
    /// When it last fired: the firing sample's log time, ns since the Unix epoch.
    #[serde(default)]
    pub last_fired_ns: Option<u64>,
}
