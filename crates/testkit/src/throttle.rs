//! A disk whose read speed is known and low: an ext4 image on a loop device, mounted for
//! one test, whose reads are limited by a cgroup (cgroup v2 `io.max` `rbps`, or cgroup v1
//! `blkio.throttle.read_bps_device` where the io controller is in the v1 hierarchy) for
//! the programs started in that cgroup with [`ThrottledDisk::command`]. The cgroup, the
//! mount (and so the loop device) and the image are removed on drop. Needs root.

use std::ffi::OsStr;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use crate::{ext4_image, wait_until, Mount};

/// Writes dirty pages out and drops the page cache (with the dentries and inodes), so
/// that what is read next comes from the disk: `sync; echo 3 > /proc/sys/vm/drop_caches`.
/// Needs root.
pub fn drop_page_cache() {
    // SAFETY: sync(2) takes no arguments and cannot fail.
    unsafe { libc::sync() };
    std::fs::write("/proc/sys/vm/drop_caches", "3")
        .expect("the page cache dropped (/proc/sys/vm/drop_caches needs root)");
}

/// Which cgroup hierarchy limits the reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CgroupVersion {
    /// cgroup v2's `io` controller (`io.max`).
    V2,
    /// cgroup v1's `blkio` controller (`blkio.throttle.read_bps_device`).
    V1,
}

/// A cgroup of one test that limits reads from one block device; its processes are
/// killed and it is removed on drop.
struct ReadLimit {
    dir: PathBuf,
}

impl ReadLimit {
    /// A fresh cgroup limiting reads of `device` (`major:minor`) to `bytes_per_second`.
    fn new(device: &str, bytes_per_second: u64) -> (Self, CgroupVersion) {
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let name = format!(
            "recd-test-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        );
        let v2 = Path::new("/sys/fs/cgroup");
        let v2_has_io = std::fs::read_to_string(v2.join("cgroup.controllers"))
            .is_ok_and(|controllers| controllers.split_whitespace().any(|c| c == "io"));
        let (dir, version, file, limit) = if v2_has_io {
            let enabled =
                std::fs::read_to_string(v2.join("cgroup.subtree_control")).unwrap_or_default();
            if !enabled.split_whitespace().any(|c| c == "io") {
                std::fs::write(v2.join("cgroup.subtree_control"), "+io").unwrap_or_else(|e| {
                    panic!(
                        "cannot enable the io controller for child cgroups of /sys/fs/cgroup: {e}"
                    )
                });
            }
            (
                v2.join(&name),
                CgroupVersion::V2,
                "io.max",
                format!("{device} rbps={bytes_per_second}"),
            )
        } else if Path::new("/sys/fs/cgroup/blkio/blkio.throttle.read_bps_device").exists() {
            (
                Path::new("/sys/fs/cgroup/blkio").join(&name),
                CgroupVersion::V1,
                "blkio.throttle.read_bps_device",
                format!("{device} {bytes_per_second}"),
            )
        } else {
            panic!(
                "no cgroup controller to limit reads: neither cgroup v2 with the io controller \
                 (/sys/fs/cgroup/cgroup.controllers) nor cgroup v1 blkio (/sys/fs/cgroup/blkio)"
            );
        };
        std::fs::create_dir(&dir)
            .unwrap_or_else(|e| panic!("cannot create the cgroup {}: {e}", dir.display()));
        let cgroup = Self { dir };
        std::fs::write(cgroup.dir.join(file), &limit).unwrap_or_else(|e| {
            panic!(
                "cannot limit reads with {limit:?} in {}: {e}",
                cgroup.dir.join(file).display()
            )
        });
        (cgroup, version)
    }

    fn procs(&self) -> PathBuf {
        self.dir.join("cgroup.procs")
    }

    fn pids(&self) -> Vec<libc::pid_t> {
        std::fs::read_to_string(self.procs())
            .unwrap_or_default()
            .split_whitespace()
            .filter_map(|pid| pid.parse().ok())
            .collect()
    }
}

impl Drop for ReadLimit {
    fn drop(&mut self) {
        // Only what the test started runs there; a test that failed may leave some.
        for pid in self.pids() {
            // SAFETY: kill(2) on a process the test started in this cgroup.
            unsafe { libc::kill(pid, libc::SIGKILL) };
        }
        wait_until(Duration::from_secs(5), || self.pids().is_empty());
        // A cgroup is removed with rmdir(2), its control files with it.
        wait_until(Duration::from_secs(5), || {
            std::fs::remove_dir(&self.dir).is_ok()
        });
    }
}

/// An ext4 image on a loop device mounted at a directory, its reads limited for the
/// programs of [`ThrottledDisk::command`]. Dropped, it removes the cgroup (killing what
/// still runs there), unmounts the file system (which frees the loop device) and deletes
/// the image.
pub struct ThrottledDisk {
    // Dropped in this order: the cgroup, the mount, the image's directory.
    limit: ReadLimit,
    mount: Mount,
    _image: tempfile::TempDir,
    device: String,
    version: CgroupVersion,
    bytes_per_second: u64,
}

impl ThrottledDisk {
    /// An empty ext4 image of `mib` MiB (a sparse file under /var/tmp) mounted at `point`
    /// (created if missing), reads from it limited to `bytes_per_second` in its cgroup.
    pub fn new(point: &Path, mib: u64, bytes_per_second: u64) -> Self {
        let image = tempfile::Builder::new()
            .prefix("recd-throttled-")
            .tempdir_in("/var/tmp")
            .expect("a directory for the image");
        let file = image.path().join("disk.ext4");
        ext4_image(&file, mib);
        let mount = Mount::at(point, &file, "ext4", "loop");
        let dev = std::fs::metadata(mount.path())
            .expect("the mount point")
            .dev();
        let device = format!("{}:{}", libc::major(dev), libc::minor(dev));
        assert_eq!(
            libc::major(dev),
            7,
            "{} is not on a loop device ({device})",
            mount.path().display()
        );
        let (limit, version) = ReadLimit::new(&device, bytes_per_second);
        Self {
            limit,
            mount,
            _image: image,
            device,
            version,
            bytes_per_second,
        }
    }

