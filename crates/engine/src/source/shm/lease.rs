//! Loans the writer holds, and how the receive thread takes one back.
//!
//! A large sample goes to the writer still in shared memory, as long as the publisher's
//! borrow budget has room for it. When the budget is used up and another sample waits in
//! the subscriber's queue, the receive thread takes back the newest loan the writer has
//! not started writing: it copies that sample into the spill pool (or, the pool full,
//! gives it up, counted as dropped) and releases it, so the waiting sample can be taken
//! before the publisher overwrites it. A loan the writer is writing stays with it.
//!
//! A FullHD frame takes milliseconds to copy, and a receive thread copying it in one go
//! comes that late to every other topic. So the copy goes a slice at a time, between
//! receive passes: the sample stays borrowed until its copy is whole (the waiting sample
//! waits in the queue meanwhile), and the writer, should it come to the sample first,
//! writes it from shared memory and the copy ends unused.
//!
//! Each loan is a [`Lease`] whose state says who may touch its sample: the receive
//! thread while it is queued, the writer once it claimed it, the receive thread while it
//! takes it back and once the writer is done with it. The writer never releases a sample
//! itself: releasing locks the subscriber's state inside iceoryx2, and a writer thread
//! preempted with that lock held (by anything else the machine runs) would keep the
//! real-time receive thread waiting for it. So the writer marks the loan done and the
//! receive thread releases it at its next pass over the topic. Leases are reused (a
//! generation number tells a reused lease from its earlier life), so that taking a
//! sample allocates nothing once the source runs.

use std::cell::UnsafeCell;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::raw::{split_sample, RawSample};
use crate::handoff::LoanedBytes;
use crate::source::spill::{SpillPool, Spilled};

const FREE: u64 = 0;
const QUEUED: u64 = 1;
const WRITING: u64 = 2;
const RECLAIMING: u64 = 3;
const RECLAIMED: u64 = 4;
const DONE: u64 = 5;
const COPYING: u64 = 6;
const STATE_BITS: u32 = 3;
const STATE_MASK: u64 = (1 << STATE_BITS) - 1;

fn tag(generation: u64, state: u64) -> u64 {
    (generation << STATE_BITS) | state
}

/// Samples of one subscriber that the writer holds in shared memory.
#[derive(Default)]
pub(super) struct Borrows(Arc<AtomicUsize>);

impl Borrows {
    /// How many loans are held now.
    pub fn held(&self) -> usize {
        self.0.load(Ordering::Acquire)
    }

    fn lend(&self) -> Lent {
        self.0.fetch_add(1, Ordering::AcqRel);
        Lent(self.0.clone())
    }
}

/// One sample counted in [`Borrows`] until it is released.
struct Lent(Arc<AtomicUsize>);

impl Drop for Lent {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

/// One loan on its way to the file.
struct Lease {
    /// Generation and state (`FREE`, `QUEUED`, …).
    state: AtomicU64,
    header_len: UnsafeCell<usize>,
    /// The sample, while its loan is held.
    sample: UnsafeCell<Option<(RawSample, Lent)>>,
    /// Its copy, once taken back (none when the spill pool had no room).
    copy: UnsafeCell<Option<Spilled>>,
}

// SAFETY: the cells are written only by the side the state gives them to: the receive
// thread while `FREE`, `RECLAIMING` or `DONE`, the writer while `RECLAIMED`. While
// `QUEUED`, `COPYING` or `WRITING` the sample cell is only read, by both sides (the
// receive thread to size and copy it, the writer to write it); the receive thread alone
// ends those states by writing. Every change of hands goes through the atomic state with
// Release/Acquire ordering.
unsafe impl Sync for Lease {}

impl Lease {
    fn new() -> Self {
        Self {
            state: AtomicU64::new(tag(0, FREE)),
            header_len: UnsafeCell::new(0),
            sample: UnsafeCell::new(None),
            copy: UnsafeCell::new(None),
        }
    }
}

/// A large sample handed to the writer: its loan, until the writer claims it.
pub(crate) struct LeasedSample {
    lease: Arc<Lease>,
    generation: u64,
    reading: Reading,
}

/// What a [`LeasedSample`]'s bytes are read from once settled.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Reading {
    /// Not claimed yet: only the receive thread reads it (to size it).
    Unsettled,
    Sample,
    Copy,
    /// Taken back with no room to copy it: nothing to write.
    Gone,
}

