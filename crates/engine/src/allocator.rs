//! The C allocator's settings while recording.
//!
//! A lent sample (a Zenoh or DDS message in the heap) is freed by the writer a few
//! milliseconds after its source allocated it, a batch at a time. With glibc's defaults a
//! batch freed at the top of a heap (more than 128 KiB) is given back to the kernel, and
//! the next samples fault the same pages in again, zeroed: at 64 KiB × 1 kHz over Zenoh,
//! about 4,000 page faults a second and a tenth of recd's CPU (BENCHMARKS.md). Keeping
//! that memory for reuse costs at most [`TRIM_THRESHOLD`] of resident memory per heap.
//!
//! Memory freed below the top of a heap is never given back by itself, however much: a
//! session of 1,000 topics left 116 MB resident after it stopped (BENCHMARKS.md,
//! "Thousands of topics"). The daemon hands it back when a recording stopped, and when
//! its background work runs out of files. The settings hold only while something
//! records ([`KeptFreedMemory`]).

use std::sync::Mutex;

/// Free memory at the top of a heap that glibc keeps for reuse rather than give back.
const TRIM_THRESHOLD: i32 = 16 << 20;
/// Allocations from this size on get a mapping of their own. Setting the trim threshold
/// turns off glibc's dynamic choice of this threshold, which would rise to the size of
/// the largest block freed (at most 32 MiB): set to that bound, so that camera-sized
/// samples are taken from the heap, as they were once the dynamic threshold had risen,
/// and not mapped and faulted in anew each.
const MMAP_THRESHOLD: i32 = 32 << 20;
/// glibc's own trim and mmap thresholds (`M_TRIM_THRESHOLD`, `M_MMAP_THRESHOLD`), for
/// when nothing records.
const GLIBC_DEFAULT_THRESHOLD: i32 = 128 << 10;

/// The allocator's thresholds: what [`KeptFreedMemory`] applies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Thresholds {
    trim: i32,
    mmap: i32,
}

/// While recording: freed memory kept for reuse.
const RECORDING: Thresholds = Thresholds {
    trim: TRIM_THRESHOLD,
    mmap: MMAP_THRESHOLD,
};
/// While nothing records: glibc's defaults. A heap of a thread of its own (every thread
/// but the main one allocates from one) is trimmed only as memory at its top is freed,
/// never by `malloc_trim`, so up to [`TRIM_THRESHOLD`] per heap would stay resident after
/// a recording stopped unless the threshold is lowered before its memory is freed.
const IDLE: Thresholds = Thresholds {
    trim: GLIBC_DEFAULT_THRESHOLD,
    mmap: GLIBC_DEFAULT_THRESHOLD,
};

/// How many recordings keep freed memory, and the thresholds to apply when that count
/// starts or ends a stretch of recording.
#[derive(Debug, Default)]
struct Holders(usize);

impl Holders {
    /// One more recording; the thresholds to apply, if the first.
    fn enter(&mut self) -> Option<Thresholds> {
        self.0 += 1;
        (self.0 == 1).then_some(RECORDING)
    }

    /// One recording fewer; the thresholds to apply, if it was the last.
    fn leave(&mut self) -> Option<Thresholds> {
        self.0 = self.0.saturating_sub(1);
        (self.0 == 0).then_some(IDLE)
    }
}

/// The recordings alive in this process (several sessions may record at once).
static HOLDERS: Mutex<Holders> = Mutex::new(Holders(0));

/// Held by a recording from its start until it begins to stop: while one is held, glibc
/// keeps freed memory for reuse (see the module's documentation); once the last is
/// dropped, it has its default thresholds again, so that what the stopping recording frees
/// goes back to the system as it is freed.
pub(crate) struct KeptFreedMemory(());

impl KeptFreedMemory {
    /// Keeps freed memory until the value is dropped (glibc only; elsewhere nothing).
    pub fn hold() -> Self {
        let applied = HOLDERS.lock().map(|mut h| h.enter());
        if let Ok(Some(thresholds)) = applied {
            apply(thresholds);
        }
        Self(())
    }
}

impl Drop for KeptFreedMemory {
    fn drop(&mut self) {
        let applied = HOLDERS.lock().map(|mut h| h.leave());
        if let Ok(Some(thresholds)) = applied {
            apply(thresholds);
        }
    }
}

/// Sets glibc's trim and mmap thresholds.
fn apply(thresholds: Thresholds) {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only changes glibc's tuning parameters, and is safe to call at any
    // time from any thread.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, thresholds.mmap);
        libc::mallopt(libc::M_TRIM_THRESHOLD, thresholds.trim);
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    let _ = thresholds;
}

/// Gives the free memory of every heap back to the system (glibc's `malloc_trim`): for the
/// end of a recording, or of a batch of background work, off the real-time threads.
/// Elsewhere nothing.
pub fn give_back_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only returns free pages to the kernel; it is safe to call at any
    // time from any thread.
    unsafe {
        libc::malloc_trim(0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_recording_keeps_freed_memory_and_the_last_to_stop_gives_the_defaults_back() {
        let mut holders = Holders::default();
        assert_eq!(holders.enter(), Some(RECORDING));
        assert_eq!(holders.enter(), None, "a second session changes nothing");
        assert_eq!(holders.leave(), None, "one session still records");
        assert_eq!(holders.leave(), Some(IDLE));
        assert_eq!(
            holders.enter(),
            Some(RECORDING),
            "the next recording keeps again"
        );
    }
}
