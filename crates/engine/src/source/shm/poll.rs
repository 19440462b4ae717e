//! When to poll a subscriber that has no event service to wake the recorder.
//!
//! Each `receive()` costs about as much when it finds nothing as when it takes a sample, so
//! polling 100 subscribers every 2 ms is mostly wasted work. A subscriber only has to be
//! polled before its buffer fills up: the schedule estimates how fast samples arrive and
//! polls when the buffer would be a quarter full, within configured bounds.

use std::time::{Duration, Instant};

/// Polls are planned for when the buffer would hold this share of its capacity, leaving
/// room for the rate to quadruple in between.
const FILL_TARGET: f64 = 0.25;

/// The planned polls of one subscriber.
#[derive(Debug, Clone)]
pub(crate) struct PollSchedule {
    buffer: usize,
    /// Samples per second, as lately seen.
    rate: f64,
    last_poll: Instant,
    next_poll: Instant,
    /// Whether it was polled yet: the first poll is due when the subscriber is made,
    /// which may be a whole discovery round before the thread gets to it.
    polled: bool,
}

/// The shortest and the longest time between two polls of a subscriber.
#[derive(Debug, Clone, Copy)]
pub(crate) struct PollBounds {
    pub shortest: Duration,
    pub longest: Duration,
}

impl PollBounds {
    /// The bounds of a subscriber whose event service wakes the receive thread: its
    /// schedule only catches a publisher that does not notify, so it is polled at most
    /// every [`EVENTS_POLL_FACTOR`] × `longest` (still sooner when its rate says so).
    pub fn with_events(self) -> Self {
        Self {
            longest: self.longest * EVENTS_POLL_FACTOR,
            ..self
        }
    }
}

/// How much longer than `longest` a subscriber with an event service may go unpolled.
const EVENTS_POLL_FACTOR: u32 = 16;

impl PollSchedule {
    /// A subscriber whose buffer holds `buffer` samples, due at once.
    pub fn new(buffer: usize, now: Instant) -> Self {
        Self {
            buffer: buffer.max(1),
            rate: 0.0,
            last_poll: now,
            next_poll: now,
            polled: false,
        }
    }

    /// When the subscriber should be polled next.
    pub fn next_poll(&self) -> Instant {
        self.next_poll
    }

    /// When the subscriber should be polled next by its own schedule: `None` before its
    /// first poll.
    pub fn scheduled_poll(&self) -> Option<Instant> {
        self.polled.then_some(self.next_poll)
    }

    /// Records a poll at `now` that took `samples`; `held_back` says samples were left
    /// waiting (the writer still held as many as iceoryx2 lends). Plans the next poll.
    pub fn polled(&mut self, now: Instant, samples: u64, held_back: bool, bounds: PollBounds) {
        let elapsed = now
            .saturating_duration_since(self.last_poll)
            .as_secs_f64()
            .max(1e-4);
        let observed = samples as f64 / elapsed;
        // Rise at once, fall gently: a burst must not be met with a long sleep.
        self.rate = if observed >= self.rate {
            observed
        } else {
            (self.rate + observed) / 2.0
        };
        let interval = if held_back || samples >= self.buffer as u64 {
            bounds.shortest
        } else if self.rate < 1e-3 {
            bounds.longest
        } else {
            Duration::from_secs_f64(self.buffer as f64 * FILL_TARGET / self.rate)
                .clamp(bounds.shortest, bounds.longest)
        };
        self.last_poll = now;
        self.next_poll = now + interval;
        self.polled = true;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const BOUNDS: PollBounds = PollBounds {
        shortest: Duration::from_millis(2),
        longest: Duration::from_millis(50),
    };

    fn interval(schedule: &PollSchedule, now: Instant) -> Duration {
        schedule.next_poll() - now
    }

    #[test]
    fn polls_before_the_buffer_is_a_quarter_full() {
        let start = Instant::now();
        let mut schedule = PollSchedule::new(40, start);
        // 1 kHz: 10 samples per 10 ms; a quarter of 40 arrives in 10 ms.
        let now = start + Duration::from_millis(10);
        schedule.polled(now, 10, false, BOUNDS);
        assert_eq!(interval(&schedule, now), Duration::from_millis(10));
    }

    #[test]
    fn a_subscriber_has_a_schedule_of_its_own_only_once_polled() {
        let start = Instant::now();
        let mut schedule = PollSchedule::new(4, start);
        assert_eq!(
            schedule.scheduled_poll(),
            None,
            "due at once, by no schedule"
        );
        let now = start + Duration::from_millis(300);
        schedule.polled(now, 1, false, BOUNDS);
        assert_eq!(schedule.scheduled_poll(), Some(schedule.next_poll()));
    }

    #[test]
    fn silent_and_slow_topics_wait_the_longest_fast_ones_the_shortest() {
        let start = Instant::now();
        let mut silent = PollSchedule::new(16, start);
        let now = start + Duration::from_millis(2);
        silent.polled(now, 0, false, BOUNDS);
        assert_eq!(interval(&silent, now), BOUNDS.longest);

        let mut slow = PollSchedule::new(256, start);
        slow.polled(now, 1, false, BOUNDS);
        assert_eq!(interval(&slow, now), BOUNDS.longest);

        let mut flooded = PollSchedule::new(2, start);
        flooded.polled(now, 2, false, BOUNDS);
        assert_eq!(interval(&flooded, now), BOUNDS.shortest, "buffer was full");

        let mut held = PollSchedule::new(256, start);
        held.polled(now, 1, true, BOUNDS);
        assert_eq!(
            interval(&held, now),
            BOUNDS.shortest,
            "samples left waiting"
        );
    }

    #[test]
    fn a_subscriber_with_an_event_service_is_polled_sixteen_times_less_often_while_quiet() {
        let start = Instant::now();
        let now = start + Duration::from_millis(2);
        let mut quiet = PollSchedule::new(16, start);
        quiet.polled(now, 0, false, BOUNDS.with_events());
        assert_eq!(interval(&quiet, now), BOUNDS.longest * EVENTS_POLL_FACTOR);

        let mut flooded = PollSchedule::new(16, start);
        flooded.polled(now, 16, false, BOUNDS.with_events());
        assert_eq!(
            interval(&flooded, now),
            BOUNDS.shortest,
            "its buffer was full: a publisher does not notify"
        );
    }

    #[test]
    fn a_burst_shortens_the_wait_at_once_and_silence_lengthens_it_gradually() {
        let start = Instant::now();
        let mut schedule = PollSchedule::new(100, start);
        let mut now = start + Duration::from_millis(50);
        schedule.polled(now, 5, false, BOUNDS); // 100/s
        assert_eq!(interval(&schedule, now), BOUNDS.longest);
        now += Duration::from_millis(50);
        schedule.polled(now, 50, false, BOUNDS); // 1000/s
        assert_eq!(interval(&schedule, now), Duration::from_millis(25));
        now += Duration::from_millis(25);
        schedule.polled(now, 0, false, BOUNDS); // estimate halves to 500/s
        assert_eq!(interval(&schedule, now), Duration::from_millis(50));
    }
}