impl LeasedSample {
    /// Claims the sample for the writer, waiting out a take-back in progress; false when
    /// it was given up (the spill pool had no room), to be counted as dropped.
    fn claim(&mut self) -> bool {
        if self.reading == Reading::Unsettled {
            self.reading = loop {
                let now = self.lease.state.load(Ordering::Acquire);
                if now == tag(self.generation, RECLAIMED) {
                    // SAFETY: RECLAIMED gives the copy cell to the writer.
                    let copied = unsafe { (*self.lease.copy.get()).is_some() };
                    break if copied { Reading::Copy } else { Reading::Gone };
                }
                // Queued, or being copied a slice at a time: the sample is still whole in
                // shared memory, and writing it from there ends the copy.
                let claimable = [tag(self.generation, QUEUED), tag(self.generation, COPYING)];
                if claimable.contains(&now)
                    && (self.lease.state)
                        .compare_exchange(
                            now,
                            tag(self.generation, WRITING),
                            Ordering::AcqRel,
                            Ordering::Acquire,
                        )
                        .is_ok()
                {
                    break Reading::Sample;
                }
                if !claimable.contains(&now) {
                    // RECLAIMING: the receive thread is releasing it (microseconds).
                    std::thread::yield_now();
                }
            };
        }
        self.reading != Reading::Gone
    }

    fn bytes(&self) -> (&[u8], &[u8]) {
        // SAFETY: Unsettled is read only by the receive thread before the hand-over, and
        // Sample/Copy only by the writer that claimed it: in both the cell is theirs.
        unsafe {
            match self.reading {
                Reading::Unsettled | Reading::Sample => {
                    let (sample, _) = (*self.lease.sample.get())
                        .as_ref()
                        .expect("a held loan has its sample");
                    split_sample(sample, *self.lease.header_len.get())
                }
                Reading::Copy => {
                    let copy = (*self.lease.copy.get()).as_ref().expect("copied");
                    (copy.user_header(), copy.payload())
                }
                Reading::Gone => (&[], &[]),
            }
        }
    }
}

impl LeasedSample {
    /// The user header's bytes.
    pub fn user_header(&self) -> &[u8] {
        self.bytes().0
    }

    /// The payload's bytes.
    pub fn payload(&self) -> &[u8] {
        self.bytes().1
    }
}

impl LoanedBytes for LeasedSample {
    fn byte_len(&self) -> usize {
        let (header, payload) = self.bytes();
        header.len() + payload.len()
    }

    fn with_parts<R>(&self, use_parts: impl FnOnce(&[&[u8]]) -> R) -> R {
        let (header, payload) = self.bytes();
        use_parts(&[header, payload])
    }

    fn settle(&mut self) -> bool {
        self.claim()
    }
}

impl Drop for LeasedSample {
    fn drop(&mut self) {
        self.claim();
        let next = if self.reading == Reading::Sample {
            // Released by the receive thread (see the module's comment).
            DONE
        } else {
            // SAFETY: RECLAIMED gives the copy cell to the writer; freeing a piece of the
            // spill pool takes no lock.
            unsafe { drop((*self.lease.copy.get()).take()) };
            FREE
        };
        self.lease
            .state
            .store(tag(self.generation, next), Ordering::Release);
    }
}

/// The leases of one source, reused once the writer is done with them.
#[derive(Default)]
pub(super) struct Leases {
    all: Vec<Arc<Lease>>,
    next: usize,
}

impl Leases {
    /// Lends `sample` to the writer, counted in `borrows`; `issued` keeps it for a later
    /// take-back.
    pub fn lend(
        &mut self,
        sample: RawSample,
        header_len: usize,
        borrows: &Borrows,
        issued: &mut Issued,
    ) -> LeasedSample {
        let lease = self.free_lease();
        let generation = (lease.state.load(Ordering::Acquire) >> STATE_BITS) + 1;
        // SAFETY: the lease is FREE: nobody else touches its cells.
        unsafe {
            *lease.header_len.get() = header_len;
            *lease.sample.get() = Some((sample, borrows.lend()));
        }
        lease
            .state
            .store(tag(generation, QUEUED), Ordering::Release);
        issued.loans.push((lease.clone(), generation));
        LeasedSample {
            lease,
            generation,
            reading: Reading::Unsettled,
        }
    }

