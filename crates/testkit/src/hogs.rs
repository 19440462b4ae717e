//! A busy machine for the tests that must not lose a sample on one: CPU-bound processes at
//! normal priority and a page-cache filler, all killed (and the filler's file removed)
//! when the [`Hogs`] are dropped.

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use crate::wait_until;

/// What the page-cache filler runs (`sh -c`, with the file as `$1`, its size in MiB as
/// `$2` and the size of the file it keeps dirty as `$3`): the file is allocated
/// (`fallocate`, or written where the file system cannot) and then, for ever, read whole
/// (by two readers at once, each on its half) and the dirty file written, so that the
/// page cache holds the file (what another process takes from it is read back at the next
/// pass) and dirty pages wait for the disk. `$1.passes` counts the passes read.
const FILLER: &str = r#"set -e
f="$1"; mib="$2"; dirty_mib="$3"
fallocate -l "${mib}MiB" "$f" 2>/dev/null || dd if=/dev/zero of="$f" bs=1M count="$mib" status=none
half=$((mib / 2))
pass=0
while :; do
  dd if="$f" of=/dev/null bs=1M count="$half" status=none &
  dd if="$f" of=/dev/null bs=1M skip="$half" status=none
  wait
  pass=$((pass + 1))
  echo "$pass" > "$f.passes.new"
  mv "$f.passes.new" "$f.passes"
  dd if=/dev/zero of="$f.dirty" bs=1M count="$dirty_mib" conv=notrunc status=none
done
"#;

/// What a page-cache filler leaves free on its file system.
pub const FILLER_DISK_RESERVE: u64 = 2 << 30;

/// The page-cache filler's dirty file is this fraction (1/N) of its file, at most 1 GiB.
const DIRTY_FRACTION: u64 = 8;

/// Processes that keep the machine busy while they live: CPU-bound loops and optionally a
/// page-cache filler. Each runs in a process group of its own; on drop every group is
/// killed with SIGKILL and reaped, and the filler's directory removed.
#[derive(Default)]
pub struct Hogs {
    children: Vec<Child>,
    /// The page-cache filler's file, in a directory of its own.
    filler: Option<(tempfile::TempDir, PathBuf)>,
}

impl Hogs {
    /// No process yet: add some with [`Hogs::with_cpu`] and
    /// [`Hogs::with_page_cache_filler`].
    pub fn new() -> Self {
        Self::default()
    }

    /// Starts `count` CPU-bound processes (`sh -c 'while :; do :; done'`) at normal
    /// priority.
    pub fn cpu(count: usize) -> Self {
        Self::new().with_cpu(count)
    }

    /// Adds `count` CPU-bound processes at normal priority.
    pub fn with_cpu(mut self, count: usize) -> Self {
        for _ in 0..count {
            let child = Command::new("sh")
                .args(["-c", "while :; do :; done"])
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .process_group(0)
                .spawn()
                .expect("sh starts");
            self.children.push(child);
        }
        self
    }

    /// Adds a page-cache filler: a process that keeps the page cache filled with a file of
    /// `bytes` (rounded up to MiB) in a fresh directory under `dir` (on a disk, not a
    /// tmpfs, so that its pages can be reclaimed), reading it whole again and again, and
    /// between two reads rewrites a smaller file (1/`DIRTY_FRACTION` of it, at most
    /// 1 GiB), whose pages wait dirty for the disk. [`Hogs::wait_filled`] waits for a
    /// read. Panics if it has a filler already.
    pub fn with_page_cache_filler(mut self, dir: &Path, bytes: u64) -> Self {
        assert!(self.filler.is_none(), "one page-cache filler only");
        let home = tempfile::Builder::new()
            .prefix("recd-page-cache-")
            .tempdir_in(dir)
            .expect("a directory for the page-cache filler");
        let file = home.path().join("filler");
        let mib = bytes.div_ceil(1 << 20).max(2);
        let dirty_mib = (mib / DIRTY_FRACTION).clamp(1, 1024);
        let child = Command::new("sh")
            .args(["-c", FILLER, "page-cache-filler"])
            .arg(&file)
            .arg(mib.to_string())
            .arg(dirty_mib.to_string())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .process_group(0)
            .spawn()
            .expect("sh starts");
        self.children.push(child);
        self.filler = Some((home, file));
        self
    }

    /// The largest page-cache filler (in bytes, with its dirty file) that the file system
    /// under `dir` holds while leaving [`FILLER_DISK_RESERVE`] free for everything else
    /// (a build, the other tests): a test caps its filler to this rather than fail for a
    /// disk fuller than its author's.
    pub fn page_cache_filler_room(dir: &Path) -> u64 {
        let available = recd_storage::space_of(dir)
            .unwrap_or_else(|e| panic!("the room under {}: {e}", dir.display()))
            .available;
        // The filler and its dirty file.
        available.saturating_sub(FILLER_DISK_RESERVE) / (DIRTY_FRACTION + 1) * DIRTY_FRACTION
    }

    /// How many times the page-cache filler has read its file whole (0 without one).
    pub fn fill_passes(&self) -> u64 {
        let Some((_, file)) = &self.filler else {
            return 0;
        };
        std::fs::read_to_string(file.with_extension("passes"))
            .ok()
            .and_then(|passes| passes.trim().parse().ok())
            .unwrap_or(0)
    }

    /// Waits (at most `limit`) until the page-cache filler has finished reading its file
    /// whole after this call began, so that the page cache holds it (again); true when it
    /// has, or when there is no filler.
    pub fn wait_filled(&self, limit: Duration) -> bool {
        if self.filler.is_none() {
            return true;
        }
        let before = self.fill_passes();
        wait_until(limit, || self.fill_passes() > before)
    }
}

impl Drop for Hogs {
    fn drop(&mut self) {
        for child in &mut self.children {
            // SAFETY: kill(2) on the process group of our own child (it leads it).
            unsafe { libc::kill(-(child.id() as i32), libc::SIGKILL) };
            let _ = child.wait();
        }
        // The filler's directory (a TempDir) is removed as it drops.
        self.filler = None;
    }
}

/// The memory the kernel says is available for new allocations without swapping
/// (`MemAvailable` of /proc/meminfo), in bytes.
pub fn available_memory() -> u64 {
    let meminfo = std::fs::read_to_string("/proc/meminfo").expect("/proc/meminfo");
    meminfo
        .lines()
        .find_map(|line| {
            let kib = line.strip_prefix("MemAvailable:")?;
            kib.trim().trim_end_matches("kB").trim().parse::<u64>().ok()
        })
        .expect("MemAvailable in /proc/meminfo")
        * 1024
}
