//! The free-space guard: watches the room left on the file system of a recording's
//! directory, so that writing pauses before the disk is full and resumes once there is
//! room again.

use std::path::PathBuf;
use std::time::{Duration, Instant};

/// A recording paused because its file system ran low on space.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct DiskFull {
    /// Bytes free when last looked at.
    pub free: u64,
    /// The configured minimum (`min_free_space`).
    pub minimum: u64,
}

/// What the guard found when it looked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SpaceChange {
    /// Free space fell below the minimum: stop writing.
    Low(DiskFull),
    /// Still too little, with the latest numbers.
    StillLow(DiskFull),
    /// Room again: resume in a new file.
    Back,
}

/// Looks at most every [`CHECK_BYTES`] written or [`CHECK_EVERY`] while writing, and every
/// [`CHECK_EVERY_PAUSED`] while paused.
#[derive(Clone)]
pub(crate) struct SpaceGuard {
    dir: PathBuf,
    minimum: u64,
    low: bool,
    checked_at: Instant,
    checked_at_bytes: u64,
}

/// Bytes written between two looks: bounds how far past the minimum one look can be.
pub(crate) const CHECK_BYTES: u64 = 4 << 20;
const CHECK_EVERY: Duration = Duration::from_millis(100);
const CHECK_EVERY_PAUSED: Duration = Duration::from_millis(250);

impl SpaceGuard {
    /// Guards `dir`'s file system, pausing below `minimum` free bytes.
    pub fn new(dir: PathBuf, minimum: u64) -> Self {
        Self {
            dir,
            minimum,
            low: false,
            checked_at: Instant::now(),
            checked_at_bytes: 0,
        }
    }

    /// Free space at which a paused recording resumes: an eighth above the minimum (at
    /// least 1 MiB), so that it does not flap between paused and writing.
    fn resume_at(&self) -> u64 {
        self.minimum + (self.minimum / 8).max(1 << 20)
    }

    /// Looks when due, `bytes_written` being the recording's total so far.
    pub fn poll(&mut self, bytes_written: u64) -> Option<SpaceChange> {
        let elapsed = self.checked_at.elapsed();
        let due = if self.low {
            elapsed >= CHECK_EVERY_PAUSED
        } else {
            elapsed >= CHECK_EVERY || bytes_written - self.checked_at_bytes >= CHECK_BYTES
        };
        if !due {
            return None;
        }
        self.checked_at = Instant::now();
        self.checked_at_bytes = bytes_written;
        // A file system that cannot be asked is left to the write errors.
        let free = recd_storage::space_of(&self.dir).ok()?.available;
        self.change(free)
    }

    fn change(&mut self, free: u64) -> Option<SpaceChange> {
        let full = DiskFull {
            free,
            minimum: self.minimum,
        };
        match (self.low, free) {
            (false, free) if free < self.minimum => {
                self.low = true;
                Some(SpaceChange::Low(full))
            }
            (true, free) if free >= self.resume_at() => {
                self.low = false;
                Some(SpaceChange::Back)
            }
            (true, _) => Some(SpaceChange::StillLow(full)),
            (false, _) => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pauses_below_the_minimum_and_resumes_an_eighth_above_it() {
        let mut guard = SpaceGuard::new(PathBuf::from("/"), 80 << 20);
        assert_eq!(guard.change(100 << 20), None);
        let low = DiskFull {
            free: 79 << 20,
            minimum: 80 << 20,
        };
        assert_eq!(guard.change(79 << 20), Some(SpaceChange::Low(low)));
        let still = DiskFull {
            free: 89 << 20,
            ..low
        };
        assert_eq!(guard.change(89 << 20), Some(SpaceChange::StillLow(still)));
        assert_eq!(guard.change(90 << 20), Some(SpaceChange::Back));
        assert_eq!(guard.change(85 << 20), None);
    }

    #[test]
    fn looks_every_few_mebibytes_while_writing() {
        let mut guard = SpaceGuard::new(PathBuf::from("/"), 0);
        assert_eq!(guard.poll(1 << 20), None, "not due yet");
        let before = guard.checked_at;
        guard.poll(CHECK_BYTES);
        assert!(guard.checked_at > before);
        assert_eq!(guard.checked_at_bytes, CHECK_BYTES);
    }
}
