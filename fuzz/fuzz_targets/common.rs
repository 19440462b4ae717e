//! What the file-reading targets share: the input as a file on a tmpfs.
#![allow(dead_code)] // each target uses part of it

use std::path::PathBuf;

/// A directory of this fuzzing process on /dev/shm (a tmpfs: no disk I/O per run).
pub fn scratch() -> PathBuf {
    let dir = PathBuf::from(format!("/dev/shm/recd-fuzz-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("scratch directory on /dev/shm");
    dir
}

/// Writes `data` as `name` in the scratch directory; returns its path.
pub fn file_with(name: &str, data: &[u8]) -> PathBuf {
    let path = scratch().join(name);
    std::fs::write(&path, data).expect("input written");
    path
}
