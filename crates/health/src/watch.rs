//! The per-topic state machine: fed with each sample's receive time and asked, now and
//! then, where the topic stands. Fixed size, no allocation.

use std::time::Duration;

use crate::expect::Rule;
use crate::rate::{RateWindow, SLOT_NS};
use crate::state::{Expected, ExpectedFrom, HealthState, TopicHealth};

/// The window a rate is measured over.
pub const RATE_WINDOW: Duration = Duration::from_secs(1);

/// Samples a topic without a rule must send before its own rate defines its expectation...
const LEARN_SAMPLES: u64 = 20;
/// ... over at least this long.
const LEARN_SPAN_NS: u64 = 2_000_000_000;
/// A learnt stall: silent for this many of its periods ...
const LEARNT_GAP_PERIODS: u64 = 10;
/// ... and at least this long.
const LEARNT_GAP_MIN_NS: u64 = 500_000_000;
/// A learnt rate is checked from this many Hz up (a 1 s window holds too few samples of a
/// slower topic to tell slow from jitter) ...
const LEARNT_RATE_CHECKED_FROM: f64 = 10.0;
/// ... against this share of it.
const LEARNT_RATE_SHARE: f64 = 0.5;

/// A state change of one topic.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Change {
    /// The state it left.
    pub from: HealthState,
    /// The state it is in now.
    pub to: HealthState,
    /// Since when the new state holds, ns.
    pub since_ns: u64,
    /// Leaving `stalled`: the silence, in ns.
    pub gap_ns: Option<u64>,
}

/// One topic's health, live.
#[derive(Debug, Clone)]
pub struct TopicWatch {
    health: TopicHealth,
    /// Whether anything is checked (a rule may turn checks off).
    checked: bool,
    /// Whether the rate and gap are learnt rather than given.
    learns_rate: bool,
    learns_gap: bool,
    learnt: bool,
    /// The first sample since the watch began, or since learning began again.
    first_ns: Option<u64>,
    last_ns: Option<u64>,
    /// Where a rate window may start: after the first sample, and after the last stall
    /// (a window holding a stall would call the topic slow for the stall itself).
    rate_from_ns: u64,
    samples: u64,
    window: RateWindow,
    /// A change noticed by [`Self::saw`], handed out by the next [`Self::check`].
    noticed: Option<Change>,
    /// Counts changes of the state or the expectation, for views that copy them.
    revision: u32,
}

impl TopicWatch {
    /// A topic under `rule` (`None`: no rule, learnt from its own samples).
    pub fn new(rule: Option<&Rule>) -> Self {
        let (expected, checked) = match rule {
            Some(rule) if !rule.checked => (
                Expected {
                    from: ExpectedFrom::Off,
                    ..Expected::default()
                },
                false,
            ),
            Some(rule) => (
                Expected {
                    from: ExpectedFrom::Rule(rule.pattern.clone()),
                    min_rate: rule.min_rate,
                    max_gap_ns: rule.max_gap_ns,
                    required: rule.required,
                    learnt_rate: None,
                },
                true,
            ),
            None => (Expected::default(), true),
        };
        let learns_rate = checked && expected.min_rate.is_none();
        let learns_gap = checked && expected.max_gap_ns.is_none();
        let state = if checked && !learns_gap {
            HealthState::Ok
        } else {
            HealthState::Unchecked
        };
        Self {
            health: TopicHealth {
                state,
                expected,
                ..TopicHealth::default()
            },
            checked,
            learns_rate,
            learns_gap,
            learnt: false,
            first_ns: None,
            last_ns: None,
            rate_from_ns: 0,
            samples: 0,
            window: RateWindow::default(),
            noticed: None,
            revision: 0,
        }
    }

    /// The health as of the last check.
    pub fn health(&self) -> &TopicHealth {
        &self.health
    }

    /// Goes up with each change of the state or the expectation.
    pub fn revision(&self) -> u32 {
        self.revision
    }

    /// When the newest sample was received, ns since the Unix epoch.
    pub fn last_sample_ns(&self) -> Option<u64> {
        self.last_ns
    }

    /// The longest silence now expected, in ns (given or learnt).
    pub fn max_gap_ns(&self) -> Option<u64> {
        self.health.expected.max_gap_ns
    }

