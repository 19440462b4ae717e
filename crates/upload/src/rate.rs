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
}
