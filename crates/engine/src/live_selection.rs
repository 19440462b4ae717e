//! The topics a running recording records, changed while it runs (`rec topics-set`): the
//! recording publishes a new filter with a version, each receive thread takes it at the
//! top of its next loop, closes what is no longer selected, stamps the moment and says so,
//! and only then opens what was added.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

use crate::select::TopicFilter;

/// A selection change every receive thread of a recording takes.
pub(crate) struct LiveSelection {
    /// The version of the newest change; 0 before any.
    version: AtomicU64,
    state: Mutex<State>,
    taken: Condvar,
}

struct State {
    /// The newest change.
    change: Option<Change>,
    /// Per receive thread: the version it took last, and when (ns since the epoch).
    taken: Vec<(u64, u64)>,
}

/// One change of the selection.
#[derive(Clone)]
pub(crate) struct Change {
    /// Its version.
    pub version: u64,
    /// The topics recorded from now on.
    pub filter: TopicFilter,
    /// What the marker written into the files says.
    pub text: String,
}

impl LiveSelection {
    /// A selection taken by `sources` receive threads (their ids: 0 to `sources` - 1).
    pub fn new(sources: usize) -> Self {
        Self {
            version: AtomicU64::new(0),
            state: Mutex::new(State {
                change: None,
                taken: vec![(0, 0); sources],
            }),
            taken: Condvar::new(),
        }
    }

    /// The version of the newest change; a receive thread compares it with the one it
    /// took (one atomic load per loop).
    pub fn version(&self) -> u64 {
        self.version.load(Ordering::Acquire)
    }

    /// The newest change.
    pub fn change(&self) -> Option<Change> {
        self.state.lock().expect("selection lock").change.clone()
    }

    /// Publishes a change; returns its version.
    pub fn publish(&self, filter: TopicFilter, text: String) -> u64 {
        let mut state = self.state.lock().expect("selection lock");
        let version = self.version.load(Ordering::Acquire) + 1;
        state.change = Some(Change {
            version,
            filter,
            text,
        });
        self.version.store(version, Ordering::Release);
        version
    }

    /// Receive thread `source` took change `version` at `time_ns`: what it no longer
    /// records was closed before, what it now records opens after.
    pub fn taken(&self, source: usize, version: u64, time_ns: u64) {
        let mut state = self.state.lock().expect("selection lock");
        if let Some(slot) = state.taken.get_mut(source) {
            *slot = (version, time_ns);
        }
        self.taken.notify_all();
    }

    /// Waits at most `limit` for every receive thread to take `version`; the moments they
    /// took it, by source, or `None` when one did not in time.
    pub fn wait_taken(&self, version: u64, limit: Duration) -> Option<Vec<u64>> {
        let deadline = Instant::now() + limit;
        let mut state = self.state.lock().expect("selection lock");
        loop {
            if state.taken.iter().all(|(taken, _)| *taken >= version) {
                return Some(state.taken.iter().map(|(_, time)| *time).collect());
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return None;
            }
            state = self
                .taken
                .wait_timeout(state, left)
                .expect("selection lock")
                .0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::TopicSelection;

    #[test]
    fn a_change_is_done_once_every_source_took_it() {
        let live = std::sync::Arc::new(LiveSelection::new(2));
        let filter = TopicFilter::new(&TopicSelection::default()).unwrap();
        let version = live.publish(filter, "+a".into());
        assert_eq!((live.version(), version), (1, 1));
        assert_eq!(live.change().unwrap().text, "+a");
        live.taken(0, 1, 100);
        assert_eq!(live.wait_taken(1, Duration::from_millis(10)), None);
        let other = live.clone();
        let source = std::thread::spawn(move || other.taken(1, 1, 200));
        assert_eq!(
            live.wait_taken(1, Duration::from_secs(5)),
            Some(vec![100, 200])
        );
        source.join().unwrap();
    }
}
