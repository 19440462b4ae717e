//! The sources: each receives samples on a thread of its own and hands them to the writer
//! through a handoff of its own, never waiting for it.
//!
//! The two sources are peers of the same shape: `open` (which can fail with the source's
//! own error), `set_consumer_thread`, then `run` on their thread until the stop flag is
//! set. What they share lives here: what a large message is held as ([`Held`]), the
//! hand-over that copies a small message or lends a large one and counts a drop when the
//! handoff is full ([`hand_over`]), the sequence-gap counting ([`SequenceGaps`]), and the
//! announcements and retirements of topics ([`announce`], [`Retirements`]).

pub(crate) mod dds;
mod exchange;
pub(crate) mod priority;
mod sequence;
pub(crate) mod shm;
pub(crate) mod spill;
pub(crate) mod stats;
#[cfg(feature = "zenoh")]
pub(crate) mod zenoh;

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use recd_storage::Marker;

use crate::handoff::{Item, LoanedBytes, Sender, Stamps};
use crate::live_selection::{Change, LiveSelection};
use crate::registry::TopicRegistry;
use crate::select::TopicFilter;
use crate::throttle::Throttles;
use crate::topic::Topic;

pub(crate) use sequence::{Arrival, SequenceGaps};

/// A large message of either source.
pub(crate) enum Held {
    /// A shared-memory sample: the publisher gets its memory back once it is written.
    Shm(shm::ShmSample),
    /// A DDS sample's complete CDR bytes, received into the heap.
    Dds(Vec<u8>),
    /// A Zenoh sample's bytes in Zenoh's own buffers: one piece, or several where Zenoh
    /// received the message in fragments (left apart: the writer copies them once).
    #[cfg(feature = "zenoh")]
    Zenoh(::zenoh::bytes::ZBytes),
}

impl LoanedBytes for Held {
    fn byte_len(&self) -> usize {
        match self {
            Held::Shm(sample) => sample.byte_len(),
            Held::Dds(bytes) => bytes.len(),
            #[cfg(feature = "zenoh")]
            Held::Zenoh(bytes) => bytes.len(),
        }
    }

    fn with_parts<R>(&self, use_parts: impl FnOnce(&[&[u8]]) -> R) -> R {
        match self {
            Held::Shm(sample) => sample.with_parts(use_parts),
            Held::Dds(bytes) => use_parts(&[bytes]),
            #[cfg(feature = "zenoh")]
            Held::Zenoh(bytes) => {
                let mut slices = bytes.slices();
                match (slices.next(), slices.next()) {
                    (Some(only), None) => use_parts(&[only]),
                    _ => use_parts(&bytes.slices().collect::<Vec<_>>()),
                }
            }
        }
    }

    fn settle(&mut self) -> bool {
        match self {
            Held::Shm(sample) => sample.settle(),
            _ => true,
        }
    }
}

/// What every source is connected to: its handoff to the writer, the registry of topics
/// and problems, and the recording's stop flag.
pub(crate) struct SourceLink {
    pub tx: Sender<Held>,
    pub registry: Arc<TopicRegistry>,
    pub stop: Arc<AtomicBool>,
    /// What the receive thread reports about itself.
    pub stats: Arc<stats::ReceiveStats>,
    /// Changes of the selection while recording.
    pub selection: SelectionLink,
}

/// A receive thread's view of the selection changes: which it took last.
pub(crate) struct SelectionLink {
    live: Arc<LiveSelection>,
    /// This receive thread among the recording's.
    id: usize,
    taken: u64,
}

impl SelectionLink {
    /// Receive thread `id`'s link to `live`.
    pub fn new(live: Arc<LiveSelection>, id: usize) -> Self {
        Self { live, id, taken: 0 }
    }

    /// A change this thread has not taken yet (one atomic load when there is none).
    pub fn pending(&self) -> Option<Change> {
        if self.live.version() == self.taken {
            return None;
        }
        self.live
            .change()
            .filter(|change| change.version > self.taken)
    }

    /// The change of `version` took effect at `time_ns`: what is no longer selected was
    /// received for the last time before, what is added opens after.
    pub fn took(&mut self, version: u64, time_ns: u64) {
        self.taken = version;
        self.live.taken(self.id, version, time_ns);
    }
}

