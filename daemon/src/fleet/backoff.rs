//! How the link waits after the broker could not be reached: a second at first, doubling
//! to a minute, back to a second once connected; and what the log hears (one line when
//! an outage begins, one when it ends), so that a dead broker costs a line, not a flood.

use std::time::Duration;

/// The first wait after a failed connection.
pub const FIRST_WAIT: Duration = Duration::from_secs(1);
/// The longest wait between two tries.
pub const LONGEST_WAIT: Duration = Duration::from_secs(60);

/// The waits between tries, and whether an outage is under way.
#[derive(Debug)]
pub struct Backoff {
    next: Duration,
    /// When the outage began (seconds on a monotonic clock), while one is under way.
    since_s: Option<f64>,
}

impl Default for Backoff {
    fn default() -> Self {
        Self {
            next: FIRST_WAIT,
            since_s: None,
        }
    }
}

/// What a failure or a connection means for the log.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Told {
    /// Nothing to say: the outage goes on, or the link was up.
    Nothing,
    /// An outage began.
    Began,
    /// The outage that began this many seconds ago ended.
    Ended(f64),
}

impl Backoff {
    /// A try failed at `now_s`: how long to wait before the next, and what to tell.
    pub fn failed(&mut self, now_s: f64) -> (Duration, Told) {
        let wait = self.next;
        self.next = (self.next * 2).min(LONGEST_WAIT);
        let told = match self.since_s {
            Some(_) => Told::Nothing,
            None => {
                self.since_s = Some(now_s);
                Told::Began
            }
        };
        (wait, told)
    }

    /// The link connected at `now_s`.
    pub fn connected(&mut self, now_s: f64) -> Told {
        self.next = FIRST_WAIT;
        match self.since_s.take() {
            Some(since) => Told::Ended(now_s - since),
            None => Told::Nothing,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn waits_double_to_a_minute_and_an_outage_is_told_once_each_way() {
        let mut backoff = Backoff::default();
        assert_eq!(backoff.failed(10.0), (FIRST_WAIT, Told::Began));
        let waits: Vec<u64> = (0..8).map(|_| backoff.failed(11.0).0.as_secs()).collect();
        assert_eq!(waits, [2, 4, 8, 16, 32, 60, 60, 60]);
        assert_eq!(backoff.failed(12.0).1, Told::Nothing);
        assert_eq!(backoff.connected(70.0), Told::Ended(60.0));
        assert_eq!(backoff.connected(71.0), Told::Nothing);
        assert_eq!(backoff.failed(80.0), (FIRST_WAIT, Told::Began));
    }
}
