//! How much room the file system under a path has: what the free-space guard and the
//! start-up checks of a session look at.

use std::ffi::CString;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

/// The size of a file system and the room left on it for an unprivileged writer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Space {
    /// Bytes a writer may still use (root's reserve not counted).
    pub available: u64,
    /// Bytes the file system holds in all.
    pub total: u64,
}

/// The space of the file system that holds `path`.
pub fn space_of(path: &Path) -> io::Result<Space> {
    let path = CString::new(path.as_os_str().as_bytes())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "path contains a NUL byte"))?;
    // SAFETY: statvfs is plain old data, for which all zero bytes are a valid value.
    let mut stats: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: the path is NUL-terminated and statvfs writes only into the struct we own.
    if unsafe { libc::statvfs(path.as_ptr(), &mut stats) } != 0 {
        return Err(io::Error::last_os_error());
    }
    let block = stats.f_frsize as u64;
    Ok(Space {
        available: stats.f_bavail as u64 * block,
        total: stats.f_blocks as u64 * block,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_system_has_room_within_its_size_and_a_missing_path_is_an_error() {
        let dir = tempfile::tempdir().unwrap();
        let space = space_of(dir.path()).unwrap();
        assert!(space.total > 0 && space.available <= space.total);
        assert!(space_of(&dir.path().join("missing")).is_err());
    }
}
