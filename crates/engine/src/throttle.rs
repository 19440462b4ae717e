//! Rate limits and downsampling: which of a topic's received samples it keeps.
//!
//! The rule, per topic, in the receive thread:
//!
//! - **Downsampling** (`downsample = n`) keeps the 1st, (n+1)th, (2n+1)th … received
//!   sample.
//! - **A rate limit** (`max_rate = r`, period P = 1/r) then keeps the first sample and
//!   lays a grid of slots P apart from it. A sample is kept when its receive time is no
//!   more than P/20 before the next slot and at least 0.95·P after the last kept sample;
//!   keeping it moves the next slot on by P (to one period after it when the topic was
//!   silent for longer than a slot, so a gap is never caught up with a burst). Kept
//!   samples are therefore never closer than 0.95·P, and over any stretch of time no
//!   more than r per second are kept, plus one.
//!
//! A sample the rule does not keep is released at once, never copied, and counted as
//! `filtered`.

use globset::{Glob, GlobMatcher};
use serde::{Deserialize, Serialize};

/// What is kept of the topics a glob pattern matches (`rec start --max-rate`,
/// `--downsample`, `[[topic]]` in recd.toml).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ThrottleRule {
    /// Glob over topic names, as `--topics` takes them (`*` matches `/` too).
    pub topic: String,
    /// Keep at most this many samples per second.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_rate: Option<f64>,
    /// Keep one sample in this many.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub downsample: Option<u32>,
}

/// Why a throttle rule cannot be used.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ThrottleError {
    /// Not `GLOB=VALUE`.
    #[error("{0:?} is not GLOB=VALUE (e.g. 'camera/*=5')")]
    NotAnAssignment(String),
    /// The glob does not parse.
    #[error("invalid topic pattern {pattern:?}: {reason}")]
    Pattern {
        /// The pattern as given.
        pattern: String,
        /// Why it is invalid.
        reason: String,
    },
    /// A rate that is not a positive number of samples per second.
    #[error("max rate {0:?} of topic {1:?} is not a positive number of samples per second")]
    Rate(String, String),
    /// A downsampling factor that is not a whole number of at least 1.
    #[error("downsample {0:?} of topic {1:?} is not a whole number of at least 1")]
    Downsample(String, String),
    /// A rule that limits nothing.
    #[error("the rule for topic {0:?} sets neither max_rate nor downsample")]
    Empty(String),
}

impl ThrottleRule {
    /// Parses `rec start --max-rate 'GLOB=HZ'`.
    pub fn max_rate(text: &str) -> Result<Self, ThrottleError> {
        let (topic, value) = split_assignment(text)?;
        let rule = Self {
            topic: topic.to_string(),
            max_rate: Some(
                value
                    .parse()
                    .map_err(|_| ThrottleError::Rate(value.into(), topic.into()))?,
            ),
            downsample: None,
        };
        rule.check()?;
        Ok(rule)
    }

    /// Parses `rec start --downsample 'GLOB=N'`.
    pub fn downsample(text: &str) -> Result<Self, ThrottleError> {
        let (topic, value) = split_assignment(text)?;
        let rule = Self {
            topic: topic.to_string(),
            max_rate: None,
            downsample: Some(
                value
                    .parse()
                    .map_err(|_| ThrottleError::Downsample(value.into(), topic.into()))?,
            ),
        };
        rule.check()?;
        Ok(rule)
    }

    /// Checks what parsing cannot: the pattern, and values that keep something.
    pub fn check(&self) -> Result<(), ThrottleError> {
        self.compile().map(drop)
    }

