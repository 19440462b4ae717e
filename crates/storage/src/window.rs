//! A window of log time: the one type for "the minute around an event" that triggers,
//! incidents, pins, cuts, rules and a pre-trigger session's buffer share; what a window
//! keeps when its asker does not say (one table); and the checked conversion of a
//! window's sides as they come over the wire, so that no value wraps.
//!
//! | who asks                                       | before           | after |
//! |------------------------------------------------|------------------|-------|
//! | a trigger of a session on disk ([`ON_DISK`])    | 30 s             | 0 s   |
//! | a trigger of a pre-trigger session ([`IN_MEMORY`]) | the whole buffer | 0 s   |
//! | a `[[rule]]` ([`RULE`])                         | 30 s             | 10 s  |
//!
//! A side is at most [`MAX_SIDE`]; a window never reaches past [`LATEST_NS`].

use std::time::Duration;

/// The latest log time a window reaches: the most nanoseconds a signed 64-bit integer
/// holds (April 2262), which the catalog and other languages' MCAP readers keep times in.
pub const LATEST_NS: u64 = i64::MAX as u64;

/// The longest side (before or after its moment) a window may have. A longer one is a
/// unit mistake (milliseconds read as seconds) rather than a plan: a week is more than a
/// vehicle's disk ring holds, and waiting longer for a window's end would pin its files
/// for as long.
pub const MAX_SIDE: Duration = Duration::from_secs(7 * 24 * 3600);

/// A span of log time, ns since the Unix epoch, both ends included.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct LogWindow {
    /// The first log time in it.
    pub start_ns: u64,
    /// The last log time in it.
    pub end_ns: u64,
}

impl LogWindow {
    /// From `before` a moment to `after` it, saturating at the epoch and at [`LATEST_NS`].
    pub fn around(moment_ns: u64, before: Duration, after: Duration) -> Self {
        Self::from_start(moment_ns.saturating_sub(nanos(before)), moment_ns, after)
    }

    /// From `start_ns` to `after` past a moment (saturating at [`LATEST_NS`]): a window
    /// whose start is known another way (the oldest message a buffer holds).
    pub fn from_start(start_ns: u64, moment_ns: u64, after: Duration) -> Self {
        let end_ns = moment_ns.saturating_add(nanos(after)).min(LATEST_NS);
        Self {
            start_ns: start_ns.min(end_ns),
            end_ns,
        }
    }

    /// Whether `time_ns` lies in the window.
    pub fn contains(&self, time_ns: u64) -> bool {
        (self.start_ns..=self.end_ns).contains(&time_ns)
    }

    /// Whether some of `other` lies in the window.
    pub fn overlaps(&self, other: &LogWindow) -> bool {
        other.start_ns <= self.end_ns && other.end_ns >= self.start_ns
    }

    /// Whether some of a file's span lies in the window; an end not known (a file open,
    /// or left so by a crash) reaches every later time, a start not known every earlier.
    pub fn overlaps_span(&self, first_ns: Option<u64>, last_ns: Option<u64>) -> bool {
        first_ns.is_none_or(|first| first <= self.end_ns)
            && last_ns.is_none_or(|last| last >= self.start_ns)
    }

    /// The smallest window holding both.
    pub fn union(&self, other: &LogWindow) -> LogWindow {
        LogWindow {
            start_ns: self.start_ns.min(other.start_ns),
            end_ns: self.end_ns.max(other.end_ns),
        }
    }

    /// How long it is.
    pub fn span(&self) -> Duration {
        Duration::from_nanos(self.end_ns.saturating_sub(self.start_ns))
    }

    /// How far it reaches before `moment_ns`, and after it.
    pub fn sides(&self, moment_ns: u64) -> (Duration, Duration) {
        (
            Duration::from_nanos(moment_ns.saturating_sub(self.start_ns)),
            Duration::from_nanos(self.end_ns.saturating_sub(moment_ns)),
        )
    }
}

