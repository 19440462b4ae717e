//! A recorded topic: how it is named and described in the file, and its counters.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;

use recd_health::TopicHealth;

/// How a topic is described in the file: its schema and channel records. Each source
/// fills it in its own encoding (see [`recd_storage::iceoryx2`] for shared memory).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChannelSpec {
    /// The channel's message encoding.
    pub message_encoding: String,
    /// The schema's name (the message type).
    pub schema_name: String,
    /// The schema's encoding.
    pub schema_encoding: String,
    /// The schema's data (a message definition), empty where none is known.
    pub schema_data: Vec<u8>,
    /// The channel's metadata.
    pub metadata: BTreeMap<String, String>,
}

/// What the writer needs to know of a topic; shared by its source's thread, the writer
/// thread and the status.
#[derive(Debug)]
pub struct Topic {
    /// Index of the topic within its recording.
    pub index: u32,
    /// The name the channel gets in the file.
    pub name: String,
    /// Where it is recorded from: the iceoryx2 service, or `dds:` and the DDS topic.
    pub service: String,
    /// Its schema and channel records.
    pub channel: ChannelSpec,
    /// Whether the last message is repeated at the start of every new file (the source
    /// keeps a history for late subscribers).
    pub latched: bool,
    /// Live counts.
    pub counters: TopicCounters,
    /// Its health as the writer last checked it (renewed on changes only).
    pub health: Mutex<TopicHealth>,
}

/// Per-topic counts, updated without locks while recording.
#[derive(Debug, Default)]
pub struct TopicCounters {
    receive: ReceiveCounts,
    write: WriteCounts,
    /// Publishers (iceoryx2) or writers (DDS) the source sees now.
    publishers: AtomicU64,
}

/// The receive thread's counts, on a cache line of their own so that the writer
/// thread's updates do not bounce it between cores at every message.
#[derive(Debug, Default)]
#[repr(align(128))]
struct ReceiveCounts {
    received: AtomicU64,
    dropped: AtomicU64,
    lost: AtomicU64,
    overflows: AtomicU64,
    filtered: AtomicU64,
    repeated: AtomicU64,
    unknown_loss: AtomicBool,
}

/// The writer thread's counts.
#[derive(Debug, Default)]
#[repr(align(128))]
struct WriteCounts {
    written: AtomicU64,
    bytes_written: AtomicU64,
    paused: AtomicU64,
    evicted: AtomicU64,
    /// When the newest sample was received (ns since the epoch; 0 before the first), as
    /// the health watch last saw it.
    last_sample_ns: AtomicU64,
}

/// A topic's counts at one moment.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct TopicCounts {
    /// Samples taken from the source (iceoryx2 or DDS).
    pub received: u64,
    /// Received samples that were not written: the handoff was full, or the write failed.
    pub dropped: u64,
    /// Samples never received: gaps in the publishers' sequence numbers.
    pub lost: u64,
    /// Receive passes that found the subscriber's queue full: the receive thread came
    /// late, and the publisher may have overwritten samples nobody can count (unless
    /// sequence numbers show them as `lost`).
    #[serde(default)]
    pub overflows: u64,
    /// An overflow was found on a topic whose samples carry no sequence numbers: the
    /// publisher may have overwritten samples in its queue, and nobody can say how many.
    /// The other counts are exact; the file may still lack samples they do not show.
    #[serde(default)]
    pub unknown_loss: bool,
    /// Messages written to the file(s), latched repeats not included.
    pub written: u64,
    /// Payload bytes written (user header included).
    pub bytes_written: u64,
    /// Received samples not written because the session was paused (`rec pause`).
    #[serde(default)]
    pub paused: u64,
    /// Received samples a rate limit or downsampling let go of unwritten (released at
    /// once, never copied).
    #[serde(default)]
    pub filtered: u64,
    /// Received samples a pre-trigger session let go of without a trigger: pushed out
    /// of its buffer by age or size, larger than the whole buffer, or still held when
    /// the session stopped.
    #[serde(default)]
    pub evicted: u64,
    /// Samples that arrived again and were let go of: a publisher's sequence number seen
    /// already (two subscriptions overlapping, a history sent twice). Not in `received`:
    /// `received + repeated` is what arrived.
    #[serde(default)]
    pub repeated: u64,
}