    /// The rule's glob, compiled, once its values are checked.
    fn compile(&self) -> Result<GlobMatcher, ThrottleError> {
        let glob = Glob::new(&self.topic).map_err(|e| ThrottleError::Pattern {
            pattern: self.topic.clone(),
            reason: e.kind().to_string(),
        })?;
        if let Some(rate) = self.max_rate {
            if !(rate.is_finite() && rate > 0.0) {
                return Err(ThrottleError::Rate(rate.to_string(), self.topic.clone()));
            }
        }
        if self.downsample == Some(0) {
            return Err(ThrottleError::Downsample("0".into(), self.topic.clone()));
        }
        if self.max_rate.is_none() && self.downsample.is_none() {
            return Err(ThrottleError::Empty(self.topic.clone()));
        }
        Ok(glob.compile_matcher())
    }
}

fn split_assignment(text: &str) -> Result<(&str, &str), ThrottleError> {
    match text.rsplit_once('=') {
        Some((topic, value)) if !topic.is_empty() && !value.is_empty() => Ok((topic, value.trim())),
        _ => Err(ThrottleError::NotAnAssignment(text.to_string())),
    }
}

/// Compiled [`ThrottleRule`]s, matched in order: the first rule that sets a rate gives a
/// topic its rate, the first that sets downsampling its factor.
#[derive(Debug, Clone, Default)]
pub(crate) struct Throttles {
    rules: Vec<(GlobMatcher, ThrottleRule)>,
}

impl Throttles {
    /// Compiles `rules`.
    pub fn new(rules: &[ThrottleRule]) -> Result<Self, ThrottleError> {
        let rules = rules
            .iter()
            .map(|rule| Ok((rule.compile()?, rule.clone())))
            .collect::<Result<_, ThrottleError>>()?;
        Ok(Self { rules })
    }

    /// The throttle of the topic selected by `name`; `None` keeps every sample.
    pub fn for_topic(&self, name: &str) -> Option<Throttle> {
        let matching = || {
            self.rules
                .iter()
                .filter(|(glob, _)| glob.is_match(name))
                .map(|(_, rule)| rule)
        };
        let max_rate = matching().find_map(|rule| rule.max_rate);
        let downsample = matching().find_map(|rule| rule.downsample);
        Throttle::new(max_rate, downsample.unwrap_or(1))
    }
}

/// One topic's keep-or-filter state, owned by its receive thread.
#[derive(Debug, Clone)]
pub(crate) struct Throttle {
    every: u64,
    seen: u64,
    period_ns: u64,
    next_slot_ns: Option<u64>,
    last_kept_ns: u64,
}

impl Throttle {
    fn new(max_rate: Option<f64>, every: u32) -> Option<Self> {
        let period_ns = max_rate.map_or(0, |rate| (1e9 / rate).round() as u64);
        (every > 1 || period_ns > 0).then_some(Self {
            every: u64::from(every.max(1)),
            seen: 0,
            period_ns,
            next_slot_ns: None,
            last_kept_ns: 0,
        })
    }

    /// Whether the next sample, received at `at_ns`, would be kept (nothing changes).
    pub fn would_keep(&self, at_ns: u64) -> bool {
        if !self.seen.is_multiple_of(self.every) {
            return false;
        }
        let Some(next_slot) = self.next_slot_ns else {
            return true;
        };
        let slack = self.period_ns / 20;
        at_ns + slack >= next_slot && at_ns >= self.last_kept_ns + (self.period_ns - slack)
    }

    /// Notes a sample received at `at_ns` and whether it was kept.
    pub fn note(&mut self, at_ns: u64, kept: bool) {
        self.seen += 1;
        if !kept || self.period_ns == 0 {
            return;
        }
        let next = self.next_slot_ns.map_or(at_ns, |slot| slot) + self.period_ns;
        self.next_slot_ns = Some(if next <= at_ns {
            at_ns + self.period_ns
        } else {
            next
        });
        self.last_kept_ns = at_ns;
    }

