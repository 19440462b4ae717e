//! When a rule fires: on the rising edge of its condition, once it has held for `hold`,
//! and not again within `holdoff` of its previous firing.

use std::time::Duration;

/// The firing state machine of one rule, fed with each evaluated sample.
///
/// The condition must go from false (or nothing seen yet) to true, then stay true on
/// consecutive samples from the one where it became true (at `since`) to the first sample
/// whose log time is at least `since + hold`: that sample fires (with `hold` 0, the first
/// true sample does). After firing, a false sample is needed before it can fire again. A
/// firing within `holdoff` of the previous firing (`t - last < holdoff`) is suppressed and
/// consumes the edge: nothing fires while the condition stays true.
#[derive(Debug, Clone)]
pub struct Trigger {
    hold_ns: u64,
    holdoff_ns: u64,
    /// A false sample was seen since the last firing (or suppression); true at the start.
    armed: bool,
    /// The log time of the sample where the current true run began.
    since: Option<u64>,
    /// The log time of the last firing.
    last_fire: Option<u64>,
}

fn nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

impl Trigger {
    /// A trigger that has seen nothing yet.
    pub fn new(hold: Duration, holdoff: Duration) -> Trigger {
        Trigger {
            hold_ns: nanos(hold),
            holdoff_ns: nanos(holdoff),
            armed: true,
            since: None,
            last_fire: None,
        }
    }

    /// Feeds one evaluated sample: its log time and whether the condition holds. True when
    /// the rule fires now.
    pub fn step(&mut self, log_time_ns: u64, holds: bool) -> bool {
        if !holds {
            self.armed = true;
            self.since = None;
            return false;
        }
        if !self.armed {
            return false;
        }
        let since = *self.since.get_or_insert(log_time_ns);
        if log_time_ns < since.saturating_add(self.hold_ns) {
            return false;
        }
        self.armed = false;
        self.since = None;
        if let Some(last) = self.last_fire {
            if log_time_ns.saturating_sub(last) < self.holdoff_ns {
                return false;
            }
        }
        self.last_fire = Some(log_time_ns);
        true
    }

    /// The log time of the last firing, if any.
    pub fn last_fire(&self) -> Option<u64> {
        self.last_fire
    }
}