    /// Counts a sample received at `t_ns`. A stalled topic is back: the change
    /// is handed out by the next [`Self::check`].
    pub fn saw(&mut self, t_ns: u64) {
        self.samples += 1;
        self.window.add(t_ns);
        if self.first_ns.is_none() {
            self.first_ns = Some(t_ns);
            self.rate_from_ns = t_ns;
        }
        if let Some(last) = self.last_ns {
            let gap = t_ns.saturating_sub(last);
            if gap > self.health.longest_gap_ns {
                self.health.longest_gap_ns = gap;
            }
            if self.health.state == HealthState::Stalled {
                self.noticed = Some(self.enter(HealthState::Ok, t_ns, Some(gap)));
                self.rate_from_ns = t_ns;
                if !self.learnt {
                    // A rate learnt across a stall would be too low: learn it anew.
                    self.first_ns = Some(t_ns);
                    self.samples = 1;
                }
            }
        }
        let first = self.first_ns.unwrap_or(t_ns);
        self.last_ns = Some(self.last_ns.map_or(t_ns, |last| last.max(t_ns)));
        if !self.learnt && (self.learns_rate || self.learns_gap) {
            self.learn(first, t_ns);
        }
    }

    /// Where the topic stands at `now_ns` (the newest time the caller has seen samples up
    /// to); a change since the last check, if any.
    pub fn check(&mut self, now_ns: u64) -> Option<Change> {
        if let Some(change) = self.noticed.take() {
            return Some(change);
        }
        if !self.checked {
            return None;
        }
        let expected = &self.health.expected;
        let target = match self.last_ns {
            // Whether a required topic came at all is its requirement's to tell
            // ([`crate::RequiredWatch`]): a pattern may stand for several topics.
            None => return None,
            Some(last) => match expected.max_gap_ns {
                Some(gap) if now_ns.saturating_sub(last) > gap => (HealthState::Stalled, last),
                None => return None,
                Some(_) => match self.rate_short(now_ns) {
                    Some(true) => (HealthState::Slow, now_ns - RATE_WINDOW.as_nanos() as u64),
                    Some(false) | None if self.health.state == HealthState::Slow => {
                        (HealthState::Ok, now_ns)
                    }
                    _ if self.health.state == HealthState::Unchecked => (HealthState::Ok, now_ns),
                    _ => return None,
                },
            },
        };
        if target.0 == self.health.state {
            return None;
        }
        if self.health.state == HealthState::Unchecked && target.0 == HealthState::Ok {
            // Learnt: checked from now on, which is no change of health.
            self.health.state = HealthState::Ok;
            self.revision = self.revision.wrapping_add(1);
            return None;
        }
        Some(self.enter(target.0, target.1, None))
    }

    /// Whether the last whole second held fewer samples than `min_rate`; `None` when the
    /// rate is not checked or the topic has not been watched for a whole window yet.
    fn rate_short(&mut self, now_ns: u64) -> Option<bool> {
        let min_rate = self.health.expected.min_rate?;
        self.first_ns?;
        // The window must lie after the slot of its first sample (only partly counted),
        // and after the last stall.
        let window_start =
            (now_ns / SLOT_NS).checked_sub(RATE_WINDOW.as_nanos() as u64 / SLOT_NS)?;
        if window_start <= self.rate_from_ns / SLOT_NS {
            return None;
        }
        Some(f64::from(self.window.last_second(now_ns)) < min_rate * RATE_WINDOW.as_secs_f64())
    }

    fn enter(&mut self, to: HealthState, since_ns: u64, gap_ns: Option<u64>) -> Change {
        let from = self.health.state;
        self.health.state = to;
        self.revision = self.revision.wrapping_add(1);
        // Coming back to ok from unchecked or a problem is not news "since" anything.
        self.health.since_ns = to.is_bad().then_some(since_ns);
        match to {
            HealthState::Stalled => self.health.stalls += 1,
            HealthState::Slow => self.health.slow_spells += 1,
            _ => {}
        }
        if to.is_bad() && to > self.health.worst {
            self.health.worst = to;
        }
        Change {
            from,
            to,
            since_ns,
            gap_ns,
        }
    }

    /// Learns the expectation from the topic's first samples: their mean period (a
    /// polled topic's samples come in bursts, so single periods say little).
    fn learn(&mut self, first: u64, t_ns: u64) {
        let span = t_ns.saturating_sub(first);
        if self.samples < LEARN_SAMPLES || span < LEARN_SPAN_NS {
            return;
        }
        self.learnt = true;
        self.revision = self.revision.wrapping_add(1);
        let period = span / (self.samples - 1);
        let rate = 1e9 / period.max(1) as f64;
        let expected = &mut self.health.expected;
        expected.learnt_rate = Some(rate);
        if self.learns_gap {
            expected.max_gap_ns = Some((period * LEARNT_GAP_PERIODS).max(LEARNT_GAP_MIN_NS));
        }
        if self.learns_rate && rate >= LEARNT_RATE_CHECKED_FROM {
            expected.min_rate = Some(rate * LEARNT_RATE_SHARE);
        }
    }
}

#[cfg(test)]
mod tests;
