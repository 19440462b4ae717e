//! A disk slower than the load: the recorder is put in a cgroup (v1 blkio, or v2 io)
//! whose writes to the output directory's device are limited to a number of bytes per
//! second.
//!
//! With cgroup v1 only writes the recorder submits itself are throttled (direct I/O,
//! and the write-back it starts with `sync_file_range`); pages the kernel's flusher
//! threads write back are not.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// A cgroup limiting one process's write rate; removed on drop (after the process ended).
pub struct Throttle {
    group: PathBuf,
}

impl Throttle {
    /// Limits writes of process `pid` to the device holding `dir` to `bytes_per_s`.
    pub fn apply(pid: u32, dir: &Path, bytes_per_s: u64) -> Result<Self, String> {
        let device = std::fs::metadata(dir)
            .map_err(|e| format!("{}: {e}", dir.display()))?
            .dev();
        let (major, minor) = (libc::major(device), libc::minor(device));
        let name = format!("recd-e2e-{}", std::process::id());
        let v1 = Path::new("/sys/fs/cgroup/blkio");
        let (group, limit_file, limit) = if v1.join("blkio.throttle.write_bps_device").exists() {
            (
                v1.join(&name),
                "blkio.throttle.write_bps_device",
                format!("{major}:{minor} {bytes_per_s}"),
            )
        } else {
            (
                Path::new("/sys/fs/cgroup").join(&name),
                "io.max",
                format!("{major}:{minor} wbps={bytes_per_s}"),
            )
        };
        std::fs::create_dir_all(&group)
            .map_err(|e| format!("cannot create cgroup {}: {e}", group.display()))?;
        let throttle = Self { group };
        throttle.write(limit_file, &limit)?;
        throttle.write("cgroup.procs", &pid.to_string())?;
        Ok(throttle)
    }

    fn write(&self, file: &str, value: &str) -> Result<(), String> {
        let path = self.group.join(file);
        std::fs::write(&path, value).map_err(|e| format!("{}: {value}: {e}", path.display()))
    }
}

impl Drop for Throttle {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir(&self.group);
    }
}
