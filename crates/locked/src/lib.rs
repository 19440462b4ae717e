//! [`Locked<T>`]: one value, a key, kept where it cannot leave memory. A key in an ordinary
//! heap or stack page can be written to swap when memory runs short, and into a core file
//! when the process crashes; both outlive the process, on a disk that may be read later.
//! A `Locked` value lives in its own page, between guard pages, locked into RAM (`mlock`,
//! so never swapped) and marked `MADV_DONTDUMP` (left out of core dumps), and the page is
//! wiped when the value is dropped.
//!
//! The page comes from memsec's guarded allocation (libsodium's `sodium_malloc`), which
//! ignores a failed `mlock`; [`Locked::new`] locks the value's page again itself to learn
//! whether locking held ([`Locked::is_locked`]): it fails where `RLIMIT_MEMLOCK`
//! (systemd's `LimitMEMLOCK`) is spent and the process lacks `CAP_IPC_LOCK`. Each value
//! costs one locked page (4 KiB on x86-64 and most ARM kernels), three more pages of
//! address space (two guard pages and a read-only one holding the allocation's size) and
//! about five memory mappings, as the pages around it split the heap's.
//!
//! What it cannot cover: the value is built before it is moved in, so a copy of it may
//! stay on the stack of the function that built it (callers that can fill the value in
//! place, through [`DerefMut`], leave none).

#![warn(missing_docs)]

use std::fmt;
use std::marker::PhantomData;
use std::mem::{align_of, size_of};
use std::ops::{Deref, DerefMut};
use std::ptr::{self, NonNull};

/// The smallest page size of a Linux kernel: memsec puts the value at the end of its
/// page(s), so it is aligned for any `T` whose alignment is at most this.
const MIN_PAGE_SIZE: usize = 4096;

/// Why a value could not be given a locked page.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "cannot allocate a guarded page for {bytes} bytes of key material: out of memory or \
     address space"
)]
pub struct LockError {
    /// The size of the value.
    pub bytes: usize,
}

/// One value of `T` in a page of its own, locked into memory (never swapped, when
/// [`Self::is_locked`]), left out of core dumps, and wiped when dropped. Dereferences to
/// the value: reading it costs what reading through a `Box` does.
pub struct Locked<T> {
    value: NonNull<T>,
    locked: bool,
    /// Owns a `T` (for the drop check, and for `Send`/`Sync` below).
    _owns: PhantomData<T>,
}

// SAFETY: `Locked<T>` owns its `T` alone, as a `Box<T>` does; moving it to another thread
// moves the `T`.
unsafe impl<T: Send> Send for Locked<T> {}
// SAFETY: `&Locked<T>` gives out only `&T`.
unsafe impl<T: Sync> Sync for Locked<T> {}

impl<T> Locked<T> {
    /// Moves `value` into a new guarded page, marked `MADV_DONTDUMP` and locked into
    /// memory when `RLIMIT_MEMLOCK` allows (see [`Self::is_locked`]). Fails only when the
    /// page cannot be allocated.
    pub fn new(value: T) -> Result<Self, LockError> {
        const { assert!(align_of::<T>() <= MIN_PAGE_SIZE) };
        // SAFETY: memsec::malloc returns memory for one T (or None), writable, which this
        // Locked owns alone until it frees it in Drop.
        let slot = unsafe { memsec::malloc::<T>() }.ok_or(LockError {
            bytes: size_of::<T>(),
        })?;
        // SAFETY: `slot` is valid for writes of one T and aligned for it (memsec ends the
        // value at a page boundary, and T's size is a multiple of its alignment, which is
        // at most a page); it holds no T yet, so nothing is overwritten that needs a drop.
        unsafe { slot.as_ptr().write(value) };
        let locked = lock_pages(slot.as_ptr().cast(), size_of::<T>());
        Ok(Self {
            value: slot,
            locked,
            _owns: PhantomData,
        })
    }

    /// Whether the value's page is locked into memory, so that it is never written to
    /// swap. False where `RLIMIT_MEMLOCK` (systemd's `LimitMEMLOCK`) was spent and the
    /// process lacks `CAP_IPC_LOCK`; the page is still left out of core dumps and wiped.
    pub fn is_locked(&self) -> bool {
        self.locked
    }
}

/// Locks the pages from the one holding `start` through the end of `len` bytes; whether
/// the kernel locked them. memsec already tried, and ignored a failure: locking locked
/// pages again changes nothing, and tells whether they are.
fn lock_pages(start: *const u8, len: usize) -> bool {
    // SAFETY: sysconf only reads a system constant.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) } as usize;
    let first = start as usize & !(page - 1);
    let end = start as usize + len.max(1);
    // SAFETY: the range lies within the pages memsec mapped for the value, which stay
    // mapped until Drop; mlock changes no content and no protection.
    unsafe { libc::mlock(first as *const libc::c_void, end - first) == 0 }
}

impl<T> Deref for Locked<T> {
    type Target = T;

    fn deref(&self) -> &T {
        // SAFETY: `value` holds an initialized T from `new` until Drop, and `&self` lends
        // it shared.
        unsafe { self.value.as_ref() }
    }
}

impl<T> DerefMut for Locked<T> {
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: as in `deref`, and `&mut self` makes this the only reference.
        unsafe { self.value.as_mut() }
    }
}

impl<T> Drop for Locked<T> {
    fn drop(&mut self) {
        // SAFETY: `value` holds the T written in `new`, dropped here once; memsec::free
        // then zeroes the page, unlocks it and gives it back, and nothing refers to it
        // after (Locked is being dropped).
        unsafe {
            ptr::drop_in_place(self.value.as_ptr());
            memsec::free(self.value);
        }
    }
}

impl<T> fmt::Debug for Locked<T> {
    /// Never the value: whether its page is locked.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Locked")
            .field("locked", &self.locked)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests;
