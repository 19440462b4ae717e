//! What a receive thread reports about itself: how it is scheduled, how late its passes
//! come, how often it had to take a loan back from the writer.
//!
//! The thread updates atomics only (no lock, no allocation); the status reads them.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock, Weak};
use std::time::Duration;

use crate::lateness::LatenessHistogram;

/// A receive thread's live report, shared with the status.
pub(crate) struct ReceiveStats {
    source: &'static str,
    scheduling: OnceLock<super::priority::Scheduling>,
    memory_warning: OnceLock<String>,
    lateness: LatenessHistogram,
    spilled: AtomicU64,
    copy_passes: AtomicU64,
    given_up: AtomicU64,
}

impl ReceiveStats {
    /// The report of the receive thread of `source` (`iceoryx2` or `dds`).
    pub fn new(source: &'static str) -> Self {
        Self {
            source,
            scheduling: OnceLock::new(),
            memory_warning: OnceLock::new(),
            lateness: LatenessHistogram::default(),
            spilled: AtomicU64::new(0),
            copy_passes: AtomicU64::new(0),
            given_up: AtomicU64::new(0),
        }
    }

    /// Notes how the thread got scheduled (once, at its start).
    pub fn set_scheduling(&self, scheduling: super::priority::Scheduling) {
        let _ = self.scheduling.set(scheduling);
    }

    /// Waits (at most `limit`) until the thread said how it got scheduled.
    pub fn wait_scheduled(&self, limit: Duration) {
        let deadline = std::time::Instant::now() + limit;
        while self.scheduling.get().is_none() && std::time::Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(1));
        }
    }

    /// Notes that the thread's memory could not be locked, and why.
    pub fn set_memory_warning(&self, warning: String) {
        let _ = self.memory_warning.set(warning);
    }

    /// Notes a scheduled pass that started `late` after the earliest poll it was due for.
    pub fn add_pass(&self, late: Duration) {
        self.lateness.add(late);
    }

    /// Notes a loan taken back into the spill pool.
    pub fn add_spilled(&self) {
        self.spilled.fetch_add(1, Ordering::Relaxed);
    }

    /// Notes a pass that copied (part of) a taken-back sample.
    pub fn add_copy_pass(&self) {
        self.copy_passes.fetch_add(1, Ordering::Relaxed);
    }

    /// Notes a loan taken back unwritten, the spill pool being full.
    pub fn add_given_up(&self) {
        self.given_up.fetch_add(1, Ordering::Relaxed);
    }

    /// Loans taken back from the writer so far: spilled or given up.
    fn reclaimed(&self) -> u64 {
        self.spilled.load(Ordering::Relaxed) + self.given_up.load(Ordering::Relaxed)
    }

    /// The report as of now.
    pub fn snapshot(&self) -> ReceiveThreadStatus {
        let scheduling = self.scheduling.get();
        let spilled = self.spilled.load(Ordering::Relaxed);
        ReceiveThreadStatus {
            source: self.source.to_string(),
            scheduling: scheduling.map_or_else(|| "starting".into(), |s| s.description.clone()),
            priority_warning: scheduling.and_then(|s| s.warning.clone()),
            memory_warning: self.memory_warning.get().cloned(),
            passes: self.lateness.count(),
            lateness_p999: self.lateness.quantile(0.999),
            lateness_max: self.lateness.max(),
            spilled,
            copy_passes: self.copy_passes.load(Ordering::Relaxed),
            reclaimed: spilled + self.given_up.load(Ordering::Relaxed),
        }
    }
}

/// A view of a recording's receive threads for work that must yield to the recording
/// (finishing files): how many loans they have taken back from a writer that fell
/// behind. Reading it locks nothing; it does not keep the recording's threads' reports
/// alive.
#[derive(Clone)]
pub struct BehindProbe {
    stats: Vec<Weak<ReceiveStats>>,
}

impl BehindProbe {
    pub(crate) fn new(stats: &[Arc<ReceiveStats>]) -> Self {
        Self {
            stats: stats.iter().map(Arc::downgrade).collect(),
        }
    }

    /// Loans taken back so far (spilled or given up, every receive thread together);
    /// `None` once the recording is gone.
    pub fn loans_taken_back(&self) -> Option<u64> {
        let mut total = 0;
        for stats in &self.stats {
            total += stats.upgrade()?.reclaimed();
        }
        Some(total)
    }
}

/// A receive thread as the status shows it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ReceiveThreadStatus {
    /// Which source it receives for: `iceoryx2` or `dds`.
    pub source: String,
    /// How it is scheduled: `SCHED_FIFO <priority>`, or a nice value.
    pub scheduling: String,
    /// Why it did not get the real-time priority it was configured with, if it did not.
    pub priority_warning: Option<String>,
    /// Why its preallocated memory could not be locked, if it could not.
    pub memory_warning: Option<String>,
    /// Passes started by a topic's poll schedule.
    pub passes: u64,
    /// How late such a pass started behind the earliest poll it was due for: 99.9th
    /// percentile (to a quarter octave) ...
    pub lateness_p999: Duration,
    /// ... and the largest.
    pub lateness_max: Duration,
    /// Large samples copied into the spill pool to free their loan for a waiting sample.
    pub spilled: u64,
    /// Passes that copied (part of) such a sample: each copies for half a millisecond at
    /// most, so a copy longer than that spans several.
    #[serde(default)]
    pub copy_passes: u64,
    /// Loans taken back from the writer: the spilled ones and those given up unwritten
    /// (counted as dropped) because the spill pool was full.
    pub reclaimed: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lateness_quantiles_come_from_the_buckets_and_the_maximum_is_exact() {
        let stats = ReceiveStats::new("iceoryx2");
        for _ in 0..998 {
            stats.add_pass(Duration::from_micros(10));
        }
        stats.add_pass(Duration::from_millis(3));
        stats.add_pass(Duration::from_millis(7));
        let status = stats.snapshot();
        assert_eq!(status.passes, 1000);
        assert_eq!(status.lateness_max, Duration::from_millis(7));
        // The 999th of 1000 passes is the 3 ms one: within a quarter octave above it.
        let p999 = status.lateness_p999;
        assert!(
            p999 >= Duration::from_millis(3) && p999 <= Duration::from_micros(3568),
            "{p999:?}"
        );
        assert_eq!(status.scheduling, "starting");
    }

    #[test]
    fn no_pass_no_lateness() {
        let status = ReceiveStats::new("dds").snapshot();
        assert_eq!(status.lateness_p999, Duration::ZERO);
        assert_eq!(status.lateness_max, Duration::ZERO);
    }

    #[test]
    fn the_behind_probe_counts_every_threads_taken_back_loans_until_the_recording_is_gone() {
        let shm = Arc::new(ReceiveStats::new("iceoryx2"));
        let dds = Arc::new(ReceiveStats::new("dds"));
        let probe = BehindProbe::new(&[shm.clone(), dds.clone()]);
        assert_eq!(probe.loans_taken_back(), Some(0));
        shm.add_spilled();
        shm.add_spilled();
        dds.add_given_up();
        assert_eq!(probe.loans_taken_back(), Some(3));
        drop(dds);
        assert_eq!(probe.loans_taken_back(), None);
    }
}
