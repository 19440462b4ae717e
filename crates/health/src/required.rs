//! A required topic (or pattern): missing when no topic it names sent a sample within the
//! start-up grace.

use std::time::Duration;

use crate::state::HealthState;
use crate::watch::Change;

/// How long a required topic may take to send its first sample (or its `max_gap`, if
/// longer) before it is missing.
pub const STARTUP_GRACE: Duration = Duration::from_secs(5);

/// One required rule's presence.
#[derive(Debug, Clone)]
pub struct RequiredWatch {
    /// The rule's topic pattern (a name, or a glob standing for several topics).
    pub pattern: String,
    grace_ns: u64,
    started_ns: u64,
    state: HealthState,
    came: bool,
    was_missing: bool,
}

impl RequiredWatch {
    /// The requirement `pattern`, with `max_gap` (if longer than the grace), from a session
    /// started at `started_ns`.
    pub fn new(pattern: &str, max_gap: Option<Duration>, started_ns: u64) -> Self {
        Self {
            pattern: pattern.to_string(),
            grace_ns: u64::try_from(STARTUP_GRACE.max(max_gap.unwrap_or_default()).as_nanos())
                .unwrap_or(u64::MAX),
            started_ns,
            state: HealthState::Ok,
            came: false,
            was_missing: false,
        }
    }

    /// Whether a topic it names sent a sample; once one did, it is met for good (a
    /// silence afterwards is that topic's stall).
    pub fn is_met(&self) -> bool {
        self.came
    }

    /// Whether it was missing at some point.
    pub fn was_missing(&self) -> bool {
        self.was_missing
    }

    /// Whether it is missing now.
    pub fn is_missing(&self) -> bool {
        self.state == HealthState::Missing
    }

    /// Since when it is missing: the session's start.
    pub fn since_ns(&self) -> Option<u64> {
        self.is_missing().then_some(self.started_ns)
    }

    /// Its status.
    pub fn status(&self) -> crate::state::Requirement {
        crate::state::Requirement {
            pattern: self.pattern.clone(),
            state: self.state,
            since_ns: self.since_ns(),
            was_missing: self.was_missing,
        }
    }

    /// Where it stands at `now_ns`, given whether a topic it names has sent a sample by
    /// then; a change, if any.
    pub fn check(&mut self, now_ns: u64, came: bool) -> Option<Change> {
        if self.came {
            return None;
        }
        if came {
            self.came = true;
            if self.state == HealthState::Missing {
                self.state = HealthState::Ok;
                return Some(Change {
                    from: HealthState::Missing,
                    to: HealthState::Ok,
                    since_ns: now_ns,
                    gap_ns: None,
                });
            }
            return None;
        }
        if self.state != HealthState::Missing
            && now_ns.saturating_sub(self.started_ns) > self.grace_ns
        {
            self.state = HealthState::Missing;
            self.was_missing = true;
            return Some(Change {
                from: HealthState::Ok,
                to: HealthState::Missing,
                since_ns: self.started_ns,
                gap_ns: None,
            });
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;
    const T0: u64 = 1_700_000_000_000 * MS;

    #[test]
    fn missing_after_the_grace_until_a_sample_comes() {
        let mut required = RequiredWatch::new("/imu", Some(Duration::from_millis(20)), T0);
        assert_eq!(required.check(T0 + 4900 * MS, false), None);
        let missing = required.check(T0 + 5010 * MS, false).unwrap();
        assert_eq!((missing.to, missing.since_ns), (HealthState::Missing, T0));
        assert_eq!(required.check(T0 + 6000 * MS, false), None, "told once");
        assert_eq!(required.since_ns(), Some(T0));
        let back = required.check(T0 + 7000 * MS, true).unwrap();
        assert_eq!(back.to, HealthState::Ok);
        assert!(required.is_met() && required.was_missing() && !required.is_missing());
    }

    #[test]
    fn a_max_gap_longer_than_the_grace_extends_it_and_a_topic_in_time_is_never_missing() {
        let mut required = RequiredWatch::new("lidar", Some(Duration::from_secs(8)), T0);
        assert_eq!(required.check(T0 + 7000 * MS, false), None);
        assert_eq!(required.check(T0 + 7500 * MS, true), None);
        assert_eq!(required.check(T0 + 60_000 * MS, false), None);
        assert!(!required.was_missing());
    }
}