    fn free_lease(&mut self) -> Arc<Lease> {
        for _ in 0..self.all.len() {
            self.next = (self.next + 1) % self.all.len();
            let lease = &self.all[self.next];
            if lease.state.load(Ordering::Acquire) & STATE_MASK == FREE {
                return lease.clone();
            }
        }
        // Only while the number of samples in flight grows.
        let lease = Arc::new(Lease::new());
        self.all.push(lease.clone());
        lease
    }
}

/// The loans of one subscriber still held, oldest first: queued for the writer, being
/// written, being copied, or written and waiting to be released; and the copy under way.
#[derive(Default)]
pub(super) struct Issued {
    loans: Vec<(Arc<Lease>, u64)>,
    copying: Option<Copying>,
}

/// How many bytes are copied between two looks at the clock and at the loan's state.
const COPY_STEP: usize = 256 << 10;

/// A loan being copied into the spill pool a slice at a time. The sample stays borrowed
/// (and counted in [`Borrows`]) until its copy is whole; the writer may still claim it
/// meanwhile and write it from shared memory, which ends the copy.
struct Copying {
    lease: Arc<Lease>,
    generation: u64,
    /// The reserved piece; taken when the copy is handed to the writer.
    copy: Option<Spilled>,
    copied: usize,
}

impl Copying {
    /// Copies the next bytes until the copy is whole or `slice` has passed (at least
    /// [`COPY_STEP`] bytes either way).
    fn advance(&mut self, slice: Duration) -> TakenBack {
        let started = Instant::now();
        loop {
            if self.lease.state.load(Ordering::Acquire) != tag(self.generation, COPYING) {
                return TakenBack::Claimed;
            }
            let copy = self.copy.as_mut().expect("a copy under way has its piece");
            // SAFETY: COPYING lets this thread read the sample cell (the writer may read it
            // too once it claims the loan; nobody writes it before this thread does).
            let (header, payload) = unsafe {
                let (sample, _) = (*self.lease.sample.get()).as_ref().expect("a held loan");
                split_sample(sample, *self.lease.header_len.get())
            };
            let len = header.len() + payload.len();
            let end = (self.copied + COPY_STEP).min(len);
            if self.copied < header.len() {
                copy.fill(self.copied, &header[self.copied..end.min(header.len())]);
            }
            if end > header.len() {
                let from = self.copied.max(header.len());
                copy.fill(from, &payload[from - header.len()..end - header.len()]);
            }
            self.copied = end;
            if end == len {
                return self.hand_over_copy();
            }
            if started.elapsed() >= slice {
                return TakenBack::Copying;
            }
        }
    }

    /// The copy is whole: releases the sample and gives the writer the copy instead.
    fn hand_over_copy(&mut self) -> TakenBack {
        let copy = self.copy.take();
        match reclaim(&self.lease, self.generation, COPYING, copy) {
            true => TakenBack::Spilled,
            false => TakenBack::Claimed,
        }
    }

    /// Stops the copy, releasing the sample unwritten; false when the writer claimed it.
    fn give_up(&mut self) -> bool {
        self.copy = None;
        reclaim(&self.lease, self.generation, COPYING, None)
    }

    fn is(&self, lease: &Arc<Lease>, generation: u64) -> bool {
        Arc::ptr_eq(&self.lease, lease) && self.generation == generation
    }
}

impl Drop for Copying {
    fn drop(&mut self) {
        // Left unfinished (the topic given back): the writer writes it from shared memory.
        let _ = self.lease.state.compare_exchange(
            tag(self.generation, COPYING),
            tag(self.generation, QUEUED),
            Ordering::AcqRel,
            Ordering::Acquire,
        );
    }
}

/// Takes a loan back from `from` (QUEUED or COPYING) unless the writer claimed it
/// meanwhile (false): releases its sample and leaves the writer `copy` (none: given up).
fn reclaim(lease: &Lease, generation: u64, from: u64, copy: Option<Spilled>) -> bool {
    if lease
        .state
        .compare_exchange(
            tag(generation, from),
            tag(generation, RECLAIMING),
            Ordering::AcqRel,
            Ordering::Acquire,
        )
        .is_err()
    {
        return false;
    }
    // SAFETY: RECLAIMING gives both cells to this thread.
    unsafe {
        let held = (*lease.sample.get()).take().expect("a queued loan");
        *lease.copy.get() = copy;
        drop(held);
    }
    lease
        .state
        .store(tag(generation, RECLAIMED), Ordering::Release);
    true
}

