//! A topic's health as the status shows it: its state, since when, and what is expected
//! of it.

use serde::{Deserialize, Serialize};

/// Where a topic stands against its expectation.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default, Serialize, Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum HealthState {
    /// Nothing is checked: the topic's rule turns checks off, or its own rate is still
    /// being learnt.
    #[default]
    Unchecked,
    /// As expected.
    Ok,
    /// Fewer samples than `min_rate` over the whole rate window.
    Slow,
    /// Silent for longer than `max_gap`.
    Stalled,
    /// Required, and no sample came within the start-up grace.
    Missing,
}

impl HealthState {
    /// Its name, as the status and the files write it.
    pub fn name(self) -> &'static str {
        match self {
            HealthState::Unchecked => "unchecked",
            HealthState::Ok => "ok",
            HealthState::Slow => "slow",
            HealthState::Stalled => "stalled",
            HealthState::Missing => "missing",
        }
    }

    /// Whether this is a problem (slow, stalled or missing).
    pub fn is_bad(self) -> bool {
        matches!(
            self,
            HealthState::Slow | HealthState::Stalled | HealthState::Missing
        )
    }
}

impl std::fmt::Display for HealthState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Where a topic's expectation comes from.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ExpectedFrom {
    /// No rule: learnt from the topic's own first samples (once learnt).
    #[default]
    Learnt,
    /// A rule (`[[expect]]` or `rec start --expect`) with this topic pattern.
    Rule(String),
    /// A rule turned the checks off (`expect = false`, or `off`).
    Off,
}

/// The expectation a topic is checked against.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct Expected {
    /// Where it comes from.
    pub from: ExpectedFrom,
    /// Samples per second at least, over the rate window; `None`: not checked.
    pub min_rate: Option<f64>,
    /// The longest silence, in ns, before the topic counts as stalled; `None`: not
    /// checked (yet).
    pub max_gap_ns: Option<u64>,
    /// Whether a session without it (or with it stalled) is a failed one.
    pub required: bool,
    /// The rate learnt from the topic's first samples, where it was learnt.
    #[serde(default)]
    pub learnt_rate: Option<f64>,
}

/// A topic's live health.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct TopicHealth {
    /// Where it stands now.
    pub state: HealthState,
    /// Since when (ns since the epoch): for `stalled` its last sample, for `slow` the
    /// start of the window that was short, for `missing` the session's start.
    pub since_ns: Option<u64>,
    /// What is expected of it.
    pub expected: Expected,
    /// Times it stalled.
    pub stalls: u32,
    /// Times it became slow.
    pub slow_spells: u32,
    /// The longest silence between two of its samples so far, in ns.
    pub longest_gap_ns: u64,
    /// The worst state it reached (`missing` over `stalled` over `slow`).
    pub worst: HealthState,
}

/// A required rule's presence, as the status shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Requirement {
    /// The rule's topic pattern.
    pub pattern: String,
    /// `missing`, or `ok` once a topic it names sent a sample (or while it may still).
    pub state: HealthState,
    /// While missing: the session's start.
    pub since_ns: Option<u64>,
    /// Whether it was missing at some point.
    pub was_missing: bool,
}
