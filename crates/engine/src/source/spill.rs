//! The spill pool: recorder memory that takes a large shared-memory sample the writer has
//! not reached yet, when its loan is needed for the next sample.
//!
//! iceoryx2 lends a subscriber only so many samples per publisher
//! (`subscriber_max_borrowed_samples`, 2 by default). Were the writer to hold them all
//! while the publisher's queue fills, the receive thread could take no further sample and
//! the publisher would overwrite the waiting ones without anyone knowing. So the receive
//! thread copies a held sample here and releases its loan (see `shm::lease`); when the
//! pool is full the sample waiting in the queue is taken and dropped, counted.
//!
//! The pool is one block of memory allocated, faulted in and (where permitted) locked when
//! the source opens, so that the receive thread never waits for the kernel to find it a
//! page. Spilled samples take consecutive pieces of the block, wrapping around; the writer
//! frees a piece once written (in any order) and the receive thread reuses the oldest
//! pieces once they are free.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use crate::handoff::LoanedBytes;

/// Pieces start on cache lines of their own.
const PIECE_ALIGN: usize = 64;

/// The pool's memory and the flags the writer raises when it is done with a piece.
struct Block {
    memory: Memory,
    /// Per piece slot: the writer is done with it.
    freed: Box<[AtomicBool]>,
}

/// Anonymous memory, faulted in (and locked where permitted) a few MiB at a time.
///
/// Mapping, faulting in and unmapping a large block in one call holds the process's
/// memory map for its whole length, and every other thread of the process that faults a
/// page meanwhile (another session's receive thread touching shared memory, say) waits
/// for it: hundreds of milliseconds for a few hundred MiB, long enough for a publisher's
/// queue to overflow. Pieces of [`STEP`] bytes keep each such wait short.
struct Memory {
    base: *mut u8,
    len: usize,
    locked: bool,
}

/// How much memory is faulted in or given back per call.
const STEP: usize = 4 << 20;

impl Memory {
    /// `len` bytes faulted in, and locked unless the lock was refused (the reason).
    fn new(len: usize) -> Result<(Self, Option<String>), String> {
        if len == 0 {
            let none = Self {
                base: std::ptr::null_mut(),
                len: 0,
                locked: false,
            };
            return Ok((none, None));
        }
        // SAFETY: a fresh private anonymous mapping; nothing else refers to it.
        let base = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if base == libc::MAP_FAILED {
            let error = std::io::Error::last_os_error();
            return Err(format!("cannot allocate {len} bytes: {error}"));
        }
        let mut memory = Self {
            base: base.cast(),
            len,
            locked: false,
        };
        for (start, step) in memory.steps() {
            // SAFETY: each step lies within the mapping made above.
            unsafe {
                let at = memory.base.add(start);
                if libc::madvise(at.cast(), step, libc::MADV_POPULATE_WRITE) != 0 {
                    // Kernels before 5.14: touching each page faults it in.
                    for page in (0..step).step_by(4096) {
                        at.add(page).write_volatile(0);
                    }
                }
            }
        }
        let mut refused = None;
        for (start, step) in memory.steps() {
            // SAFETY: within the mapping; locking changes no content.
            if unsafe { libc::mlock(memory.base.add(start).cast(), step) } != 0 {
                refused = Some(std::io::Error::last_os_error().to_string());
                // SAFETY: as above; unlocks what the earlier steps locked.
                unsafe { libc::munlock(memory.base.cast(), start) };
                break;
            }
        }
        memory.locked = refused.is_none();
        Ok((memory, refused))
    }

    /// The block's pieces of at most [`STEP`] bytes: (start, length).
    fn steps(&self) -> impl Iterator<Item = (usize, usize)> {
        let len = self.len;
        (0..len)
            .step_by(STEP)
            .map(move |start| (start, STEP.min(len - start)))
    }
}

impl Drop for Memory {
    fn drop(&mut self) {
        if self.len == 0 {
            return;
        }
        for (start, step) in self.steps() {
            // SAFETY: within the mapping, which nothing refers to any more (the block is
            // dropped with its last Spilled).
            unsafe {
                let at = self.base.add(start).cast();
                if self.locked {
                    libc::munlock(at, step);
                }
                libc::madvise(at, step, libc::MADV_DONTNEED);
            }
        }
        // SAFETY: the mapping made in `new`, its pages already given back.
        unsafe { libc::munmap(self.base.cast(), self.len) };
    }
}

