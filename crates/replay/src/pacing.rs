//! When each message leaves: at its recorded time relative to the first, divided by the
//! rate, measured against one wall-clock origin so that sleeps do not add up to drift.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// How late a message may leave before it counts as late.
pub const LATE_AFTER: Duration = Duration::from_millis(1);

/// Paces messages by their recorded times.
#[derive(Debug)]
pub struct Pacer {
    rate: f64,
    /// Wall-clock time of recorded position 0 of the current pass.
    origin: Instant,
}

impl Pacer {
    /// Paces at `rate` (2.0 plays twice as fast) from `origin`, the wall-clock time of
    /// recorded position 0.
    pub fn new(rate: f64, origin: Instant) -> Self {
        Self { rate, origin }
    }

    /// When the message at recorded `position` (from the start of the pass) is due.
    pub fn due(&self, position: Duration) -> Instant {
        self.origin + position.div_f64(self.rate)
    }

    /// Starts a new pass (`--loop`) whose position 0 is `gap` after `position` of this one.
    pub fn restart_after(&mut self, position: Duration, gap: Duration) {
        self.origin = self.due(position) + gap.div_f64(self.rate);
    }
}

/// The longest single sleep, so that a cancel is noticed soon during a long pause.
const LONGEST_SLEEP: Duration = Duration::from_millis(100);

/// Sleeps until `due` (or until `cancel` is set); returns how late it is then (zero when
/// on time).
pub fn wait_until(due: Instant, cancel: &AtomicBool) -> Duration {
    loop {
        let now = Instant::now();
        if now >= due || cancel.load(Ordering::Relaxed) {
            return now.saturating_duration_since(due);
        }
        std::thread::sleep((due - now).min(LONGEST_SLEEP));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_are_scaled_by_the_rate_from_one_origin() {
        let pacer = Pacer::new(2.0, Instant::now());
        let span = pacer.due(Duration::from_secs(10)) - pacer.due(Duration::ZERO);
        assert_eq!(span, Duration::from_secs(5));
    }

    #[test]
    fn a_past_time_is_not_waited_for_and_reports_its_lateness() {
        let due = Instant::now();
        std::thread::sleep(Duration::from_millis(5));
        let cancel = AtomicBool::new(false);
        assert!(wait_until(due, &cancel) >= Duration::from_millis(5));
    }

    #[test]
    fn a_wait_ends_soon_after_a_cancel() {
        let cancel = AtomicBool::new(true);
        let started = Instant::now();
        wait_until(started + Duration::from_secs(60), &cancel);
        assert!(started.elapsed() < Duration::from_secs(1));
    }
}
