//! How late things happen, as quantiles: a histogram of quarter-octave buckets with an
//! exact maximum, updated with atomics only (no lock, no allocation), so a real-time
//! thread may add to it while another reads it. Receive threads keep one for their
//! passes; `rec play` keeps one per topic for its sends.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// Buckets are a quarter of an octave wide: 2^(i/4) ns.
const BUCKETS_PER_OCTAVE: f64 = 4.0;
/// Up to 2^40 ns (18 minutes).
const BUCKETS: usize = 160;

/// Lateness quantiles (to a quarter octave) and the exact maximum.
pub struct LatenessHistogram {
    buckets: [AtomicU64; BUCKETS],
    count: AtomicU64,
    max_ns: AtomicU64,
}

impl Default for LatenessHistogram {
    fn default() -> Self {
        Self {
            buckets: std::array::from_fn(|_| AtomicU64::new(0)),
            count: AtomicU64::new(0),
            max_ns: AtomicU64::new(0),
        }
    }
}

impl LatenessHistogram {
    /// Counts one event that came `late`.
    pub fn add(&self, late: Duration) {
        let ns = late.as_nanos().min(u64::MAX as u128) as u64;
        self.count.fetch_add(1, Ordering::Relaxed);
        self.buckets[bucket_of(ns)].fetch_add(1, Ordering::Relaxed);
        self.max_ns.fetch_max(ns, Ordering::Relaxed);
    }

    /// Events counted.
    pub fn count(&self) -> u64 {
        self.count.load(Ordering::Relaxed)
    }

    /// The lateness quantile `q` (0..=1) is below: the upper bound of its bucket, never
    /// above the maximum; zero when nothing was counted.
    pub fn quantile(&self, q: f64) -> Duration {
        let counts: Vec<u64> = (self.buckets.iter())
            .map(|b| b.load(Ordering::Relaxed))
            .collect();
        Duration::from_nanos(bucket_quantile(&counts, q).min(self.max_ns.load(Ordering::Relaxed)))
    }

    /// The largest lateness counted.
    pub fn max(&self) -> Duration {
        Duration::from_nanos(self.max_ns.load(Ordering::Relaxed))
    }
}

fn bucket_of(ns: u64) -> usize {
    if ns <= 1 {
        return 0;
    }
    (((ns as f64).log2() * BUCKETS_PER_OCTAVE) as usize).min(BUCKETS - 1)
}

/// The upper bound of the bucket holding quantile `q` of `counts`, in ns.
fn bucket_quantile(counts: &[u64], q: f64) -> u64 {
    let total: u64 = counts.iter().sum();
    if total == 0 {
        return 0;
    }
    let rank = ((total as f64) * q).ceil().max(1.0) as u64;
    let mut seen = 0;
    for (index, count) in counts.iter().enumerate() {
        seen += count;
        if seen >= rank {
            return 2f64.powf((index + 1) as f64 / BUCKETS_PER_OCTAVE).ceil() as u64;
        }
    }
    u64::MAX
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_come_from_the_buckets_and_the_maximum_is_exact() {
        let lateness = LatenessHistogram::default();
        for _ in 0..998 {
            lateness.add(Duration::from_micros(10));
        }
        lateness.add(Duration::from_millis(3));
        lateness.add(Duration::from_millis(7));
        assert_eq!(lateness.count(), 1000);
        assert_eq!(lateness.max(), Duration::from_millis(7));
        let p50 = lateness.quantile(0.5);
        assert!(
            p50 >= Duration::from_micros(10) && p50 <= Duration::from_nanos(11_893),
            "{p50:?}"
        );
        // The 999th of 1000 is the 3 ms one: within a quarter octave above it.
        let p999 = lateness.quantile(0.999);
        assert!(
            p999 >= Duration::from_millis(3) && p999 <= Duration::from_micros(3568),
            "{p999:?}"
        );
        assert_eq!(lateness.quantile(1.0), Duration::from_millis(7));
    }

    #[test]
    fn nothing_counted_is_no_lateness() {
        let lateness = LatenessHistogram::default();
        assert_eq!(lateness.quantile(0.99), Duration::ZERO);
        assert_eq!(lateness.max(), Duration::ZERO);
    }
}
