//! What passes between the DDS discovery thread and the DDS receive thread: ready readers
//! one way, finished readers (and selection changes, history sizes) the other.
//!
//! On [`crate::source::exchange`]'s channels; each side wakes the other's mio poll (an
//! eventfd write) after sending.

use std::sync::Arc;
use std::thread::JoinHandle;

use rustdds::mio1::Waker;
use rustdds::GUID;

use super::gathered::Early;
use super::reader::Reader;
use crate::select::TopicFilter;
use crate::source::exchange::{self, Wake};
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
    /// Samples taken while the topic was held, oldest first: the receive thread takes
    /// them before any from the reader.
    pub early: Vec<Early>,
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

/// Wakes a mio poll: the receive thread's, or the discovery thread's.
impl Wake for Arc<Waker> {
    fn wake(&self) {
        let _ = Waker::wake(self);
    }
}

/// The receive thread's end: takes what discovery found, gives back what it finished.
pub(super) type DiscoveryLink = exchange::DiscoveryLink<Found, Finished, Arc<Waker>>;

/// The discovery thread's end.
pub(super) type ReceiveLink = exchange::FinishedEnd<Found, Finished, Arc<Waker>>;

/// Connects a receive thread (woken by `receive_waker`) to the discovery thread (woken by
/// `discovery_waker`) that `spawn` starts with the other end.
pub(super) fn connect(
    receive_waker: Arc<Waker>,
    discovery_waker: Arc<Waker>,
    spawn: impl FnOnce(ReceiveLink) -> std::io::Result<JoinHandle<()>>,
) -> std::io::Result<DiscoveryLink> {
    exchange::connect(receive_waker, discovery_waker, spawn)
}

/// Gives back every reader still waiting in the channel, so that the discovery thread
/// drops it rather than the receive thread.
pub(super) fn give_back_waiting(link: &DiscoveryLink) {
    while let Some(found) = link.take() {
        match found {
            Found::Topic(topic) => link.give_back(Finished::Reader(topic.reader)),
            Found::Reader { reader, .. } => link.give_back(Finished::Reader(reader)),
            Found::WriterLost { .. } => {}
        }
    }
}
