//! File systems mounted for one test: a ramfs that refuses `O_DIRECT`, a tmpfs of a given
//! size that fills up, a read-only one, an ext4 image on a loop device that can lose
//! power. Needs root, as the tests run in CI.

use std::path::{Path, PathBuf};
use std::process::Command;

/// A file system mounted on a directory; unmounted (lazily, should a file still be open)
/// on drop, and the directory removed.
pub struct Mount {
    point: PathBuf,
    /// The fresh directory it is mounted on, when the mount made one.
    _dir: Option<tempfile::TempDir>,
}

impl Mount {
    /// Mounts `fstype` with `options` (`-o`, may be empty) on a fresh directory; panics
    /// naming the reason if the mount is refused (the tests that need one run as root).
    pub fn new(fstype: &str, options: &str) -> Self {
        let dir = tempfile::tempdir().expect("mount point");
        let mut mount = Self::at(dir.path(), fstype, fstype, options);
        mount._dir = Some(dir);
        mount
    }

    /// Mounts `source` (a device, an image file with the `loop` option, or the type's
    /// name for a virtual file system) as `fstype` on `point`, which is created if
    /// missing (a session's directory, say).
    pub fn at(point: &Path, source: impl AsRef<Path>, fstype: &str, options: &str) -> Self {
        std::fs::create_dir_all(point).expect("mount point");
        let mut command = Command::new("mount");
        command.args(["-t", fstype]);
        if !options.is_empty() {
            command.args(["-o", options]);
        }
        let output = command
            .arg(source.as_ref())
            .arg(point)
            .output()
            .expect("mount(8) runs");
        assert!(
            output.status.success(),
            "cannot mount a {fstype} on {} (this test needs root): {}",
            point.display(),
            String::from_utf8_lossy(&output.stderr).trim()
        );
        Self {
            point: point.to_path_buf(),
            _dir: None,
        }
    }

    /// Where it is mounted.
    pub fn path(&self) -> &Path {
        &self.point
    }

    /// A path inside it.
    pub fn join(&self, name: &str) -> PathBuf {
        self.point.join(name)
    }
}

impl Drop for Mount {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.point).status();
        let _ = std::fs::remove_dir(&self.point);
    }
}

/// Makes an empty ext4 image file of `mib` MiB at `path`.
pub fn ext4_image(path: &Path, mib: u64) {
    let file = std::fs::File::create(path).expect("image file");
    file.set_len(mib << 20).expect("image size");
    let output = Command::new("mkfs.ext4")
        .args(["-q", "-F"])
        .arg(path)
        .output()
        .expect("mkfs.ext4 runs (package e2fsprogs)");
    assert!(
        output.status.success(),
        "mkfs.ext4 failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
}
