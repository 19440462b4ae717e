//! What passes between the discovery thread and the receive thread: ready ports one way,
//! finished ones (and selection changes) the other.
//!
//! Both channels are unbounded, so neither side ever waits on the other: the receive
//! thread only takes what is waiting (`try_recv`) and hands back without blocking, and
//! the discovery thread sleeps on its own and takes what came back when it wakes. No
//! lock is shared, so a discovery thread preempted anywhere cannot hold up the real-time
//! receive thread.

use std::sync::mpsc::{self, Receiver, Sender, TryRecvError};
use std::thread::JoinHandle;

use super::events::EventPort;
use super::receive::OpenTopic;
use crate::select::TopicFilter;

/// What the discovery thread hands the receive thread, ready to use.
// Sent a few times in a topic's life: boxing the large variant would buy nothing.
#[allow(clippy::large_enum_variant)]
pub(super) enum Found {
    /// A subscribed service, not yet announced to the writer.
    Topic(OpenTopic),
    /// A listener on the event service of a topic handed over before.
    Listener(EventPort),
    /// The event service of this name is gone: give its listener back.
    Unlisten(String),
}

/// What the receive thread gives back to the discovery thread.
// Sent a few times in a topic's life: boxing the large variant would buy nothing.
#[allow(clippy::large_enum_variant)]
pub(super) enum Finished {
    /// A topic no longer received (its last samples taken): its ports are to be dropped
    /// once the writer has let go of its samples, and the services listed again.
    Topic {
        topic: OpenTopic,
        /// Whether `rec topics-set` unselected it: what each publisher had sent by then
        /// is kept for the day it is selected again.
        unselected: bool,
    },
    /// A listener no longer waited on, to be dropped.
    Listener(EventPort),
    /// The selection changed: list the services again with this filter.
    Filter(TopicFilter),
}

/// The receive thread's end: takes what discovery found, gives back what it finished.
pub(super) struct DiscoveryLink {
    found: Receiver<Found>,
    /// `None` once closed.
    finished: Option<Sender<Finished>>,
    thread: Option<JoinHandle<()>>,
}

/// The discovery thread's end.
pub(super) struct ReceiveLink {
    found: Sender<Found>,
    finished: Receiver<Finished>,
}

/// What [`ReceiveLink::take_finished`] saw.
pub(super) enum Inbox {
    /// Everything given back so far was taken.
    Taken,
    /// The receive thread is gone: discovery ends.
    Closed,
}

/// Connects a receive thread to the discovery thread `spawn` starts with the other end.
pub(super) fn connect(
    spawn: impl FnOnce(ReceiveLink) -> std::io::Result<JoinHandle<()>>,
) -> std::io::Result<DiscoveryLink> {
    let (found_tx, found_rx) = mpsc::channel();
    let (finished_tx, finished_rx) = mpsc::channel();
    let thread = spawn(ReceiveLink {
        found: found_tx,
        finished: finished_rx,
    })?;
    Ok(DiscoveryLink {
        found: found_rx,
        finished: Some(finished_tx),
        thread: Some(thread),
    })
}

impl DiscoveryLink {
    /// The next thing discovery found, if one is waiting; never blocks.
    pub fn take(&self) -> Option<Found> {
        self.found.try_recv().ok()
    }

    /// Gives something back to be dropped (or acted on) by the discovery thread; never
    /// blocks.
    pub fn give_back(&self, finished: Finished) {
        if let Some(sender) = &self.finished {
            // The discovery thread ends only after this end closes, so the send finds it.
            let _ = sender.send(finished);
        }
    }

    /// Wakes the discovery thread for a round now (a selection change).
    pub fn wake(&self) {
        if let Some(thread) = &self.thread {
            thread.thread().unpark();
        }
    }

    /// Closes the exchange and waits for the discovery thread to drop what it holds.
    pub fn close(&mut self) {
        self.finished = None;
        if let Some(thread) = self.thread.take() {
            thread.thread().unpark();
            let _ = thread.join();
        }
    }
}

impl Drop for DiscoveryLink {
    fn drop(&mut self) {
        self.close();
    }
}

impl ReceiveLink {
    /// Takes everything given back, passing each to `take`; never blocks.
    pub fn take_finished(&self, mut take: impl FnMut(Finished)) -> Inbox {
        loop {
            match self.finished.try_recv() {
                Ok(finished) => take(finished),
                Err(TryRecvError::Empty) => return Inbox::Taken,
                Err(TryRecvError::Disconnected) => return Inbox::Closed,
            }
        }
    }

    /// Hands something found to the receive thread; false when it is gone.
    pub fn hand(&self, found: Found) -> bool {
        self.found.send(found).is_ok()
    }
}