    /// Where it is mounted.
    pub fn path(&self) -> &Path {
        self.mount.path()
    }

    /// A path inside it.
    pub fn join(&self, name: &str) -> PathBuf {
        self.mount.join(name)
    }

    /// The loop device as `major:minor`.
    pub fn device(&self) -> &str {
        &self.device
    }

    /// The cgroup hierarchy that limits its reads.
    pub fn cgroup_version(&self) -> CgroupVersion {
        self.version
    }

    /// The read limit set, in bytes per second.
    pub fn limit(&self) -> u64 {
        self.bytes_per_second
    }

    /// A command that runs `program` (with the arguments the caller adds) inside the
    /// cgroup whose reads of this disk are limited: `sh` moves itself into the cgroup and
    /// execs the program, so the program and its threads and children are in it from
    /// their first instruction.
    pub fn command(&self, program: impl AsRef<OsStr>) -> Command {
        let mut command = Command::new("sh");
        command
            .arg("-c")
            .arg(r#"echo $$ > "$0" && exec "$@""#)
            .arg(self.limit.procs())
            .arg(program);
        command
    }

    /// The plain read speed of this disk in its cgroup, in bytes per second: a file of
    /// `mib` MiB written to it, the page cache dropped, and read whole by `dd` (1 MiB
    /// blocks, buffered as an ordinary reader does) in the cgroup; the file is removed.
    pub fn measure_read_speed(&self, mib: u64) -> f64 {
        let file = self.join("read-speed.bin");
        let written = Command::new("dd")
            .arg("if=/dev/urandom")
            .arg(format!("of={}", file.display()))
            .args([
                "bs=1M",
                &format!("count={mib}"),
                "conv=fsync",
                "status=none",
            ])
            .status()
            .expect("dd runs");
        assert!(written.success(), "dd could not write {}", file.display());
        drop_page_cache();
        let began = Instant::now();
        let read = self
            .command("dd")
            .arg(format!("if={}", file.display()))
            .args(["of=/dev/null", "bs=1M", "status=none"])
            .status()
            .expect("dd runs");
        let elapsed = began.elapsed().as_secs_f64();
        assert!(read.success(), "dd could not read {}", file.display());
        std::fs::remove_file(&file).expect("the speed test's file removed");
        (mib << 20) as f64 / elapsed
    }
}