impl SourceLink {
    /// Whether the recording is stopping.
    pub fn stopping(&self) -> bool {
        self.stop.load(Ordering::Acquire)
    }

    /// Records why `what` cannot be recorded.
    pub fn note_problem(&self, what: &str, reason: String) {
        self.registry.note_problem(what, reason);
    }
}

/// Settings every source has.
#[derive(Clone)]
pub(crate) struct SourceSettings {
    /// Which topics to record.
    pub filter: TopicFilter,
    /// Which of their samples to keep.
    pub throttles: Throttles,
    /// Messages this large or larger are lent to the writer; smaller ones are copied.
    pub zero_copy_threshold: usize,
    /// How often the source looks for new and vanished topics.
    pub discovery_interval: Duration,
    /// The receive thread's real-time priority (`SCHED_FIFO`); 0 for none.
    pub receive_priority: u8,
}

/// Hands one received message to the writer: copied into the byte ring when small, lent
/// as `held` when large. When the handoff is full the message is dropped and counted;
/// true when it was handed over.
pub(crate) fn hand_over(
    tx: &mut Sender<Held>,
    topic: &Topic,
    stamps: Stamps,
    held: Held,
    zero_copy_threshold: usize,
) -> bool {
    let len = held.byte_len();
    let pushed = if len >= zero_copy_threshold {
        tx.push_loaned(topic.index, stamps, len, held).is_ok()
    } else {
        held.with_parts(|parts| tx.push_copied(topic.index, stamps, parts))
    };
    if !pushed {
        topic.counters.add_dropped();
    }
    pushed
}

/// Tells the writer about a topic before its first message; false while the handoff is
/// full (the source tries again later).
pub(crate) fn announce(tx: &mut Sender<Held>, topic: &Arc<Topic>) -> bool {
    tx.push_control(Item::Announce(topic.clone())).is_ok()
}

/// Retirements, unselections and markers, handed over in order once the handoff has
/// room.
#[derive(Default)]
pub(crate) struct Retirements {
    pending: VecDeque<Item<Held>>,
}

impl Retirements {
    /// Queues the retirement of topic `index` (its source went away).
    pub fn push(&mut self, index: u32) {
        self.pending.push_back(Item::Retire(index));
    }

    /// Queues the end of topic `index`, no longer selected.
    pub fn unselect(&mut self, index: u32) {
        self.pending.push_back(Item::Unselect(index));
    }

    /// Queues a marker, to follow what was queued before it.
    pub fn mark(&mut self, marker: Marker) {
        self.pending.push_back(Item::Mark(marker));
    }

    /// Hands over what the handoff has room for, in order; true when nothing is left.
    pub fn send(&mut self, tx: &mut Sender<Held>) -> bool {
        while let Some(item) = self.pending.pop_front() {
            if let Err(item) = tx.push_control(item) {
                self.pending.push_front(item);
                return false;
            }
        }
        true
    }

    /// Hands over everything, waiting at most `limit` for the writer to make room (a
    /// selection change's items must precede the samples of the topics it adds).
    pub fn send_all(&mut self, tx: &mut Sender<Held>, limit: Duration) {
        let deadline = std::time::Instant::now() + limit;
        while !self.send(tx) && std::time::Instant::now() < deadline {
            tx.wake();
            std::thread::sleep(Duration::from_micros(200));
        }
        tx.wake();
    }
}

/// How long a receive thread waits for room to hand over a selection change.
const CHANGE_HANDOVER_LIMIT: Duration = Duration::from_secs(1);

/// Ends a receive thread's part of a selection change, once the topics it unselects are
/// received for the last time and queued to end: a marker stamped now follows them into
/// the file, handed over before any topic the change adds opens, and the recording is
/// told the moment.
pub(crate) fn conclude_change(
    retirements: &mut Retirements,
    link: &mut SourceLink,
    change: Change,
) {
    let time_ns = crate::handoff::now_ns();
    retirements.mark(Marker {
        time_ns,
        text: change.text,
    });
    retirements.send_all(&mut link.tx, CHANGE_HANDOVER_LIMIT);
    link.selection.took(change.version, time_ns);
}
