//! What passes between the DDS discovery thread and the DDS receive thread: ready readers
//! one way, finished readers (and selection changes, history sizes) the other.
//!
//! Both channels are unbounded, so neither side ever waits on the other: the receive
//! thread only takes what is waiting (`try_recv`) and hands back without blocking; each
//! side wakes the other's mio poll (an eventfd write) after sending. No lock is shared, so
//! a discovery thread preempted anywhere cannot hold up the real-time receive thread.

use std::sync::mpsc::{self, Receiver, Sender, TryRecvError};
use std::sync::Arc;
use std::thread::JoinHandle;

use rustdds::mio1::Waker;
use rustdds::GUID;

use super::reader::Reader;
use crate::select::TopicFilter;
use crate::throttle::Throttle;
use crate::topic::Topic;

/// A topic discovery made ready: its first reader, registered with the receive thread's
/// poll under the token of the slot it takes.
pub(super) struct NewTopic {
    pub topic: Arc<Topic>,
    pub dds_name: String,
    pub type_name: String,
    pub reader: Reader,
    pub throttle: Option<Throttle>,
}

/// What the discovery thread hands the receive thread. Topics are numbered (slots) in
/// the order [`Found::Topic`] hands them over, on both sides.
// Sent a few times in a topic's life: boxing the large variant would buy nothing.
#[allow(clippy::large_enum_variant)]
pub(super) enum Found {
    /// A new topic, the next slot.
    Topic(NewTopic),
    /// A reader for the topic in `slot`, in place of its reader if it has one (a newcomer
    /// would not match it) or because `rec topics-set` selected it again.
    Reader { slot: usize, reader: Reader },
    /// A writer of the topic in `slot` left; `last` when no writer of it is left.
    WriterLost {
        slot: usize,
        writer: GUID,
        last: bool,
    },
}

/// What the receive thread gives back to the discovery thread.
// Sent a few times in a topic's life: boxing the large variant would buy nothing.
#[allow(clippy::large_enum_variant)]
pub(super) enum Finished {
    /// A reader no longer received from (its last samples taken): to be dropped.
    Reader(Reader),
    /// The topic in `slot` should keep a history of `depth` samples.
    Deepen { slot: usize, depth: i32 },
    /// The selection changed: readers of topics it no longer selects were given back;
    /// look at the writers again with this filter.
    Filter(TopicFilter),
}

/// The receive thread's end: takes what discovery found, gives back what it finished.
pub(super) struct DiscoveryLink {
    found: Receiver<Found>,
    /// `None` once closed.
    finished: Option<Sender<Finished>>,
    /// Wakes the discovery thread's poll.
    waker: Arc<Waker>,
    thread: Option<JoinHandle<()>>,
}

/// The discovery thread's end.
pub(super) struct ReceiveLink {
    found: Sender<Found>,
    finished: Receiver<Finished>,
    /// Wakes the receive thread's poll.
    waker: Arc<Waker>,
}

/// What [`ReceiveLink::take_finished`] saw.
pub(super) enum Inbox {
    /// Everything given back so far was taken.
    Taken,
    /// The receive thread is gone: discovery ends.
    Closed,
}

/// Connects a receive thread (woken by `receive_waker`) to the discovery thread (woken by
/// `discovery_waker`) that `spawn` starts with the other end.
pub(super) fn connect(
    receive_waker: Arc<Waker>,
    discovery_waker: Arc<Waker>,
    spawn: impl FnOnce(ReceiveLink) -> std::io::Result<JoinHandle<()>>,
) -> std::io::Result<DiscoveryLink> {
    let (found_tx, found_rx) = mpsc::channel();
    let (finished_tx, finished_rx) = mpsc::channel();
    let thread = spawn(ReceiveLink {
        found: found_tx,
        finished: finished_rx,
        waker: receive_waker,
    })?;
    Ok(DiscoveryLink {
        found: found_rx,
        finished: Some(finished_tx),
        waker: discovery_waker,
        thread: Some(thread),
    })
}

impl DiscoveryLink {
    /// The next thing discovery found, if one is waiting; never blocks.
    pub fn take(&self) -> Option<Found> {
        self.found.try_recv().ok()
    }

    /// Gives something back to the discovery thread and wakes it; never blocks.
    pub fn give_back(&self, finished: Finished) {
        if let Some(sender) = &self.finished {
            // The discovery thread ends only after this end closes, so the send finds it.
            let _ = sender.send(finished);
            let _ = self.waker.wake();
        }
    }

    /// Gives back every reader still waiting in the channel, closes the exchange and
    /// waits for the discovery thread to drop what it holds.
    pub fn close(&mut self) {
        while let Some(found) = self.take() {
            match found {
                Found::Topic(topic) => self.give_back(Finished::Reader(topic.reader)),
                Found::Reader { reader, .. } => self.give_back(Finished::Reader(reader)),
                Found::WriterLost { .. } => {}
            }
        }
        self.finished = None;
        let _ = self.waker.wake();
        if let Some(thread) = self.thread.take() {
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

    /// Hands something found to the receive thread and wakes it; false when it is gone.
    pub fn hand(&self, found: Found) -> bool {
        let handed = self.found.send(found).is_ok();
        if handed {
            let _ = self.waker.wake();
        }
        handed
    }
}
