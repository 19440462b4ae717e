//! The lock-free handoff from the receive thread to the writer thread.
//!
//! Two single-producer single-consumer rings: one of items (what to write, in order),
//! one of bytes that holds the copies of small messages. Large messages travel as the
//! owned sample itself (`S`, any [`LoanedBytes`]), whose bytes stay where the source
//! received them (in shared memory, or in the heap for DDS); their total size in
//! flight is bounded by a counter the writer decrements once it has released them. A
//! push that would exceed any bound fails at once and the caller drops the message:
//! the receive side never waits for the writer.

use std::mem::MaybeUninit;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread::Thread;
use std::time::{SystemTime, UNIX_EPOCH};

use crate::config::RingConfig;
use crate::topic::Topic;

/// Receive and publish time stamps of one message, in ns since the Unix epoch.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Stamps {
    pub log_time: u64,
    pub publish_time: u64,
}

impl Stamps {
    /// Received at `log_time`; the publish time is taken to be the same until a source
    /// time stamp says otherwise.
    pub fn received_at(log_time: u64) -> Self {
        Self {
            log_time,
            publish_time: log_time,
        }
    }
}

/// CLOCK_REALTIME in ns since the Unix epoch.
pub(crate) fn now_ns() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64)
}

/// A large message whose bytes stay where they are until the writer wrote them.
pub(crate) trait LoanedBytes: Send + 'static {
    /// How many bytes the message has: user header and payload.
    fn byte_len(&self) -> usize;
    /// Gives the message's bytes (the user header, then the payload) to `use_parts`, in
    /// as many pieces as they are in memory, so that nobody joins them for the writer.
    fn with_parts<R>(&self, use_parts: impl FnOnce(&[&[u8]]) -> R) -> R;

    /// Claims the bytes for the writer before it reads them; false when the source gave
    /// them up meanwhile (the message then counts as dropped).
    fn settle(&mut self) -> bool {
        true
    }
}

/// One entry of the item ring.
pub(crate) enum Item<S> {
    /// A topic's first appearance; precedes its messages.
    Announce(Arc<Topic>),
    /// A small message whose `len` bytes (user header, then payload) wait in the byte ring.
    Copied {
        topic: u32,
        stamps: Stamps,
        len: usize,
    },
    /// A large message, still where its source received it (shared memory or heap).
    Loaned {
        topic: u32,
        stamps: Stamps,
        len: usize,
        sample: S,
    },
    /// The topic's service went away.
    Retire(u32),
    /// The topic is no longer selected (`rec topics-set`): retired, and no longer
    /// checked for its health.
    Unselect(u32),
    /// A marker to write into the file here, after everything handed over before it.
    Mark(recd_storage::Marker),
    /// `len` staged bytes of a sample not to write after all (one DDS delivered again).
    Skipped(usize),
    /// Everything before this was received; finish the files.
    Stop,
}

struct Shared {
    loaned_bytes: AtomicUsize,
    loaned_limit: usize,
}

/// The receive thread's end.
pub(crate) struct Sender<S> {
    items: rtrb::Producer<Item<S>>,
    bytes: rtrb::Producer<u8>,
    shared: Arc<Shared>,
    writer: Option<Thread>,
}

/// The writer thread's end.
pub(crate) struct Receiver<S> {
    items: rtrb::Consumer<Item<S>>,
    bytes: rtrb::Consumer<u8>,
    shared: Arc<Shared>,
}

/// Makes a handoff with the bounds of `config`, its memory faulted in.
pub(crate) fn handoff<S>(config: &RingConfig) -> (Sender<S>, Receiver<S>) {
    let (mut items_tx, mut items_rx) = rtrb::RingBuffer::new(config.items.max(2));
    let (mut bytes_tx, mut bytes_rx) = rtrb::RingBuffer::new(config.copy_bytes.max(1));
    fault_in(&mut items_tx, &mut items_rx, &mut bytes_tx, &mut bytes_rx);
    let shared = Arc::new(Shared {
        loaned_bytes: AtomicUsize::new(0),
        loaned_limit: config.loaned_bytes,
    });
    (
        Sender {
            items: items_tx,
            bytes: bytes_tx,
            shared: shared.clone(),
            writer: None,
        },
        Receiver {
            items: items_rx,
            bytes: bytes_rx,
            shared,
        },
    )
}

