//! What passes between the discovery thread and the receive thread: ready ports one way,
//! finished ones (and selection changes) the other.
//!
//! On [`crate::source::exchange`]'s channels: the discovery thread sleeps on its own and
//! takes what came back when it wakes (unparked for a selection change).

use std::thread::JoinHandle;

use super::events::EventPort;
use super::receive::OpenTopic;
use crate::select::TopicFilter;
use crate::source::exchange::{self, OnItsOwn};

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

/// The receive thread's end: takes what discovery found, gives back what it finished;
/// [`DiscoveryLink::unpark`] wakes discovery for a round now (a selection change).
pub(super) type DiscoveryLink = exchange::DiscoveryLink<Found, Finished, OnItsOwn>;

/// The discovery thread's end: it looks for what came back at each round.
pub(super) type ReceiveLink = exchange::FinishedEnd<Found, Finished, OnItsOwn>;

/// Connects a receive thread to the discovery thread `spawn` starts with the other end.
pub(super) fn connect(
    spawn: impl FnOnce(ReceiveLink) -> std::io::Result<JoinHandle<()>>,
) -> std::io::Result<DiscoveryLink> {
    exchange::connect(OnItsOwn, OnItsOwn, spawn)
}