/// `duration` in nanoseconds, saturating at `u64::MAX` (never wrapping, as `as u64` would).
pub fn nanos(duration: Duration) -> u64 {
    u64::try_from(duration.as_nanos()).unwrap_or(u64::MAX)
}

/// `duration` in milliseconds, saturating at `u64::MAX`: for a side passed on to where
/// it is checked ([`side_from_ms`]), so that a huge one is refused there, never wrapped on
/// its way.
pub fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}

/// Where a window starts when its asker gives no `before`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reach {
    /// This long before the moment.
    Fixed(Duration),
    /// As far back as the pre-trigger buffer holds.
    WholeBuffer,
}

/// What a window keeps when its asker does not say.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DefaultWindow {
    /// Before the moment.
    pub before: Reach,
    /// After the moment.
    pub after: Duration,
}

/// How far before its moment an incident of a session on disk keeps, when its trigger
/// does not say.
pub const ON_DISK_BEFORE: Duration = Duration::from_secs(30);

/// A trigger of a session on disk (an incident): `rec trigger`, the web page, remote
/// control and the fleet.
pub const ON_DISK: DefaultWindow = DefaultWindow {
    before: Reach::Fixed(ON_DISK_BEFORE),
    after: Duration::ZERO,
};

/// A trigger of a pre-trigger session, which keeps its recent past in memory.
pub const IN_MEMORY: DefaultWindow = DefaultWindow {
    before: Reach::WholeBuffer,
    after: Duration::ZERO,
};

/// How far before and after its firing a `[[rule]]`'s incident keeps, when its
/// `before` and `after` keys do not say.
pub const RULE_BEFORE: Duration = Duration::from_secs(30);
/// See [`RULE_BEFORE`].
pub const RULE_AFTER: Duration = Duration::from_secs(10);

/// A `[[rule]]`'s incident (its `before` and `after` keys).
pub const RULE: DefaultWindow = DefaultWindow {
    before: Reach::Fixed(RULE_BEFORE),
    after: RULE_AFTER,
};

/// A side of a window out of range: refused, never wrapped.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "the window's {side} ({given}) is longer than the {} recd accepts on either side of a moment (a unit mistake?)",
    humanize(MAX_SIDE)
)]
pub struct SideTooLong {
    /// Which side (`before`, `after`), as the asker named it.
    pub side: &'static str,
    /// What was given, in words.
    pub given: String,
}

/// A side given in milliseconds (as the control protocol carries it), checked.
pub fn side_from_ms(side: &'static str, ms: u64) -> Result<Duration, SideTooLong> {
    checked_side(side, Duration::from_millis(ms))
}

/// A side given as a duration, checked, in milliseconds (as the control protocol carries
/// it).
pub fn side_to_ms(side: &'static str, duration: Duration) -> Result<u64, SideTooLong> {
    let checked = checked_side(side, duration)?;
    Ok(u64::try_from(checked.as_millis()).expect("MAX_SIDE in ms fits in u64"))
}

/// `duration` when it is at most [`MAX_SIDE`].
pub fn checked_side(side: &'static str, duration: Duration) -> Result<Duration, SideTooLong> {
    if duration > MAX_SIDE {
        return Err(SideTooLong {
            side,
            given: humanize(duration),
        });
    }
    Ok(duration)
}

