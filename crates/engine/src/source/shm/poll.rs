//! When to poll a subscriber that has no event service to wake the recorder.
//!
//! Each `receive()` costs about as much when it finds nothing as when it takes a sample, so
//! polling 100 subscribers every 2 ms is mostly wasted work. A subscriber only has to be
//! polled before its buffer fills up: the schedule estimates how fast samples arrive and
//! polls when the buffer would be a quarter full, within configured bounds.
//!
//! Polls fall on one grid of instants: a subscriber polled every `longest` is polled at
//! the grid's multiples of `longest`, a faster one at those of `longest` halved as often as
//! its interval needs. So the receive thread wakes once for all the slow subscribers
//! rather than once for each group that happened to be found together (with 2,000 topics,
//! 16 passes every `longest`, each visiting every topic).

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

/// The shortest and the longest time between two polls of a subscriber, and where the
/// grid their polls fall on starts.
#[derive(Debug, Clone, Copy)]
pub(crate) struct PollBounds {
    pub shortest: Duration,
    pub longest: Duration,
    /// The grid's origin: the same for every subscriber of a source.
    pub grid_origin: Instant,
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

    /// The last instant of the grid at or before `now + interval`, which is after `now`.
    /// Once a subscriber's polls are on the grid, they come every `interval` rounded down
    /// to its grid step; the first may come sooner.
    fn next_on_grid(&self, now: Instant, interval: Duration) -> Instant {
        let step_ns = nanos(self.grid_step(interval)).max(1);
        let since_origin = nanos((now + interval).saturating_duration_since(self.grid_origin));
        let on_grid = self.grid_origin + Duration::from_nanos(since_origin / step_ns * step_ns);
        // Unreachable while `step` ≤ `interval` and `now` ≥ the origin; a clock or a
        // configuration that breaks either still polls no later than planned.
        if on_grid > now {
            on_grid
        } else {
            now + interval
        }
    }

    /// `longest` halved until it is no longer than `interval`: the intervals of all
    /// subscribers then nest, and their polls share passes.
    fn grid_step(&self, interval: Duration) -> Duration {
        let mut step = self.longest;
        while step > interval && step > MIN_GRID_STEP {
            step /= 2;
        }
        step
    }
}

/// A duration in nanoseconds: 64 bits hold 584 years, and divide faster than 128.
fn nanos(duration: Duration) -> u64 {
    duration.as_nanos().min(u64::MAX as u128) as u64
}

/// How much longer than `longest` a subscriber with an event service may go unpolled: a
/// power of two, so that its polls fall on the grid of the others.
const EVENTS_POLL_FACTOR: u32 = 16;

/// The finest grid: below it, a pass costs more than it saves to share.
const MIN_GRID_STEP: Duration = Duration::from_micros(50);

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
        self.next_poll = bounds.next_on_grid(now, interval);
        self.polled = true;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SHORTEST: Duration = Duration::from_micros(2_500);
    const LONGEST: Duration = Duration::from_millis(40);

    fn bounds(origin: Instant) -> PollBounds {
        PollBounds {
            shortest: SHORTEST,
            longest: LONGEST,
            grid_origin: origin,
        }
    }

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    fn interval(schedule: &PollSchedule, now: Instant) -> Duration {
        schedule.next_poll() - now
    }

    #[test]
    fn polls_before_the_buffer_is_a_quarter_full() {
        let start = Instant::now();
        let mut schedule = PollSchedule::new(40, start);
        // 1 kHz: 10 samples per 10 ms; a quarter of 40 arrives in 10 ms.
        let now = start + ms(10);
        schedule.polled(now, 10, false, bounds(start));
        assert_eq!(interval(&schedule, now), ms(10));
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
        let now = start + ms(300);
        schedule.polled(now, 1, false, bounds(start));
        assert_eq!(schedule.scheduled_poll(), Some(schedule.next_poll()));
    }

    #[test]
    fn silent_and_slow_topics_wait_the_longest_fast_ones_the_shortest() {
        let start = Instant::now();
        let now = start + LONGEST;
        let mut silent = PollSchedule::new(16, start);
        silent.polled(now, 0, false, bounds(start));
        assert_eq!(interval(&silent, now), LONGEST);

        let mut slow = PollSchedule::new(256, start);
        slow.polled(now, 1, false, bounds(start));
        assert_eq!(interval(&slow, now), LONGEST);

        let mut flooded = PollSchedule::new(2, start);
        flooded.polled(now, 2, false, bounds(start));
        assert_eq!(interval(&flooded, now), SHORTEST, "buffer was full");

        let mut held = PollSchedule::new(256, start);
        held.polled(now, 1, true, bounds(start));
        assert_eq!(interval(&held, now), SHORTEST, "samples left waiting");
    }

    #[test]
    fn a_burst_shortens_the_wait_at_once_and_silence_lengthens_it_gradually() {
        let start = Instant::now();
        let mut schedule = PollSchedule::new(100, start);
        let mut now = start + ms(40);
        schedule.polled(now, 4, false, bounds(start)); // 100/s
        assert_eq!(interval(&schedule, now), LONGEST);
        now += ms(40);
        schedule.polled(now, 40, false, bounds(start)); // 1000/s: 25 ms, on the 20 ms grid
        assert_eq!(interval(&schedule, now), ms(20));
        now += ms(20);
        schedule.polled(now, 0, false, bounds(start)); // estimate halves to 500/s: 50 ms
        assert_eq!(
            schedule.next_poll(),
            start + 3 * LONGEST,
            "the longest interval's next grid point"
        );
    }

    #[test]
    fn a_subscriber_with_an_event_service_is_polled_sixteen_times_less_often_while_quiet() {
        let start = Instant::now();
        let with_events = bounds(start).with_events();
        let now = start + LONGEST * EVENTS_POLL_FACTOR;
        let mut quiet = PollSchedule::new(16, start);
        quiet.polled(now, 0, false, with_events);
        assert_eq!(interval(&quiet, now), LONGEST * EVENTS_POLL_FACTOR);

        let mut flooded = PollSchedule::new(16, start);
        flooded.polled(now, 16, false, with_events);
        assert_eq!(
            interval(&flooded, now),
            SHORTEST,
            "its buffer was full: a publisher does not notify"
        );
    }

    #[test]
    fn slow_subscribers_found_apart_are_polled_in_one_pass_after_their_first() {
        let start = Instant::now();
        let found = [ms(1), ms(7), ms(23), ms(39)];
        let next: Vec<Instant> = found
            .iter()
            .map(|&at| {
                let mut schedule = PollSchedule::new(2, start + at);
                // Each polled first as soon as it is found, finding nothing.
                schedule.polled(start + at, 0, false, bounds(start));
                schedule.next_poll()
            })
            .collect();
        assert!(next.iter().all(|&poll| poll == start + LONGEST), "{next:?}");
    }

    #[test]
    fn a_poll_never_comes_later_than_planned_and_always_after_now() {
        let start = Instant::now();
        for offset_us in [0, 1, 999, 2_500, 17_321, 39_999, 40_000, 123_457] {
            for planned in [SHORTEST, ms(3), ms(7), ms(25), LONGEST] {
                let now = start + Duration::from_micros(offset_us);
                let next = bounds(start).next_on_grid(now, planned);
                assert!(
                    next > now && next <= now + planned,
                    "at {offset_us} µs, planned {planned:?}: {:?} later",
                    next - now
                );
            }
        }
    }
}
