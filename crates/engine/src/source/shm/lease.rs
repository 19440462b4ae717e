//! Loans the writer holds, and how the receive thread takes one back.
//!
//! A large sample goes to the writer still in shared memory, as long as the publisher's
//! borrow budget has room for it. When the budget is used up and another sample waits in
//! the subscriber's queue, the receive thread takes back the newest loan the writer has
//! not started writing: it copies that sample into the spill pool (or, the pool full,
//! gives it up, counted as dropped) and releases it, so the waiting sample can be taken
//! before the publisher overwrites it. A loan the writer is writing stays with it.
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

// SAFETY: the cells are touched only by the side the state gives them to: the receive
// thread while `FREE`, `QUEUED` (before hand-over), `RECLAIMING` or `DONE`, the writer
// while `WRITING` or `RECLAIMED`; every change of hands goes through the atomic state with
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
                match self.lease.state.compare_exchange(
                    tag(self.generation, QUEUED),
                    tag(self.generation, WRITING),
                    Ordering::AcqRel,
                    Ordering::Acquire,
                ) {
                    Ok(_) => break Reading::Sample,
                    Err(now) if now == tag(self.generation, RECLAIMED) => {
                        // SAFETY: RECLAIMED gives the copy cell to the writer.
                        let copied = unsafe { (*self.lease.copy.get()).is_some() };
                        break if copied { Reading::Copy } else { Reading::Gone };
                    }
                    // RECLAIMING: the receive thread is copying it (a millisecond at most).
                    Err(_) => std::thread::yield_now(),
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
        issued.0.push((lease.clone(), generation));
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
/// written, or written and waiting to be released.
#[derive(Default)]
pub(super) struct Issued(Vec<(Arc<Lease>, u64)>);

/// How much of the receive thread's time copying taken-back samples may use.
///
/// Copying a FullHD frame takes 2 to 10 ms on a loaded machine; a receive thread that
/// copied every sample it took back while the writer stays behind (a disk slower than the
/// load) would come late to every other topic, and their queues would overflow. So
/// copying is paid from a budget that refills at [`COPY_SHARE`] of the time and holds at
/// most [`COPY_CREDIT`]: a pass copies until the budget is spent (one copy may overdraw
/// it), and the loans it takes back after that are given up, counted as dropped. The
/// writer would have had to drop as much anyway: it is behind by the whole spill pool's
/// worth or more whenever copies come this often.
pub(super) struct CopyBudget {
    credit: f64,
    refilled: Instant,
}

/// The share of the receive thread's time it may spend copying.
const COPY_SHARE: f64 = 0.25;
/// The most copying time saved up, so the longest stretch of copies in one pass.
const COPY_CREDIT: Duration = Duration::from_millis(8);

impl CopyBudget {
    /// A full budget.
    pub fn new(now: Instant) -> Self {
        Self {
            credit: COPY_CREDIT.as_secs_f64(),
            refilled: now,
        }
    }

    /// Whether a copy may start at `now`.
    pub fn allows(&mut self, now: Instant) -> bool {
        let earned = now.saturating_duration_since(self.refilled).as_secs_f64() * COPY_SHARE;
        self.credit = (self.credit + earned).min(COPY_CREDIT.as_secs_f64());
        self.refilled = now;
        self.credit > 0.0
    }

    /// Charges a copy that took `took`.
    pub fn spend(&mut self, took: Duration) {
        self.credit -= took.as_secs_f64();
    }
}

/// What taking back a loan did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum TakenBack {
    /// The sample was copied into the spill pool and released.
    Spilled,
    /// The spill pool had no room, or the copying budget was spent: the sample was
    /// released unwritten (counted as dropped by the writer when it comes to it).
    GivenUp,
    /// The writer had claimed every loan: nothing to take back.
    Nothing,
}

impl Issued {
    /// True when no loan is held: the writer let go of every sample.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Takes back the newest loan the writer has not claimed, the one it will come to
    /// last, copying it into the spill pool if `copy` (else giving it up).
    pub fn take_back_newest(&mut self, spill: &mut SpillPool, copy: bool) -> TakenBack {
        for index in (0..self.0.len()).rev() {
            let (lease, generation) = &self.0[index];
            let generation = *generation;
            if lease
                .state
                .compare_exchange(
                    tag(generation, QUEUED),
                    tag(generation, RECLAIMING),
                    Ordering::AcqRel,
                    Ordering::Acquire,
                )
                .is_err()
            {
                continue; // Claimed by the writer (or done with) meanwhile.
            }
            let (lease, _) = self.0.remove(index);
            // SAFETY: RECLAIMING gives both cells to this thread.
            let taken = unsafe {
                let (sample, lent) = (*lease.sample.get()).take().expect("a queued loan");
                let (header, payload) = split_sample(&sample, *lease.header_len.get());
                let copy = if copy {
                    spill.spill(header, payload)
                } else {
                    None
                };
                let taken = if copy.is_some() {
                    TakenBack::Spilled
                } else {
                    TakenBack::GivenUp
                };
                *lease.copy.get() = copy;
                drop((sample, lent));
                taken
            };
            lease
                .state
                .store(tag(generation, RECLAIMED), Ordering::Release);
            return taken;
        }
        TakenBack::Nothing
    }

    /// Releases the samples the writer is done with, giving their loans back to the
    /// publisher, and forgets the loans taken back or done with.
    pub fn release_written(&mut self) {
        self.0.retain(|(lease, generation)| {
            let state = lease.state.load(Ordering::Acquire);
            if state == tag(*generation, DONE) {
                // SAFETY: DONE gives the sample cell back to this thread.
                unsafe { drop((*lease.sample.get()).take()) };
                lease.state.store(tag(*generation, FREE), Ordering::Release);
                return false;
            }
            state == tag(*generation, QUEUED) || state == tag(*generation, WRITING)
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copying_may_take_a_quarter_of_the_time_and_a_few_milliseconds_at_once() {
        let start = Instant::now();
        let mut budget = CopyBudget::new(start);
        assert!(budget.allows(start));
        budget.spend(Duration::from_millis(6));
        assert!(budget.allows(start), "2 ms left");
        budget.spend(Duration::from_millis(6));
        assert!(!budget.allows(start), "overdrawn by 4 ms");
        assert!(
            !budget.allows(start + Duration::from_millis(16)),
            "16 ms earn 4 ms"
        );
        assert!(budget.allows(start + Duration::from_millis(20)));
        // However long the thread copied nothing, it saves up no more than 8 ms.
        let later = start + Duration::from_secs(10);
        assert!(budget.allows(later));
        budget.spend(Duration::from_millis(8));
        assert!(!budget.allows(later));
    }
}
