//! What a session asks of its writer threads while they run: to pause and resume
//! writing, and to write markers into the files being written.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use recd_storage::Marker;

/// One writer thread's requests; the pause flag is shared by a session's writers.
#[derive(Debug)]
pub(crate) struct WriterRequests {
    paused: Arc<AtomicBool>,
    markers: Mutex<Vec<Marker>>,
}

impl WriterRequests {
    pub fn new(paused: Arc<AtomicBool>) -> Self {
        Self {
            paused,
            markers: Mutex::new(Vec::new()),
        }
    }

    /// Whether the session is paused: messages are taken and counted, not written.
    pub fn paused(&self) -> bool {
        self.paused.load(Ordering::Relaxed)
    }

    /// Queues a marker for the writer's current file.
    pub fn mark(&self, marker: Marker) {
        self.markers.lock().expect("markers lock").push(marker);
    }

    /// The markers queued since the last call.
    pub fn take_markers(&self) -> Vec<Marker> {
        std::mem::take(&mut *self.markers.lock().expect("markers lock"))
    }
}