impl TopicCounters {
    pub(crate) fn add_received(&self) {
        self.receive.received.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn add_dropped(&self) {
        self.receive.dropped.fetch_add(1, Ordering::Relaxed);
    }

    /// Notes `n` samples received and let go of at once, unwritten (a held topic's
    /// oldest gathered samples beyond its bound, or all it gathered when the session
    /// stopped).
    pub(crate) fn add_received_dropped(&self, n: u64) {
        self.receive.received.fetch_add(n, Ordering::Relaxed);
        self.receive.dropped.fetch_add(n, Ordering::Relaxed);
    }

    pub(crate) fn add_filtered(&self) {
        self.receive.filtered.fetch_add(1, Ordering::Relaxed);
    }

    /// Notes a sample that arrived again (its sequence number seen already).
    pub(crate) fn add_repeated(&self) {
        self.receive.repeated.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn add_lost(&self, n: u64) {
        self.receive.lost.fetch_add(n, Ordering::Relaxed);
    }

    /// Notes a receive pass that found the queue full; `unseen` when no sequence number
    /// can show what was overwritten.
    pub(crate) fn add_overflow(&self, unseen: bool) {
        self.receive.overflows.fetch_add(1, Ordering::Relaxed);
        if unseen {
            self.receive.unknown_loss.store(true, Ordering::Relaxed);
        }
    }

    /// Notes that samples may be missing that nobody can count (a sample carries no
    /// sequence number; a writer left while its topic was held).
    pub(crate) fn mark_unknown_loss(&self) {
        self.receive.unknown_loss.store(true, Ordering::Relaxed);
    }

    pub(crate) fn add_written(&self, bytes: u64) {
        self.write.written.fetch_add(1, Ordering::Relaxed);
        self.write.bytes_written.fetch_add(bytes, Ordering::Relaxed);
    }

    pub(crate) fn add_paused(&self) {
        self.write.paused.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn set_last_sample(&self, t_ns: u64) {
        self.write.last_sample_ns.store(t_ns, Ordering::Relaxed);
    }

    /// When the newest sample was received (ns since the epoch), as the health watch
    /// last saw it (every 20 ms); `None` before the first, or with the watch off.
    pub fn last_sample_ns(&self) -> Option<u64> {
        Some(self.write.last_sample_ns.load(Ordering::Relaxed)).filter(|&t| t != 0)
    }

    pub(crate) fn add_evicted(&self) {
        self.write.evicted.fetch_add(1, Ordering::Relaxed);
    }

    /// Moves messages counted as written to dropped: they were acknowledged by the file
    /// but a write error kept them from reaching it.
    pub(crate) fn unwrite(&self, messages: u64, bytes: u64) {
        self.write.written.fetch_sub(messages, Ordering::Relaxed);
        self.write.bytes_written.fetch_sub(bytes, Ordering::Relaxed);
        self.receive.dropped.fetch_add(messages, Ordering::Relaxed);
    }

    pub(crate) fn set_publishers(&self, publishers: usize) {
        self.publishers.store(publishers as u64, Ordering::Relaxed);
    }

    /// Samples taken from the source so far.
    pub fn received(&self) -> u64 {
        self.receive.received.load(Ordering::Relaxed)
    }

    /// The publishers (iceoryx2) or writers (DDS) of the topic as its source last saw
    /// them.
    pub fn publishers(&self) -> u64 {
        self.publishers.load(Ordering::Relaxed)
    }

    /// The counts as of now.
    pub fn snapshot(&self) -> TopicCounts {
        TopicCounts {
            received: self.receive.received.load(Ordering::Relaxed),
            dropped: self.receive.dropped.load(Ordering::Relaxed),
            lost: self.receive.lost.load(Ordering::Relaxed),
            overflows: self.receive.overflows.load(Ordering::Relaxed),
            unknown_loss: self.receive.unknown_loss.load(Ordering::Relaxed),
            written: self.write.written.load(Ordering::Relaxed),
            bytes_written: self.write.bytes_written.load(Ordering::Relaxed),
            paused: self.write.paused.load(Ordering::Relaxed),
            evicted: self.write.evicted.load(Ordering::Relaxed),
            filtered: self.receive.filtered.load(Ordering::Relaxed),
            repeated: self.receive.repeated.load(Ordering::Relaxed),
        }
    }
}
