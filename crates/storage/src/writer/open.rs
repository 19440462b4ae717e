//! Creating a file to write: `O_DIRECT` where the file system accepts it (and asked for),
//! the write lock, and the write-back policy that applies to the I/O path it got.

use std::fs::{File, OpenOptions};
use std::path::Path;

use super::error::WriteError;
use crate::durability::Durability;
use crate::io_mode::IoMode;

/// The I/O path files created in `dir` with `mode` would get (`auto` resolved), found by
/// creating and removing a probe file; an error says why no file can be created there.
pub fn probe_io_mode(dir: &Path, mode: IoMode) -> Result<IoMode, WriteError> {
    static PROBES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let probe = PROBES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let path = dir.join(format!(".recd-probe-{}-{probe}", std::process::id()));
    let (file, used) = open_new(&path, mode)?;
    drop(file);
    let _ = std::fs::remove_file(&path);
    Ok(used)
}

/// Creates `path` for `mode`, and says which of direct or buffered I/O it got.
pub(super) fn open_new(path: &Path, mode: IoMode) -> Result<(File, IoMode), WriteError> {
    let (file, used) = match mode {
        IoMode::Buffered => (open_exclusive(path, false)?, IoMode::Buffered),
        IoMode::Direct => (open_exclusive(path, true)?, IoMode::Direct),
        IoMode::Auto => match open_exclusive(path, true) {
            Ok(file) => (file, IoMode::Direct),
            Err(WriteError::DirectIoUnsupported { .. }) => {
                (open_exclusive(path, false)?, IoMode::Buffered)
            }
            Err(error) => return Err(error),
        },
    };
    // The file is new, so nobody else holds a lock on it yet.
    crate::lock::lock_for_writing(&file).map_err(|source| WriteError::Create {
        path: path.to_path_buf(),
        source,
    })?;
    Ok((file, used))
}

/// Creates `path`, which must not exist, optionally with `O_DIRECT`.
fn open_exclusive(path: &Path, direct_io: bool) -> Result<File, WriteError> {
    use std::os::unix::fs::OpenOptionsExt;
    let mut options = OpenOptions::new();
    options.write(true).create_new(true);
    if direct_io {
        options.custom_flags(libc::O_DIRECT);
    }
    options.open(path).map_err(|source| {
        if direct_io && source.raw_os_error() == Some(libc::EINVAL) {
            // The file system refused O_DIRECT after creating the (new, hence empty) file.
            let _ = std::fs::remove_file(path);
            WriteError::DirectIoUnsupported {
                path: path.to_path_buf(),
            }
        } else {
            WriteError::Create {
                path: path.to_path_buf(),
                source,
            }
        }
    })
}

/// The durability policy as it applies to a file written with `io_mode`: direct I/O
/// bypasses the page cache, so there is no write-back to pace.
pub(super) fn write_back_policy(durability: &Durability, io_mode: IoMode) -> Durability {
    if io_mode == IoMode::Direct {
        Durability {
            writeback_window: None,
            drop_written_pages: false,
            ..durability.clone()
        }
    } else {
        durability.clone()
    }
}
