//! `max_rate`: a token bucket over the bytes sent, so that an upload leaves the vehicle's
//! link to everything else.

use std::time::{Duration, Instant};

/// Paces sends to a number of bytes per second on average.
#[derive(Debug)]
pub struct RateLimit {
    bytes_per_s: f64,
    /// When the bytes taken so far have been paid for.
    paid_until: Option<Instant>,
}

impl RateLimit {
    /// At most `bytes_per_s` on average.
    pub fn new(bytes_per_s: u64) -> Self {
        Self {
            bytes_per_s: bytes_per_s.max(1) as f64,
            paid_until: None,
        }
    }

    /// How long to wait before sending `bytes` more: nothing for the first send, then
    /// until what was sent before is paid for at the rate.
    pub fn delay_for(&mut self, bytes: u64, now: Instant) -> Duration {
        let start = self.paid_until.map_or(now, |paid| paid.max(now));
        self.paid_until = Some(start + Duration::from_secs_f64(bytes as f64 / self.bytes_per_s));
        start - now
    }
}

/// Paces work to a rate that changes, or to none: the background policy's pace
/// ([`Pressure::pace`](crate::Pressure::pace)) for uploads and finishing.
#[derive(Debug, Default)]
pub struct Paced {
    limit: Option<(u64, RateLimit)>,
}

impl Paced {
    /// How long to wait before `bytes` more at `pace` bytes per second; `None` when
    /// there is no pace (and the next pace starts afresh).
    pub fn delay_for(&mut self, pace: Option<u64>, bytes: u64) -> Option<Duration> {
        let Some(pace) = pace else {
            self.limit = None;
            return None;
        };
        let limit = match &mut self.limit {
            Some((rate, limit)) if *rate == pace => limit,
            slot => &mut slot.insert((pace, RateLimit::new(pace))).1,
        };
        Some(limit.delay_for(bytes, Instant::now()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sends_are_spaced_by_their_size_over_the_rate() {
        let mut rate = RateLimit::new(20 << 20);
        let now = Instant::now();
        assert_eq!(rate.delay_for(16 << 20, now), Duration::ZERO);
        let second = rate.delay_for(16 << 20, now);
        assert_eq!(second, Duration::from_millis(800));
        // 100 MiB in parts of 16 MiB: the last starts 96 MiB / 20 MiB/s after the first.
        let mut rate = RateLimit::new(20 << 20);
        let mut waited = Duration::ZERO;
        for part in [16u64, 16, 16, 16, 16, 16, 4] {
            waited = rate.delay_for(part << 20, now);
        }
        assert_eq!(waited, Duration::from_millis(4800));
        // Idle time is not saved up for a burst.
        let later = now + Duration::from_secs(60);
        assert_eq!(rate.delay_for(1 << 20, later), Duration::ZERO);
    }

    #[test]
    fn a_pace_paces_while_it_is_set_and_starts_afresh_when_it_changes() {
        let mut paced = Paced::default();
        assert_eq!(paced.delay_for(None, 1 << 20), None);
        assert_eq!(
            paced.delay_for(Some(1 << 20), 1 << 20),
            Some(Duration::ZERO)
        );
        let second = paced.delay_for(Some(1 << 20), 1 << 20).unwrap();
        assert!(second > Duration::from_millis(900), "{second:?}");
        // A new pace forgets what the old one had paid for.
        assert_eq!(
            paced.delay_for(Some(2 << 20), 1 << 20),
            Some(Duration::ZERO)
        );
        assert_eq!(paced.delay_for(None, 1 << 20), None);
        assert_eq!(
            paced.delay_for(Some(2 << 20), 1 << 20),
            Some(Duration::ZERO)
        );
    }
}