/// A duration in words: whole days, hours, minutes or seconds where it is one, else
/// seconds with milliseconds.
fn humanize(duration: Duration) -> String {
    let seconds = duration.as_secs();
    let whole = duration.subsec_nanos() == 0;
    match seconds {
        0 => format!("{} ms", duration.as_millis()),
        s if whole && s % 86_400 == 0 => format!("{} days", s / 86_400),
        s if whole && s % 3600 == 0 => format!("{} h", s / 3600),
        s if whole && s % 60 == 0 => format!("{} min", s / 60),
        s if whole => format!("{s} s"),
        _ => format!("{:.3} s", duration.as_secs_f64()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: u64 = 1_000_000_000;

    #[test]
    fn around_saturates_at_the_epoch_and_at_the_latest_time() {
        let window = LogWindow::around(100 * S, Duration::from_secs(30), Duration::from_secs(5));
        assert_eq!((window.start_ns, window.end_ns), (70 * S, 105 * S));
        let early = LogWindow::around(S, Duration::from_secs(30), Duration::ZERO);
        assert_eq!((early.start_ns, early.end_ns), (0, S));
        let late = LogWindow::around(LATEST_NS - S, Duration::ZERO, Duration::from_secs(5));
        assert_eq!(late.end_ns, LATEST_NS);
        let huge = LogWindow::around(u64::MAX, Duration::MAX, Duration::MAX);
        assert_eq!((huge.start_ns, huge.end_ns), (0, LATEST_NS));
        assert_eq!(
            window.sides(100 * S),
            (Duration::from_secs(30), Duration::from_secs(5))
        );
        assert_eq!(window.span(), Duration::from_secs(35));
    }

    #[test]
    fn a_start_known_otherwise_never_passes_the_end() {
        let window = LogWindow::from_start(40 * S, 100 * S, Duration::from_secs(1));
        assert_eq!((window.start_ns, window.end_ns), (40 * S, 101 * S));
        let after_its_end = LogWindow::from_start(LATEST_NS, LATEST_NS - S, Duration::ZERO);
        assert!(after_its_end.start_ns <= after_its_end.end_ns);
    }

    #[test]
    fn both_ends_are_in_the_window_and_unknown_ends_reach_everything() {
        let window = LogWindow {
            start_ns: 10,
            end_ns: 20,
        };
        assert!(window.contains(10) && window.contains(20) && !window.contains(21));
        assert!(!window.contains(9));
        let touching = LogWindow {
            start_ns: 20,
            end_ns: 30,
        };
        let apart = LogWindow {
            start_ns: 21,
            end_ns: 30,
        };
        assert!(window.overlaps(&touching) && touching.overlaps(&window));
        assert!(!window.overlaps(&apart) && !apart.overlaps(&window));
        assert!(window.overlaps_span(Some(5), None), "an open file");
        assert!(window.overlaps_span(None, None));
        assert!(!window.overlaps_span(Some(21), None));
        assert!(!window.overlaps_span(Some(0), Some(9)));
        assert!(window.overlaps_span(Some(0), Some(10)));
        assert_eq!(
            window.union(&apart),
            LogWindow {
                start_ns: 10,
                end_ns: 30
            }
        );
    }

    #[test]
    fn sides_beyond_a_week_are_refused_in_words_never_wrapped() {
        assert_eq!(side_from_ms("after", 0), Ok(Duration::ZERO));
        assert_eq!(
            side_from_ms("after", MAX_SIDE.as_millis() as u64),
            Ok(MAX_SIDE)
        );
        let refused = side_from_ms("after", 1_000_000_000_000_000_000).unwrap_err();
        assert_eq!(
            refused.to_string(),
            "the window's after (1000000000000000 s) is longer than the 7 days recd accepts on either side of a moment (a unit mistake?)"
        );
        let refused = side_to_ms("--before", Duration::from_secs(1 << 62)).unwrap_err();
        assert_eq!(refused.side, "--before");
        assert_eq!(side_to_ms("--after", Duration::from_millis(1500)), Ok(1500));
        assert_eq!(humanize(Duration::from_secs(90_000)), "25 h");
        assert_eq!(
            humanize(Duration::from_millis(8_000_000_001)),
            "8000000.001 s"
        );
    }

    #[test]
    fn the_defaults_are_the_documented_table() {
        assert_eq!(ON_DISK.before, Reach::Fixed(Duration::from_secs(30)));
        assert_eq!(IN_MEMORY.before, Reach::WholeBuffer);
        assert_eq!(
            (RULE.before, RULE.after),
            (
                Reach::Fixed(Duration::from_secs(30)),
                Duration::from_secs(10)
            )
        );
        assert_eq!(
            (ON_DISK.after, IN_MEMORY.after),
            (Duration::ZERO, Duration::ZERO)
        );
    }
}
