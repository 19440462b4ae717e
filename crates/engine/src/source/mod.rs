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
pub(crate) mod priority;
pub(crate) mod shm;
pub(crate) mod spill;
pub(crate) mod stats;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use crate::handoff::{Item, LoanedBytes, Sender, Stamps};
use crate::registry::TopicRegistry;
use crate::select::TopicFilter;
use crate::throttle::Throttles;
use crate::topic::Topic;

/// A large message of either source.
pub(crate) enum Held {
    /// A shared-memory sample: the publisher gets its memory back once it is written.
    Shm(shm::ShmSample),
    /// A DDS sample's complete CDR bytes, received into the heap.
    Dds(Vec<u8>),
}

impl LoanedBytes for Held {
    fn user_header(&self) -> &[u8] {
        match self {
            Held::Shm(sample) => sample.user_header(),
            Held::Dds(_) => &[],
        }
    }

    fn payload(&self) -> &[u8] {
        match self {
            Held::Shm(sample) => sample.payload(),
            Held::Dds(bytes) => bytes,
        }
    }

    fn settle(&mut self) -> bool {
        match self {
            Held::Shm(sample) => sample.settle(),
            Held::Dds(_) => true,
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
    let len = held.user_header().len() + held.payload().len();
    let pushed = if len >= zero_copy_threshold {
        tx.push_loaned(topic.index, stamps, len, held).is_ok()
    } else {
        tx.push_copied(topic.index, stamps, &[held.user_header(), held.payload()])
    };
    if !pushed {
        topic.counters.add_dropped();
    }
    pushed
}

/// Each publisher's latest sequence number, to count the samples it sent that never
/// arrived.
#[derive(Debug)]
pub(crate) struct SequenceGaps<K> {
    last: Vec<(K, u64)>,
}

impl<K> Default for SequenceGaps<K> {
    fn default() -> Self {
        Self { last: Vec::new() }
    }
}

impl<K: PartialEq> SequenceGaps<K> {
    /// Notes that `publisher` sent `sequence`; returns how many it skipped since its last.
    /// Out-of-order or repeated numbers skip nothing (the highest is kept), and a
    /// publisher's first sample skips nothing: what it published before the recorder
    /// subscribed was never the recorder's to lose.
    pub fn track(&mut self, publisher: K, sequence: u64) -> u64 {
        match self.last.iter_mut().find(|(id, _)| *id == publisher) {
            Some((_, previous)) => {
                let lost = sequence.saturating_sub(previous.saturating_add(1));
                *previous = (*previous).max(sequence);
                lost
            }
            None => {
                self.last.push((publisher, sequence));
                0
            }
        }
    }

    /// Whether `publisher` sent a sample before.
    pub fn knows(&self, publisher: &K) -> bool {
        self.last.iter().any(|(id, _)| id == publisher)
    }

    /// Forgets a publisher that went away.
    pub fn forget(&mut self, publisher: &K) {
        self.last.retain(|(id, _)| id != publisher);
    }
}

/// Tells the writer about a topic before its first message; false while the handoff is
/// full (the source tries again later).
pub(crate) fn announce(tx: &mut Sender<Held>, topic: &Arc<Topic>) -> bool {
    tx.push_control(Item::Announce(topic.clone())).is_ok()
}

/// Topics whose source went away, to be retired once the handoff has room.
#[derive(Default)]
pub(crate) struct Retirements {
    pending: Vec<u32>,
}

impl Retirements {
    /// Queues the retirement of topic `index`.
    pub fn push(&mut self, index: u32) {
        self.pending.push(index);
    }

    /// Hands over the retirements the handoff has room for.
    pub fn send(&mut self, tx: &mut Sender<Held>) {
        self.pending
            .retain(|&index| tx.push_control(Item::Retire(index)).is_err());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sequence_gaps_count_what_was_skipped() {
        let mut gaps = SequenceGaps::default();
        assert_eq!(gaps.track('a', 5), 0);
        assert_eq!(gaps.track('a', 6), 0);
        assert_eq!(gaps.track('a', 9), 2);
        assert_eq!(gaps.track('a', 8), 0, "late: nothing more is lost");
        assert_eq!(gaps.track('a', 10), 0);
        assert!(!gaps.knows(&'b'));
        assert_eq!(gaps.track('b', 100), 0, "a new publisher's first sample");
        assert!(gaps.knows(&'b'));
        gaps.forget(&'a');
        assert_eq!(gaps.track('a', 50), 0);
    }
}
