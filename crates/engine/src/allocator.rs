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
//! its background work runs out of files.

use std::sync::Once;

/// Free memory at the top of a heap that glibc keeps for reuse rather than give back.
const TRIM_THRESHOLD: i32 = 16 << 20;
/// Allocations from this size on get a mapping of their own. Setting the trim threshold
/// turns off glibc's dynamic choice of this threshold, which would rise to the size of
/// the largest block freed (at most 32 MiB): set to that bound, so that camera-sized
/// samples are taken from the heap, as they were once the dynamic threshold had risen,
/// and not mapped and faulted in anew each.
const MMAP_THRESHOLD: i32 = 32 << 20;

/// Applies the settings above once per process (glibc only; elsewhere nothing).
pub(crate) fn keep_freed_memory() {
    static APPLIED: Once = Once::new();
    APPLIED.call_once(|| {
        #[cfg(all(target_os = "linux", target_env = "gnu"))]
        // SAFETY: mallopt only changes glibc's tuning parameters, and is safe to call at
        // any time from any thread.
        unsafe {
            libc::mallopt(libc::M_MMAP_THRESHOLD, MMAP_THRESHOLD);
            libc::mallopt(libc::M_TRIM_THRESHOLD, TRIM_THRESHOLD);
        }
    });
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
