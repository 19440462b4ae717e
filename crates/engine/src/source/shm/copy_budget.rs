//! How much of the receive thread's time copying taken-back samples may use: in one pass
//! ([`COPY_SLICE`]) and over the long run ([`CopyBudget`]).

use std::time::{Duration, Instant};

/// The most time one receive pass spends copying (the copy goes on in the next pass): how
/// late copying can make the thread for every other topic.
pub(super) const COPY_SLICE: Duration = Duration::from_micros(500);

/// The receive thread's time for copying, over the long run.
///
/// Copying a FullHD frame takes 2 to 10 ms on a loaded machine; a receive thread that
/// copied every sample it took back while the writer stays behind (a disk slower than the
/// load) would come late to every other topic, and their queues would overflow. So
/// copying is paid from a budget that refills at [`COPY_SHARE`] of the time and holds at
/// most [`COPY_CREDIT`]: copies go on while there is credit (a slice may overdraw it), and
/// the loans to take back after that are given up, a copy under way with them, counted
/// as dropped. The writer would have had to drop as much anyway: it is behind by the
/// whole spill pool's worth or more whenever copies come this often.
pub(super) struct CopyBudget {
    credit: f64,
    refilled: Instant,
}

/// The share of the receive thread's time it may spend copying.
const COPY_SHARE: f64 = 0.25;
/// The most copying time saved up, so the longest stretch of copies with no pause.
const COPY_CREDIT: Duration = Duration::from_millis(8);

impl CopyBudget {
    /// A full budget.
    pub fn new(now: Instant) -> Self {
        Self {
            credit: COPY_CREDIT.as_secs_f64(),
            refilled: now,
        }
    }

    /// Whether copying may go on at `now`.
    pub fn allows(&mut self, now: Instant) -> bool {
        let earned = now.saturating_duration_since(self.refilled).as_secs_f64() * COPY_SHARE;
        self.credit = (self.credit + earned).min(COPY_CREDIT.as_secs_f64());
        self.refilled = now;
        self.credit > 0.0
    }

    /// Charges copying that took `took`.
    pub fn spend(&mut self, took: Duration) {
        self.credit -= took.as_secs_f64();
    }
}
#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copying_may_take_a_quarter_of_the_time_and_a_few_milliseconds_at_once() {
        let start = Instant::now();
        let mut budget = CopyBudget::new(start);
        assert!(budget.allows(start));
        budget.spend(Duration::from_millis(6));
        assert!(budget.allows(start), "2 ms left");
        budget.spend(Duration::from_millis(6));
        assert!(!budget.allows(start), "overdrawn by 4 ms");
        assert!(
            !budget.allows(start + Duration::from_millis(16)),
            "16 ms earn 4 ms"
        );
        assert!(budget.allows(start + Duration::from_millis(20)));
        // However long the thread copied nothing, it saves up no more than 8 ms.
        let later = start + Duration::from_secs(10);
        assert!(budget.allows(later));
        budget.spend(Duration::from_millis(8));
        assert!(!budget.allows(later));
    }
}
