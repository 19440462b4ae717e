//! What recd expects of each topic, and whether a recording met it.
//!
//! Counts say what recd kept; they cannot say what never came. Each topic therefore gets
//! an expectation ([`Expectation`]: a minimum rate, a longest silence, whether it is
//! required), from a rule matched by its name or learnt from its own first samples, and a
//! small state machine ([`TopicWatch`]: ok, slow, stalled, unchecked) fed with the receive
//! time of each sample, with no allocation; a required rule is missing while no topic it
//! names has sent a sample ([`RequiredWatch`]). A file's own view ([`FileHealth`])
//! keeps its rate over 1 s windows and a map of its gaps, summarized at close
//! ([`FileHealthSummary`]). [`HealthEvent`] is a state change as the `recd/health`
//! channel carries it.
//!
//! Times are ns since the Unix epoch (the files' `log_time`).

#![warn(missing_docs)]

mod event;
mod expect;
mod file;
mod rate;
mod required;
mod state;
mod watch;

pub use event::{HealthEvent, HEALTH_CHANNEL, HEALTH_SCHEMA, HEALTH_SCHEMA_NAME};
pub use expect::{ExpectError, Expectation, Expectations, Rule};
pub use file::{
    worst_state, FileHealth, FileHealthSummary, HealthTally, RateStats, TopicFileHealth, Verdict,
    GAP_MAP_LEN,
};
pub use required::{RequiredWatch, STARTUP_GRACE};
pub use state::{Expected, ExpectedFrom, HealthState, Requirement, TopicHealth};
pub use watch::{Change, TopicWatch, RATE_WINDOW};
