//! Keeps a fast writer from filling memory with dirty pages, and bounds what a power loss
//! can take.
//!
//! Recording at 1.5 GB/s through the page cache would otherwise pile up gigabytes of dirty
//! pages until the kernel stalls every writer at once. Instead the file is handed to the
//! disk in windows: each full window's write-back is started at once
//! (`sync_file_range(WRITE)`), and once more than `writeback_in_flight` bytes are on their
//! way the oldest windows are waited for and dropped from the page cache
//! (`posix_fadvise(DONTNEED)`). Several windows in flight keep the disk's queue full:
//! waiting for each window before starting the next left the disk idle between them, and
//! a writer that waited on every 8 MiB fell behind a load the disk could take.

use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

/// How the writer hands its data to the disk.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Durability {
    /// Start write-back each time this many bytes were written; `None` leaves it to the
    /// kernel.
    pub writeback_window: Option<u64>,
    /// Bytes whose write-back may be under way at once before the writer waits for the
    /// oldest window: bounds the dirty pages, and how far the writer runs ahead of the
    /// disk.
    #[serde(default = "default_in_flight")]
    pub writeback_in_flight: u64,
    /// Drop ranges from the page cache once they reached the disk (needs `writeback_window`).
    pub drop_written_pages: bool,
    /// `fdatasync` this often (on a thread of its own, so the writer never waits for it)
    /// while the file grows, bounding what a power loss can take to about this period
    /// plus one sync; `None` syncs only when a file is closed.
    pub sync_period: Option<Duration>,
}

impl Default for Durability {
    fn default() -> Self {
        Self {
            writeback_window: Some(8 << 20),
            writeback_in_flight: default_in_flight(),
            drop_written_pages: true,
            sync_period: None,
        }
    }
}

fn default_in_flight() -> u64 {
    64 << 20
}

/// Tracks one file's progress towards the disk.
#[derive(Debug)]
pub(crate) struct WriteBack {
    policy: Durability,
    /// Write-back was started for everything below this offset.
    started: u64,
    /// Where each window whose write-back is under way ends, oldest first.
    in_flight: std::collections::VecDeque<u64>,
    /// Everything below this offset reached the disk and left the page cache.
    settled: u64,
    /// Syncs the file every `sync_period`, when there is one.
    periodic: Option<PeriodicSync>,
    /// Cleared when the file system refuses the advisory calls (tmpfs, some FUSE mounts).
    advisory_supported: bool,
}

impl WriteBack {
    pub(crate) fn new(policy: Durability) -> Self {
        Self {
            policy,
            started: 0,
            in_flight: std::collections::VecDeque::new(),
            settled: 0,
            periodic: None,
            advisory_supported: true,
        }
    }

    /// Leaves write-back alone for a file in memory (tmpfs, /dev/shm): there is no disk to
    /// hand it to, and dropping its pages would only cost time.
    pub(crate) fn for_file(policy: Durability, file: &File) -> Self {
        let mut write_back = Self::new(policy);
        write_back.advisory_supported = !is_in_memory(file);
        write_back.periodic = write_back
            .policy
            .sync_period
            .and_then(|period| PeriodicSync::start(file, period));
        write_back
    }

    /// Called after the file grew to `written` bytes.
    pub(crate) fn after_write(&mut self, file: &File, written: u64) -> io::Result<()> {
        if let Some(window) = self.policy.writeback_window {
            if self.advisory_supported && written - self.started >= window {
                self.advance(file, written)?;
            }
        }
        match &self.periodic {
            Some(periodic) => periodic.grew_to(written),
            None => Ok(()),
        }
    }

    fn advance(&mut self, file: &File, written: u64) -> io::Result<()> {
        use libc::{
            SYNC_FILE_RANGE_WAIT_AFTER as WAIT_AFTER, SYNC_FILE_RANGE_WAIT_BEFORE as WAIT_BEFORE,
            SYNC_FILE_RANGE_WRITE as WRITE,
        };
        self.sync_range(file, self.started, written - self.started, WRITE)?;
        self.started = written;
        self.in_flight.push_back(written);
        while self.started - self.settled > self.policy.writeback_in_flight {
            let Some(end) = self.in_flight.pop_front() else {
                break;
            };
            let (from, len) = (self.settled, end - self.settled);
            self.sync_range(file, from, len, WAIT_BEFORE | WRITE | WAIT_AFTER)?;
            if self.policy.drop_written_pages && self.advisory_supported {
                // Advice only: a refusal changes nothing about the data.
                // SAFETY: plain syscall on a valid, open descriptor; no memory is passed.
                unsafe {
                    libc::posix_fadvise(
                        file.as_raw_fd(),
                        from as libc::off_t,
                        len as libc::off_t,
                        libc::POSIX_FADV_DONTNEED,
                    )
                };
            }
            self.settled = end;
        }
        Ok(())
    }

    fn sync_range(&mut self, file: &File, from: u64, len: u64, flags: u32) -> io::Result<()> {
        // SAFETY: plain syscall on a valid, open descriptor; no memory is passed.
        let rc = unsafe {
            libc::sync_file_range(
                file.as_raw_fd(),
                from as libc::off64_t,
                len as libc::off64_t,
                flags,
            )
        };
        if rc == 0 {
            return Ok(());
        }
        let error = io::Error::last_os_error();
        match error.raw_os_error() {
            Some(libc::EINVAL) | Some(libc::ESPIPE) | Some(libc::EOPNOTSUPP) => {
                self.advisory_supported = false;
                Ok(())
            }
            // EIO and friends: the data did not reach the disk, which the caller must hear.
            _ => Err(error),
        }
    }
}