// SAFETY: `memory` is plain anonymous memory. The receive thread writes only pieces no
// `Spilled` refers to (the allocator below hands out disjoint pieces and takes one back
// only once its `Spilled` raised its flag), and a `Spilled` only reads its own piece.
unsafe impl Send for Block {}
// SAFETY: as for Send: shared access reads disjoint pieces or touches atomics.
unsafe impl Sync for Block {}

/// Where one spilled sample lies in the block.
#[derive(Debug, Clone, Copy, Default)]
struct Piece {
    start: usize,
    #[cfg_attr(not(test), allow(dead_code))]
    end: usize,
}

/// A bounded, preallocated block of memory for spilled samples; only the receive thread
/// spills into it.
pub(crate) struct SpillPool {
    block: Arc<Block>,
    /// Pieces handed out, oldest first, as a ring of `freed.len()` slots.
    pieces: Box<[Piece]>,
    oldest: usize,
    outstanding: usize,
    /// Where the newest piece ends.
    next_start: usize,
}

/// How the pool's memory was set up.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PoolMemory {
    /// Bytes allocated and faulted in.
    pub bytes: usize,
    /// Why the memory could not be locked (`mlock`), if it could not.
    pub lock_refused: Option<String>,
}

impl SpillPool {
    /// A pool of `limit` bytes, faulted in and locked in memory where permitted; pieces
    /// for samples of at least `smallest` bytes (the zero-copy threshold) bound how many
    /// samples it can hold at once.
    pub fn new(limit: usize, smallest: usize) -> (Self, PoolMemory) {
        let (memory, lock_refused) = match Memory::new(limit) {
            Ok(made) => made,
            Err(reason) => (Memory::new(0).expect("nothing to map").0, Some(reason)),
        };
        let len = memory.len;
        let slots = (len / smallest.max(PIECE_ALIGN)).clamp(1, 1 << 16);
        let block = Arc::new(Block {
            memory,
            freed: (0..slots).map(|_| AtomicBool::new(true)).collect(),
        });
        let pool = Self {
            block,
            pieces: vec![Piece::default(); slots].into_boxed_slice(),
            oldest: 0,
            outstanding: 0,
            next_start: 0,
        };
        let memory = PoolMemory {
            bytes: len,
            lock_refused,
        };
        (pool, memory)
    }

    /// Room for a message of `len` bytes whose user header is the first `header_len`,
    /// to be filled with [`Spilled::fill`] before it is handed over; `None` when the
    /// pool has no room for it.
    pub fn reserve(&mut self, header_len: usize, len: usize) -> Option<Spilled> {
        let (slot, start) = self.allocate(len)?;
        Some(Spilled {
            block: self.block.clone(),
            slot,
            start,
            len,
            header_len: header_len.min(len),
        })
    }

    /// Copies a message (user header, then payload) into the pool at once; `None` when
    /// the pool has no room for it.
    #[cfg(test)]
    pub fn spill(&mut self, user_header: &[u8], payload: &[u8]) -> Option<Spilled> {
        let mut spilled = self.reserve(user_header.len(), user_header.len() + payload.len())?;
        spilled.fill(0, user_header);
        spilled.fill(user_header.len(), payload);
        Some(spilled)
    }

    /// Takes back the oldest pieces the writer is done with.
    fn take_back(&mut self) {
        while self.outstanding > 0 && self.block.freed[self.oldest].load(Ordering::Acquire) {
            self.oldest = (self.oldest + 1) % self.pieces.len();
            self.outstanding -= 1;
        }
        if self.outstanding == 0 {
            self.next_start = 0;
        }
    }

    /// A slot and the start of `len` free bytes, after the newest piece or wrapped to the
    /// block's start; `None` when neither has room.
    fn allocate(&mut self, len: usize) -> Option<(usize, usize)> {
        self.take_back();
        let slots = self.pieces.len();
        let need = len.div_ceil(PIECE_ALIGN).max(1) * PIECE_ALIGN;
        if self.outstanding == slots || need > self.block.memory.len {
            return None;
        }
        let start = if self.outstanding == 0 {
            0
        } else {
            let oldest = self.pieces[self.oldest].start;
            let next = self.next_start;
            if next > oldest {
                // Free: from the newest piece to the block's end, and before the oldest.
                if next + need <= self.block.memory.len {
                    next
                } else if need <= oldest {
                    0
                } else {
                    return None;
                }
            } else if next + need <= oldest {
                next
            } else {
                return None;
            }
        };
        let slot = (self.oldest + self.outstanding) % slots;
        self.pieces[slot] = Piece {
            start,
            end: start + need,
        };
        self.block.freed[slot].store(false, Ordering::Relaxed);
        self.outstanding += 1;
        self.next_start = start + need;
        Some((slot, start))
    }

