//! The recordings' word to the uploader: a session is falling behind, so the disk (or the
//! CPU) is theirs for a while.

use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Why, and until when, the uploader should keep off the disk.
#[derive(Debug, Default)]
pub struct Pressure {
    until: Mutex<Option<(Instant, String)>>,
}

impl Pressure {
    /// A recording needs the disk: the uploader reads nothing for `hold`.
    pub fn raise(&self, why: String, hold: Duration) {
        *self.until.lock().expect("pressure lock") = Some((Instant::now() + hold, why));
    }

    /// Returns once no recording needs the disk; `waiting` hears why it waits meanwhile,
    /// then `None`.
    pub(crate) async fn wait_out(&self, waiting: impl Fn(Option<String>)) {
        while let Some(why) = self.current() {
            waiting(Some(why));
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
        waiting(None);
    }

    /// Why the uploader should wait now, if it should.
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
