//! The advisory lock on a file being recorded.
//!
//! [`crate::StreamWriter`] holds an exclusive `flock` on its file from creation until it
//! is closed (or its process ends, a crash included: the kernel drops the lock with the
//! last descriptor). [`crate::reindex`] takes a shared lock on its input and refuses a
//! file it cannot lock, so a reindex never replaces a file that is still being written.

use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;
use std::path::Path;

/// Takes the exclusive lock of the file's writer; fails if anyone holds a lock on it.
pub(crate) fn lock_for_writing(file: &File) -> io::Result<()> {
    flock(file, libc::LOCK_EX | libc::LOCK_NB)
}

/// Takes a shared lock for reading the whole file; `Ok(false)` when its writer holds it.
pub(crate) fn lock_for_reading(file: &File) -> io::Result<bool> {
    match flock(file, libc::LOCK_SH | libc::LOCK_NB) {
        Ok(()) => Ok(true),
        Err(error) if error.raw_os_error() == Some(libc::EWOULDBLOCK) => Ok(false),
        Err(error) => Err(error),
    }
}

/// Whether a writer is recording into the file at `path` now.
pub fn is_being_recorded(path: &Path) -> io::Result<bool> {
    let file = File::open(path)?;
    Ok(!lock_for_reading(&file)?)
}

fn flock(file: &File, operation: libc::c_int) -> io::Result<()> {
    // SAFETY: flock only reads the descriptor, which `file` keeps open.
    if unsafe { libc::flock(file.as_raw_fd(), operation) } == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}