/// Writes through both rings once, here rather than on the receive thread: a fresh
/// ring's pages are faulted in and zeroed by the kernel as they are first written, which
/// took 7 % of a DDS receive thread's time at 100 B × 10 kHz until its 16 MiB byte ring
/// had gone round once (BENCHMARKS.md, "DDS small samples").
fn fault_in<S>(
    items_tx: &mut rtrb::Producer<Item<S>>,
    items_rx: &mut rtrb::Consumer<Item<S>>,
    bytes_tx: &mut rtrb::Producer<u8>,
    bytes_rx: &mut rtrb::Consumer<u8>,
) {
    while items_tx.push(Item::Skipped(0)).is_ok() {}
    while items_rx.pop().is_ok() {}
    let capacity = bytes_tx.buffer().capacity();
    if let Ok(chunk) = bytes_tx.write_chunk(capacity) {
        chunk.commit_all();
    }
    if let Ok(chunk) = bytes_rx.read_chunk(capacity) {
        chunk.commit_all();
    }
}

impl<S> Sender<S> {
    /// Names the thread to wake after pushing.
    pub fn set_consumer_thread(&mut self, thread: Thread) {
        self.writer = Some(thread);
    }

    /// Copies the concatenation of `parts` into the byte ring and queues it; `false` when
    /// a bound would be exceeded (nothing queued).
    pub fn push_copied(&mut self, topic: u32, stamps: Stamps, parts: &[&[u8]]) -> bool {
        match self.stage_copied(parts) {
            Some(len) => {
                self.push_staged(topic, stamps, len);
                true
            }
            None => false,
        }
    }

    /// Copies `parts` into the byte ring ahead of their item, for a source that learns the
    /// message's topic and stamps only after it has its bytes; `None` (nothing staged)
    /// when a bound would be exceeded. The next push must be [`Sender::push_staged`] with
    /// the returned length.
    pub fn stage_copied(&mut self, parts: &[&[u8]]) -> Option<usize> {
        let len: usize = parts.iter().map(|p| p.len()).sum();
        if self.items.slots() == 0 {
            return None;
        }
        let mut chunk = self.bytes.write_chunk_uninit(len).ok()?;
        let (first, second) = chunk.as_mut_slices();
        copy_parts(parts, first, second);
        // SAFETY: copy_parts initialized all `len` bytes of the chunk.
        unsafe { chunk.commit_all() };
        Some(len)
    }

    /// Queues the message [`Sender::stage_copied`] put into the byte ring.
    pub fn push_staged(&mut self, topic: u32, stamps: Stamps, len: usize) {
        let pushed = self.items.push(Item::Copied { topic, stamps, len });
        debug_assert!(
            pushed.is_ok(),
            "staging checked for a free slot and this is the only producer"
        );
    }

    /// Gives up the `len` bytes staged last: the writer reads past them.
    pub fn skip_staged(&mut self, len: usize) {
        let pushed = self.items.push(Item::Skipped(len));
        debug_assert!(
            pushed.is_ok(),
            "staging checked for a free slot and this is the only producer"
        );
    }

    /// Queues a large message held as a shared-memory sample; gives the sample back when a
    /// bound would be exceeded.
    pub fn push_loaned(
        &mut self,
        topic: u32,
        stamps: Stamps,
        len: usize,
        sample: S,
    ) -> Result<(), S> {
        let in_flight = self.shared.loaned_bytes.load(Ordering::Acquire);
        if self.items.slots() == 0 || in_flight + len > self.shared.loaned_limit {
            return Err(sample);
        }
        self.shared.loaned_bytes.fetch_add(len, Ordering::AcqRel);
        let pushed = self.items.push(Item::Loaned {
            topic,
            stamps,
            len,
            sample,
        });
        debug_assert!(
            pushed.is_ok(),
            "a slot was free and this is the only producer"
        );
        Ok(())
    }

    /// Queues an announcement, retirement or stop; gives it back when the ring is full.
    pub fn push_control(&mut self, item: Item<S>) -> Result<(), Item<S>> {
        self.items
            .push(item)
            .map_err(|rtrb::PushError::Full(item)| item)
    }

    /// Queues the stop mark, waiting for the writer to make room if need be (it always
    /// does: it keeps writing until it sees the mark).
    pub fn push_stop(&mut self) {
        let mut stop = Item::Stop;
        while let Err(item) = self.push_control(stop) {
            stop = item;
            self.wake();
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        self.wake();
    }

    /// Wakes the writer thread if it waits for items.
    pub fn wake(&self) {
        if let Some(thread) = &self.writer {
            thread.unpark();
        }
    }
}

impl<S> Receiver<S> {
    /// The next item, if any.
    pub fn pop(&mut self) -> Option<Item<S>> {
        self.items.pop().ok()
    }