/// What taking back a loan did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum TakenBack {
    /// The sample was copied into the spill pool and released.
    Spilled,
    /// The spill pool had no room, or the copying budget was spent: the sample was
    /// released unwritten (counted as dropped by the writer when it comes to it).
    GivenUp,
    /// The copy goes on in a later pass: the loan is still held.
    Copying,
    /// The writer claimed the loan being copied: the copy ended, the loan is still held.
    Claimed,
    /// The writer had claimed every loan: nothing to take back.
    Nothing,
}

impl Issued {
    /// True when no loan is held: the writer let go of every sample.
    pub fn is_empty(&self) -> bool {
        self.loans.is_empty()
    }

    /// Frees a loan: goes on with the copy under way for up to `slice`, or takes back the
    /// newest loan the writer has not claimed (the one it will come to last) and starts
    /// copying it into the spill pool. Without `copy` (the copying budget spent), or with
    /// no room in the pool, the loan is given up instead.
    pub fn take_back(&mut self, spill: &mut SpillPool, copy: bool, slice: Duration) -> TakenBack {
        if let Some(mut copying) = self.copying.take() {
            let taken = if copy {
                copying.advance(slice)
            } else if copying.give_up() {
                TakenBack::GivenUp
            } else {
                TakenBack::Claimed
            };
            match taken {
                TakenBack::Copying => self.copying = Some(copying),
                TakenBack::Spilled | TakenBack::GivenUp => self.forget(&copying),
                // Claimed: free another loan, if one is left unclaimed.
                _ => {}
            }
            if taken != TakenBack::Claimed {
                return taken;
            }
        }
        self.take_back_newest(spill, copy, slice)
    }

    fn take_back_newest(
        &mut self,
        spill: &mut SpillPool,
        copy: bool,
        slice: Duration,
    ) -> TakenBack {
        for index in (0..self.loans.len()).rev() {
            let (lease, generation) = self.loans[index].clone();
            if lease.state.load(Ordering::Acquire) != tag(generation, QUEUED) {
                continue; // Claimed by the writer (or done with).
            }
            // SAFETY: QUEUED lets this thread read the cells (see `Copying::advance`).
            let (header_len, len) = unsafe {
                let (sample, _) = (*lease.sample.get()).as_ref().expect("a queued loan");
                let (header, payload) = split_sample(sample, *lease.header_len.get());
                (header.len(), header.len() + payload.len())
            };
            let reserved = copy.then(|| spill.reserve(header_len, len)).flatten();
            let Some(piece) = reserved else {
                if !reclaim(&lease, generation, QUEUED, None) {
                    continue;
                }
                self.loans.remove(index);
                return TakenBack::GivenUp;
            };
            if (lease.state)
                .compare_exchange(
                    tag(generation, QUEUED),
                    tag(generation, COPYING),
                    Ordering::AcqRel,
                    Ordering::Acquire,
                )
                .is_err()
            {
                continue; // Claimed meanwhile; the piece goes back with `piece`.
            }
            let mut copying = Copying {
                lease,
                generation,
                copy: Some(piece),
                copied: 0,
            };
            let taken = copying.advance(slice);
            match taken {
                TakenBack::Copying => self.copying = Some(copying),
                TakenBack::Spilled => self.forget(&copying),
                _ => continue,
            }
            return taken;
        }
        TakenBack::Nothing
    }

    /// Forgets a loan taken back.
    fn forget(&mut self, copying: &Copying) {
        self.loans
            .retain(|(lease, generation)| !copying.is(lease, *generation));
    }

    /// Ends the copy under way, if any: the writer writes that sample from shared memory.
    pub fn stop_copying(&mut self) {
        self.copying = None;
    }

    /// Releases the samples the writer is done with, giving their loans back to the
    /// publisher, and forgets the loans taken back or done with.
    pub fn release_written(&mut self) {
        self.loans.retain(|(lease, generation)| {
            let state = lease.state.load(Ordering::Acquire);
            if state == tag(*generation, DONE) {
                // SAFETY: DONE gives the sample cell back to this thread.
                unsafe { drop((*lease.sample.get()).take()) };
                lease.state.store(tag(*generation, FREE), Ordering::Release);
                return false;
            }
            [QUEUED, WRITING, COPYING].contains(&(state & STATE_MASK))
                && state >> STATE_BITS == *generation
        });
    }
}
