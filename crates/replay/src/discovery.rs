//! Waiting for subscribers before the first message (`--wait-subscribers`).
//!
//! A DDS writer's first messages reach only the readers it has matched when they leave,
//! and a Zenoh put only the subscribers whose interest it knows: a node that was running
//! before the playback would miss its start. So by default a playback waits for
//! discovery to settle on its DDS and Zenoh outputs: until no played topic's count of
//! subscribers changed for [`DISCOVERY_SETTLED`], within [`DISCOVERY_BOUND`].
//! iceoryx2 services need no discovery and are not waited for by default.

use std::time::{Duration, Instant};

/// Discovery has settled once no played DDS or Zenoh topic's subscriber count changed for
/// this long (a participant found on loopback is matched within a few hundred
/// milliseconds, its readers with it).
pub const DISCOVERY_SETTLED: Duration = Duration::from_millis(1000);

/// The longest a playback waits by default for discovery to settle.
pub const DISCOVERY_BOUND: Duration = Duration::from_secs(5);

/// How often the subscriber counts are looked at while waiting.
const POLL: Duration = Duration::from_millis(10);

/// How a playback waits for subscribers before its first message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SubscriberWait {
    /// Until no DDS or Zenoh topic's subscriber count changed for [`DISCOVERY_SETTLED`],
    /// at most [`DISCOVERY_BOUND`] (the default).
    #[default]
    Settled,
    /// Up to this long for every played topic to have a subscriber; zero does not wait.
    UpTo(Duration),
}

/// Follows subscriber counts until they have not changed for `settled`, or `bound`
/// passed since the first look.
#[derive(Debug)]
pub struct Settling {
    settled: Duration,
    deadline: Instant,
    last: Option<Vec<usize>>,
    changed: Instant,
}

impl Settling {
    /// Starts following at `now`.
    pub fn new(settled: Duration, bound: Duration, now: Instant) -> Self {
        Self {
            settled,
            deadline: now + bound,
            last: None,
            changed: now,
        }
    }

    /// Takes the counts seen at `now`; true once they have settled or the bound passed.
    pub fn done(&mut self, counts: Vec<usize>, now: Instant) -> bool {
        if self.last.as_ref() != Some(&counts) {
            if self.last.is_some() {
                self.changed = now;
            }
            self.last = Some(counts);
        }
        now >= self.deadline || now.duration_since(self.changed) >= self.settled
    }
}

/// Waits as `how` says, looking at `counts` (the subscriber count of each output, and
/// whether it is a DDS or Zenoh output that discovery concerns) until `stop` says so.
pub fn wait(how: SubscriberWait, counts: impl Fn() -> Vec<(usize, bool)>, stop: impl Fn() -> bool) {
    match how {
        SubscriberWait::UpTo(limit) => {
            let deadline = Instant::now() + limit;
            while Instant::now() < deadline && !stop() && counts().iter().any(|&(n, _)| n == 0) {
                std::thread::sleep(POLL);
            }
        }
        SubscriberWait::Settled => {
            let discovered = || -> Vec<usize> {
                counts()
                    .into_iter()
                    .filter_map(|(n, networked)| networked.then_some(n))
                    .collect()
            };
            if discovered().is_empty() {
                return;
            }
            let mut settling = Settling::new(DISCOVERY_SETTLED, DISCOVERY_BOUND, Instant::now());
            while !stop() && !settling.done(discovered(), Instant::now()) {
                std::thread::sleep(POLL);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Duration = Duration::from_millis(1);

    #[test]
    fn counts_that_stop_changing_have_settled() {
        let start = Instant::now();
        let mut settling = Settling::new(100 * MS, 1000 * MS, start);
        assert!(!settling.done(vec![0, 0], start));
        assert!(!settling.done(vec![0, 0], start + 50 * MS));
        // A reader matched: the moment starts over.
        assert!(!settling.done(vec![1, 0], start + 90 * MS));
        assert!(!settling.done(vec![1, 1], start + 150 * MS));
        assert!(!settling.done(vec![1, 1], start + 249 * MS));
        assert!(settling.done(vec![1, 1], start + 250 * MS));
    }

    #[test]
    fn nothing_found_settles_after_the_moment_and_churn_ends_at_the_bound() {
        let start = Instant::now();
        let mut quiet = Settling::new(100 * MS, 1000 * MS, start);
        assert!(quiet.done(vec![0], start + 100 * MS));

        let mut churning = Settling::new(100 * MS, 1000 * MS, start);
        for step in 0..20 {
            let now = start + step * 50 * MS;
            let done = churning.done(vec![step as usize], now);
            assert_eq!(done, now >= start + 1000 * MS, "step {step}");
        }
    }

    #[test]
    fn the_default_waits_only_for_discovered_outputs_and_zero_does_not_wait() {
        // Counts how often the outputs are looked at: once means no wait.
        let looks = std::cell::Cell::new(0);
        let count = |counts: Vec<(usize, bool)>| {
            let looks = &looks;
            move || {
                looks.set(looks.get() + 1);
                counts.clone()
            }
        };
        // Only an iceoryx2 output: nothing to discover.
        wait(SubscriberWait::Settled, count(vec![(0, false)]), || false);
        assert_eq!(looks.replace(0), 1);
        wait(
            SubscriberWait::UpTo(Duration::ZERO),
            count(vec![(0, true)]),
            || false,
        );
        assert_eq!(looks.replace(0), 0);
        // Stopped at once.
        wait(SubscriberWait::Settled, count(vec![(0, true)]), || true);
        assert_eq!(looks.replace(0), 1);
    }
}