    /// Gives the `len` bytes of the oldest copied message to `use_bytes` (as one or two
    /// slices, the ring may wrap), then frees them.
    pub fn with_copied<R>(&mut self, len: usize, use_bytes: impl FnOnce(&[&[u8]]) -> R) -> R {
        let chunk = self
            .bytes
            .read_chunk(len)
            .expect("the byte ring holds every copied message queued before its item");
        let (first, second) = chunk.as_slices();
        let result = use_bytes(&[first, second]);
        chunk.commit_all();
        result
    }

    /// Records that a loaned message of `len` bytes was released.
    pub fn release_loaned(&self, len: usize) {
        self.shared.loaned_bytes.fetch_sub(len, Ordering::AcqRel);
    }
}

fn copy_parts(parts: &[&[u8]], first: &mut [MaybeUninit<u8>], second: &mut [MaybeUninit<u8>]) {
    let mut offset = 0;
    for part in parts {
        let end = offset + part.len();
        if end <= first.len() {
            copy_into(&mut first[offset..end], part);
        } else if offset >= first.len() {
            copy_into(&mut second[offset - first.len()..end - first.len()], part);
        } else {
            // The part straddles the ring's wrap-around.
            let split = first.len() - offset;
            copy_into(&mut first[offset..], &part[..split]);
            copy_into(&mut second[..part.len() - split], &part[split..]);
        }
        offset = end;
    }
}

fn copy_into(dest: &mut [MaybeUninit<u8>], src: &[u8]) {
    debug_assert_eq!(dest.len(), src.len());
    // SAFETY: both slices are `src.len()` bytes long and cannot overlap (one is ours,
    // the other the caller's).
    unsafe {
        std::ptr::copy_nonoverlapping(src.as_ptr(), dest.as_mut_ptr().cast::<u8>(), src.len());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ring(
        items: usize,
        copy_bytes: usize,
        loaned_bytes: usize,
    ) -> (Sender<Vec<u8>>, Receiver<Vec<u8>>) {
        handoff(&RingConfig {
            items,
            copy_bytes,
            loaned_bytes,
        })
    }

    const STAMPS: Stamps = Stamps {
        log_time: 1,
        publish_time: 2,
    };

    fn pop_copied(rx: &mut Receiver<Vec<u8>>) -> Vec<u8> {
        match rx.pop() {
            Some(Item::Copied { len, .. }) => rx.with_copied(len, |parts| parts.concat()),
            _ => panic!("expected a copied message"),
        }
    }

    #[test]
    fn copies_survive_wrap_around_in_order() {
        let (mut tx, mut rx) = ring(8, 10, 0);
        for round in 0..20u8 {
            let header = [round];
            let payload = [round.wrapping_mul(3), round.wrapping_add(7), 9];
            assert!(tx.push_copied(0, STAMPS, &[&header, &payload]));
            assert_eq!(
                pop_copied(&mut rx),
                vec![round, round.wrapping_mul(3), round.wrapping_add(7), 9]
            );
        }
    }

    #[test]
    fn full_byte_ring_refuses_without_queueing() {
        let (mut tx, mut rx) = ring(8, 8, 0);
        assert!(tx.push_copied(0, STAMPS, &[&[1; 6]]));
        assert!(!tx.push_copied(0, STAMPS, &[&[2; 3]]));
        assert_eq!(pop_copied(&mut rx), vec![1; 6]);
        assert!(rx.pop().is_none());
    }

    #[test]
    fn full_item_ring_refuses() {
        let (mut tx, _rx) = ring(2, 100, 100);
        assert!(tx.push_copied(0, STAMPS, &[&[1]]));
        assert!(tx.push_copied(0, STAMPS, &[&[1]]));
        assert!(!tx.push_copied(0, STAMPS, &[&[1]]));
        assert_eq!(tx.push_loaned(0, STAMPS, 1, vec![1]), Err(vec![1]));
    }

    #[test]
    fn loaned_bytes_are_bounded_until_released() {
        let (mut tx, mut rx) = ring(8, 8, 100);
        assert!(tx.push_loaned(0, STAMPS, 60, vec![0; 60]).is_ok());
        assert_eq!(tx.push_loaned(0, STAMPS, 60, vec![1; 60]), Err(vec![1; 60]));
        match rx.pop() {
            Some(Item::Loaned { len, .. }) => rx.release_loaned(len),
            _ => panic!("expected a loaned message"),
        }
        assert!(tx.push_loaned(0, STAMPS, 60, vec![2; 60]).is_ok());
    }
}
