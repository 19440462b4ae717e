//! How long a sealed file's key is held. recd keeps the key of each file it sealed so that
//! finishing and incident cuts can read the file back; the rule: a key is forgotten on
//! every path by which its file goes (deleted, found missing, replaced by finishing, a cut
//! discarded), and once the file is settled — finished (no finishing waits for it), pinned
//! by no unreleased incident, and its newest message older than `[encryption] key_reach`
//! — as no trigger may then reach it ([`Incidents`](crate::incidents) refuses one that
//! would).

use std::sync::atomic::Ordering;
use std::time::Duration;

use super::FileLife;

/// How often the held keys are looked over for settled files.
pub const SWEEP_PERIOD: Duration = Duration::from_secs(10);

/// Whether a sweep last made at `last_ns` (0: never) is due again at `now_ns`.
pub fn sweep_due(last_ns: u64, now_ns: u64) -> bool {
    last_ns == 0 || now_ns.saturating_sub(last_ns) >= recd_storage::window::nanos(SWEEP_PERIOD)
}

/// The oldest newest-message time a file may have at `now_ns` and still be reached by a
/// trigger, with keys held for `reach`.
pub fn reach_start_ns(now_ns: u64, reach: Duration) -> u64 {
    now_ns.saturating_sub(recd_storage::window::nanos(reach))
}

impl FileLife {
    /// Forgets the key of every sealed file settled at `now_ns` with keys held for
    /// `reach` (see the module's rule), at most every [`SWEEP_PERIOD`]. A catalog that
    /// cannot answer keeps the key.
    pub fn forget_settled_keys(&self, now_ns: u64, reach: Duration) {
        let Some(keys) = &self.keys else {
            return;
        };
        let last = self.keys_swept_ns.load(Ordering::Relaxed);
        if !sweep_due(last, now_ns) {
            return;
        }
        self.keys_swept_ns.store(now_ns, Ordering::Relaxed);
        let before_ns = reach_start_ns(now_ns, reach);
        let settled: Vec<_> = {
            let catalog = self.catalog();
            (keys.paths().into_iter())
                .filter(|path| catalog.is_settled_before(path, before_ns).unwrap_or(false))
                .collect()
        };
        for path in &settled {
            keys.forget(path);
            tracing::debug!(file = %path.display(), "its seal key is forgotten: no incident can reach it any more");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: u64 = 1_000_000_000;

    #[test]
    fn a_sweep_is_due_at_first_and_then_every_period() {
        assert!(sweep_due(0, 5 * S));
        assert!(!sweep_due(100 * S, 100 * S));
        assert!(!sweep_due(100 * S, 109 * S));
        assert!(sweep_due(100 * S, 110 * S));
        // A clock stepped back waits for the period from the last sweep.
        assert!(!sweep_due(100 * S, 50 * S));
    }

    #[test]
    fn the_reach_starts_key_reach_before_now_and_never_before_the_epoch() {
        assert_eq!(
            reach_start_ns(7200 * S, Duration::from_secs(3600)),
            3600 * S
        );
        assert_eq!(reach_start_ns(60 * S, Duration::from_secs(3600)), 0);
    }
}