    /// Decides about a sample received at `at_ns`: true keeps it.
    pub fn keeps(&mut self, at_ns: u64) -> bool {
        let kept = self.would_keep(at_ns);
        self.note(at_ns, kept);
        kept
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: u64 = 1_000_000;

    fn throttle(rules: &[ThrottleRule], topic: &str) -> Option<Throttle> {
        Throttles::new(rules).unwrap().for_topic(topic)
    }

    #[test]
    fn downsampling_keeps_the_first_and_then_every_nth() {
        let mut t = throttle(&[ThrottleRule::downsample("/points=3").unwrap()], "/points").unwrap();
        let kept: Vec<u64> = (0..10).filter(|&i| t.keeps(i * MS)).collect();
        assert_eq!(kept, [0, 3, 6, 9]);
    }

    #[test]
    fn a_30_hz_stream_limited_to_5_hz_keeps_every_sixth_even_with_jitter() {
        let mut t = throttle(
            &[ThrottleRule::max_rate("camera/*=5").unwrap()],
            "camera/front",
        )
        .unwrap();
        // 180 frames 33.3 ms apart, each received up to 3 ms late.
        let times: Vec<u64> = (0..180u64)
            .map(|i| i * 100 * MS / 3 + (i * 7 % 4) * MS)
            .collect();
        let kept: Vec<u64> = times.iter().copied().filter(|&at| t.keeps(at)).collect();
        assert_eq!(kept.len(), 30);
        assert!(kept.windows(2).all(|w| w[1] - w[0] >= 190 * MS), "{kept:?}");
    }

    #[test]
    fn after_a_silence_the_grid_restarts_instead_of_catching_up() {
        let mut t = throttle(&[ThrottleRule::max_rate("x=10").unwrap()], "x").unwrap();
        assert!(t.keeps(0));
        assert!(t.keeps(100 * MS));
        // Silent for a second, then 1 kHz: slots from 1100 ms on, each taken by the
        // first sample within its P/20 slack (5 ms early); no burst to catch up.
        let kept: Vec<u64> = (1100..1400)
            .map(|ms| ms * MS)
            .filter(|&at| t.keeps(at))
            .collect();
        assert_eq!(kept, [1100 * MS, 1195 * MS, 1295 * MS, 1395 * MS]);
    }

    #[test]
    fn samples_of_one_pass_share_a_time_and_only_the_first_is_kept() {
        let mut t = throttle(&[ThrottleRule::max_rate("x=5").unwrap()], "x").unwrap();
        assert!(t.keeps(0));
        assert!(!t.keeps(0));
        // 5 ms early for the 200 ms slot: within the P/20 slack.
        assert!(t.keeps(195 * MS));
    }

    #[test]
    fn rules_combine_first_match_per_setting_and_unmatched_topics_are_free() {
        let rules = [
            ThrottleRule::max_rate("camera/front=2").unwrap(),
            ThrottleRule::max_rate("camera/*=5").unwrap(),
            ThrottleRule::downsample("camera/*=2").unwrap(),
        ];
        let front = throttle(&rules, "camera/front").unwrap();
        assert_eq!((front.period_ns, front.every), (500 * MS, 2));
        assert!(throttle(&rules, "/imu").is_none());
    }

    #[test]
    fn bad_rules_are_named() {
        assert!(matches!(
            ThrottleRule::max_rate("camera/*"),
            Err(ThrottleError::NotAnAssignment(_))
        ));
        assert!(matches!(
            ThrottleRule::max_rate("camera/*=fast"),
            Err(ThrottleError::Rate(..))
        ));
        assert!(matches!(
            ThrottleRule::max_rate("camera/*=0"),
            Err(ThrottleError::Rate(..))
        ));
        assert!(matches!(
            ThrottleRule::downsample("x=0"),
            Err(ThrottleError::Downsample(..))
        ));
        assert!(matches!(
            ThrottleRule::downsample("a[=2"),
            Err(ThrottleError::Pattern { .. })
        ));
        let empty = ThrottleRule {
            topic: "x".into(),
            max_rate: None,
            downsample: None,
        };
        assert_eq!(empty.check(), Err(ThrottleError::Empty("x".into())));
    }
}
