//! What a session asks of its writer threads while they run: to pause and resume
//! writing, to write markers into the files being written, to write a trigger's window,
//! and to continue in a new file.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use recd_storage::Marker;

use super::{LoanedBytes, Writer};
use crate::trigger::TriggerRequest;

/// One writer thread's requests; the pause flag is shared by a session's writers.
#[derive(Debug)]
pub(crate) struct WriterRequests {
    paused: Arc<AtomicBool>,
    markers: Mutex<Vec<Marker>>,
    triggers: Mutex<Vec<TriggerRequest>>,
    split: AtomicBool,
}

impl WriterRequests {
    pub fn new(paused: Arc<AtomicBool>) -> Self {
        Self {
            paused,
            markers: Mutex::new(Vec::new()),
            triggers: Mutex::new(Vec::new()),
            split: AtomicBool::new(false),
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

    /// Queues a trigger.
    pub fn trigger(&self, trigger: TriggerRequest) {
        self.triggers.lock().expect("triggers lock").push(trigger);
    }

    /// Asks for the current file to end and a new one to start.
    pub fn split(&self) {
        self.split.store(true, Ordering::Relaxed);
    }

    /// Whether a split was asked for since the last call.
    pub fn take_split(&self) -> bool {
        self.split.swap(false, Ordering::Relaxed)
    }

    /// The triggers queued since the last call.
    pub fn take_triggers(&self) -> Vec<TriggerRequest> {
        std::mem::take(&mut *self.triggers.lock().expect("triggers lock"))
    }
}

impl<S: LoanedBytes> Writer<S> {
    /// Writes the markers asked for into the current file; without one (the disk is
    /// full, a write failed) they wait for the next.
    pub(super) fn write_markers(&mut self) {
        let markers = self.requests.take_markers();
        if markers.is_empty() {
            return;
        }
        let Some(file) = self.files.current.as_mut() else {
            // A pre-trigger session has a file only while a trigger's window is written;
            // the markers' answer named no file then.
            if self.pre_trigger.is_none() {
                markers.into_iter().for_each(|m| self.requests.mark(m));
            }
            return;
        };
        let mut failure = None;
        for marker in &markers {
            if let Err(error) = file.add_metadata(recd_storage::iceoryx2::MARKER, &marker.record())
            {
                failure.get_or_insert(error);
            }
        }
        if let Some(error) = failure {
            self.fail(error);
        }
    }
}
