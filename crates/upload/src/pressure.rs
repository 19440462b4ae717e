//! The recordings' word to background work (uploads, finishing): keep off the disk for a
//! while, or go on at a paced rate. The daemon's background policy decides; the uploader
//! and finishing only obey.

use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Why, and until when, background work keeps off the disk, and the rate it keeps to
/// meanwhile when it may go on.
#[derive(Debug, Default)]
pub struct Pressure {
    until: Mutex<Option<(Instant, String)>>,
    /// Bytes per second background work keeps to, while recordings lose samples.
    pace: Mutex<Option<u64>>,
}

impl Pressure {
    /// A recording needs the disk: background work reads nothing for `hold`.
    pub fn raise(&self, why: String, hold: Duration) {
        *self.until.lock().expect("pressure lock") = Some((Instant::now() + hold, why));
    }

    /// Background work may go on now.
    pub fn clear(&self) {
        *self.until.lock().expect("pressure lock") = None;
    }

    /// Background work keeps to `bytes_per_s` (each of its workers on its own), or goes as
    /// fast as it can (`None`).
    pub fn set_pace(&self, bytes_per_s: Option<u64>) {
        *self.pace.lock().expect("pressure lock") = bytes_per_s;
    }

    /// The rate background work keeps to now, if any.
    pub fn pace(&self) -> Option<u64> {
        *self.pace.lock().expect("pressure lock")
    }

    /// Returns once no recording needs the disk; `waiting` hears why it waits meanwhile,
    /// then `None`.
    pub(crate) async fn wait_out(&self, waiting: impl Fn(Option<String>)) {
        while let Some(why) = self.current() {
            waiting(Some(why));
            tokio::time::sleep(crate::yielding::HOLD_LOOK).await;
        }
        waiting(None);
    }

    /// Why background work should wait now, if it should.
    pub fn current(&self) -> Option<String> {
        let mut until = self.until.lock().expect("pressure lock");
        match &*until {
            Some((end, why)) if Instant::now() < *end => Some(why.clone()),
            _ => {
                *until = None;
                None
            }
        }
    }
}

/// Background work obeys the pressure: its hold and its pace.
impl crate::yielding::Holds for Pressure {
    fn hold(&self) -> Option<String> {
        self.current()
    }

    fn pace(&self) -> Option<u64> {
        Pressure::pace(self)
    }
}