    /// Bytes held by spilled samples the writer is not done with, alignment included.
    #[cfg(test)]
    pub fn in_use(&mut self) -> usize {
        self.take_back();
        (0..self.outstanding)
            .map(|i| (self.oldest + i) % self.pieces.len())
            .filter(|&slot| !self.block.freed[slot].load(Ordering::Acquire))
            .map(|slot| self.pieces[slot].end - self.pieces[slot].start)
            .sum()
    }
}

/// A spilled message; its piece of the pool is free again once it is dropped (written).
pub(crate) struct Spilled {
    block: Arc<Block>,
    slot: usize,
    start: usize,
    len: usize,
    header_len: usize,
}

impl Spilled {
    fn bytes(&self) -> &[u8] {
        // SAFETY: the piece is this Spilled's alone (the pool hands out disjoint pieces and
        // takes one back only once the flag raised on drop says so); it is written only
        // through `fill`, which borrows the Spilled mutably.
        unsafe { std::slice::from_raw_parts(self.block.memory.base.add(self.start), self.len) }
    }

    /// Copies `bytes` into the message at `at` (user header, then payload): the receive
    /// thread fills a reserved piece, in one go or a slice at a time, before handing the
    /// Spilled over.
    pub fn fill(&mut self, at: usize, bytes: &[u8]) {
        assert!(
            at + bytes.len() <= self.len,
            "a fill past the reserved piece"
        );
        // SAFETY: [start + at, start + at + len) lies in this Spilled's piece (checked
        // above), which nothing else reads or writes while it is borrowed mutably.
        unsafe {
            std::ptr::copy_nonoverlapping(
                bytes.as_ptr(),
                self.block.memory.base.add(self.start + at),
                bytes.len(),
            );
        }
    }
}

impl Spilled {
    /// The user header's bytes.
    pub fn user_header(&self) -> &[u8] {
        &self.bytes()[..self.header_len]
    }

    /// The payload's bytes.
    pub fn payload(&self) -> &[u8] {
        &self.bytes()[self.header_len..]
    }
}

impl LoanedBytes for Spilled {
    fn byte_len(&self) -> usize {
        self.len
    }

    fn with_parts<R>(&self, use_parts: impl FnOnce(&[&[u8]]) -> R) -> R {
        use_parts(&[self.user_header(), self.payload()])
    }
}

impl Drop for Spilled {
    fn drop(&mut self) {
        self.block.freed[self.slot].store(true, Ordering::Release);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pool_is_bounded_and_gets_its_bytes_back() {
        let (mut pool, memory) = SpillPool::new(4096, 64);
        assert_eq!(memory.bytes, 4096);
        let first = pool.spill(&[1, 2], &[3; 1022]).unwrap();
        assert_eq!(first.user_header(), &[1, 2]);
        assert_eq!(first.payload(), &[3; 1022]);
        let second = pool.spill(&[], &[5; 2048]).unwrap();
        assert!(
            pool.spill(&[], &[4; 1025]).is_none(),
            "1024 + 2048 + 1088 > 4096"
        );
        assert_eq!(pool.in_use(), 3072);
        drop(first);
        assert_eq!(pool.in_use(), 2048);
        let third = pool.spill(&[], &[6; 1000]).unwrap();
        // The end of the block is taken: the freed start is reused.
        let fourth = pool.spill(&[], &[7; 1024]).unwrap();
        assert!(
            pool.spill(&[], &[8; 1]).is_none(),
            "full up to the oldest piece"
        );
        assert_eq!(second.payload(), &[5; 2048], "untouched by the wrap");
        assert_eq!(third.payload(), &[6; 1000]);
        assert_eq!(fourth.payload(), &[7; 1024]);
        drop(second);
        drop(third);
        drop(fourth);
        assert_eq!(pool.in_use(), 0);
    }

    #[test]
    fn pieces_freed_out_of_order_are_reused_once_the_older_ones_are() {
        let (mut pool, _) = SpillPool::new(4096, 64);
        let a = pool.spill(&[], &[1; 2048]).unwrap();
        let b = pool.spill(&[], &[2; 2048]).unwrap();
        drop(b);
        assert!(
            pool.spill(&[], &[3; 64]).is_none(),
            "a still holds the oldest piece"
        );
        drop(a);
        let c = pool.spill(&[], &[3; 4096]).unwrap();
        assert_eq!(c.payload(), &[3; 4096]);
    }

    #[test]
    fn an_empty_pool_spills_nothing() {
        let (mut pool, memory) = SpillPool::new(0, 64);
        assert_eq!(memory.bytes, 0);
        assert!(pool.spill(&[], &[1]).is_none());
    }
}
