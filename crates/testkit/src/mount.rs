//! File systems mounted for one test: a ramfs that refuses `O_DIRECT`, a tmpfs of a given
//! size that fills up. Needs root, as the tests run in CI.

use std::path::{Path, PathBuf};
use std::process::Command;

/// A file system mounted on a fresh directory; unmounted (lazily, should a file still be
/// open) and the directory removed on drop.
pub struct Mount {
    dir: tempfile::TempDir,
}

impl Mount {
    /// Mounts `fstype` with `options` (`-o`, may be empty); panics naming the reason if
    /// the mount is refused (the tests that need one run as root).
    pub fn new(fstype: &str, options: &str) -> Self {
        let dir = tempfile::tempdir().expect("mount point");
        let mut command = Command::new("mount");
        command.args(["-t", fstype]);
        if !options.is_empty() {
            command.args(["-o", options]);
        }
        let output = command
            .arg(fstype)
            .arg(dir.path())
            .output()
            .expect("mount(8) runs");
        assert!(
            output.status.success(),
            "cannot mount a {fstype} on {} (this test needs root): {}",
            dir.path().display(),
            String::from_utf8_lossy(&output.stderr).trim()
        );
        Self { dir }
    }

    /// Where it is mounted.
    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// A path inside it.
    pub fn join(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }
}

impl Drop for Mount {
    fn drop(&mut self) {
        let _ = Command::new("umount")
            .arg("-l")
            .arg(self.dir.path())
            .status();
    }
}