/// A thread that `fdatasync`s one file every period while it grows, so that what a power
/// loss takes is bounded without the writer ever waiting for the disk.
#[derive(Debug)]
struct PeriodicSync {
    shared: Arc<SyncShared>,
    thread: Option<JoinHandle<()>>,
}

#[derive(Debug, Default)]
struct SyncShared {
    /// Bytes the writer has handed to the kernel.
    written: AtomicU64,
    /// Set when the file is done with; the condvar wakes the thread for it.
    stop: Mutex<bool>,
    wake: Condvar,
    /// The first failed sync: the writer reports it at its next write.
    error: Mutex<Option<io::Error>>,
    /// Syncs done.
    syncs: AtomicU64,
}

impl PeriodicSync {
    /// Starts syncing a duplicate of `file`'s descriptor; `None` (syncing only at close)
    /// when the descriptor or the thread cannot be had.
    fn start(file: &File, period: Duration) -> Option<Self> {
        let file = file.try_clone().ok()?;
        let shared = Arc::new(SyncShared::default());
        let thread = std::thread::Builder::new()
            .name("recd-sync".into())
            .spawn({
                let shared = shared.clone();
                move || sync_every(&file, period, &shared)
            })
            .ok()?;
        Some(Self {
            shared,
            thread: Some(thread),
        })
    }

    /// Tells the thread the file grew to `written` bytes; returns a sync's failure.
    fn grew_to(&self, written: u64) -> io::Result<()> {
        self.shared.written.store(written, Ordering::Relaxed);
        match self.shared.error.lock().expect("sync lock").take() {
            Some(error) => Err(error),
            None => Ok(()),
        }
    }
}

fn sync_every(file: &File, period: Duration, shared: &SyncShared) {
    let mut synced = 0;
    let mut stop = shared.stop.lock().expect("sync lock");
    while !*stop {
        stop = shared.wake.wait_timeout(stop, period).expect("sync lock").0;
        let written = shared.written.load(Ordering::Relaxed);
        if *stop || written == synced {
            continue;
        }
        // Sync without holding the lock, so that stopping does not wait behind the disk.
        drop(stop);
        if let Err(error) = file.sync_data() {
            shared.error.lock().expect("sync lock").get_or_insert(error);
        }
        shared.syncs.fetch_add(1, Ordering::Relaxed);
        synced = written;
        stop = shared.stop.lock().expect("sync lock");
    }
}

impl Drop for PeriodicSync {
    fn drop(&mut self) {
        *self.shared.stop.lock().expect("sync lock") = true;
        self.shared.wake.notify_one();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

fn is_in_memory(file: &File) -> bool {
    // SAFETY: statfs is plain old data, for which all zero bytes are a valid value.
    let mut stats: libc::statfs = unsafe { std::mem::zeroed() };
    // SAFETY: fstatfs writes into the struct we own; the descriptor is open.
    let rc = unsafe { libc::fstatfs(file.as_raw_fd(), &mut stats) };
    rc == 0 && stats.f_type == libc::TMPFS_MAGIC
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn windows_advance_behind_the_writer() {
        let dir = tempfile::tempdir().unwrap();
        let mut file = File::create(dir.path().join("f")).unwrap();
        let mut wb = WriteBack::new(Durability {
            writeback_window: Some(4096),
            writeback_in_flight: 2 * 4096,
            drop_written_pages: true,
            sync_period: None,
        });
        let block = vec![7u8; 4096];
        let mut written = 0;
        for window in 1..=5u64 {
            file.write_all(&block).unwrap();
            written += block.len() as u64;
            wb.after_write(&file, written).unwrap();
            if wb.advisory_supported {
                assert_eq!(wb.started, window * 4096);
                // Two windows stay in flight; older ones were waited for.
                assert_eq!(wb.settled, window.saturating_sub(2) * 4096);
            }
        }
    }
}

#[cfg(test)]
mod periodic_tests {
    use super::*;
    use std::time::Instant;

    fn wait_for(mut done: impl FnMut() -> bool) -> bool {
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            if done() {
                return true;
            }
            std::thread::sleep(Duration::from_millis(2));
        }
        false
    }

    #[test]
    fn the_file_is_synced_once_per_period_it_grew_in_and_the_thread_ends_with_it() {
        let dir = tempfile::tempdir().unwrap();
        let file = File::create(dir.path().join("f")).unwrap();
        let periodic = PeriodicSync::start(&file, Duration::from_millis(5)).unwrap();
        let syncs = || periodic.shared.syncs.load(Ordering::Relaxed);
        std::thread::sleep(Duration::from_millis(30));
        assert_eq!(syncs(), 0, "nothing written, nothing to sync");
        periodic.grew_to(4).unwrap();
        assert!(wait_for(|| syncs() == 1));
        std::thread::sleep(Duration::from_millis(30));
        assert_eq!(syncs(), 1, "no growth since the last sync");
        periodic.grew_to(8).unwrap();
        assert!(wait_for(|| syncs() == 2));
        let started = Instant::now();
        drop(periodic);
        assert!(started.elapsed() < Duration::from_secs(1));
    }
}
