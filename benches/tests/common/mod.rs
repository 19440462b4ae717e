//! Helpers of the end-to-end tests: isolated iceoryx2 domains, the load generator process
//! and a recording in this process.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use recd_benches::report::LoadReport;
use recd_engine::{RecordingConfig, TopicSelection};

/// An iceoryx2 domain of its own (a unique file prefix); its files are removed on drop.
pub struct Domain {
    pub prefix: String,
}

impl Default for Domain {
    fn default() -> Self {
        Self::new()
    }
}

impl Domain {
    pub fn new() -> Self {
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let prefix = format!(
            "recdt{}x{}_",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        );
        Self { prefix }
    }

    /// A recording config in this domain, recording `include` into `dir`.
    pub fn config(&self, dir: &Path, include: &[&str]) -> RecordingConfig {
        let mut config = RecordingConfig::new(dir);
        config.iceoryx2_prefix = Some(self.prefix.clone());
        config.topics = TopicSelection {
            include: include.iter().map(|s| s.to_string()).collect(),
            exclude: vec![],
        };
        config.discovery_interval = Duration::from_millis(50);
        config
    }

    /// Starts the load generator in this domain with `args`.
    pub fn load(&self, args: &[&str]) -> Child {
        Command::new(env!("CARGO_BIN_EXE_recd-load"))
            .args(["--iceoryx2-prefix", &self.prefix, "--json"])
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("recd-load starts")
    }

    /// Starts the load generator in a process group of its own, for [`kill_group`].
    pub fn load_in_own_group(&self, args: &[&str]) -> Child {
        use std::os::unix::process::CommandExt;
        Command::new(env!("CARGO_BIN_EXE_recd-load"))
            .args(["--iceoryx2-prefix", &self.prefix, "--json"])
            .args(args)
            .stdout(Stdio::null())
            .process_group(0)
            .spawn()
            .expect("recd-load starts")
    }

    /// Files of this domain left in /dev/shm and iceoryx2's directory.
    pub fn leftovers(&self) -> Vec<PathBuf> {
        let mut found = Vec::new();
        for root in ["/dev/shm", "/tmp/iceoryx2"] {
            collect(Path::new(root), &self.prefix, &mut found);
        }
        found
    }
}

fn collect(dir: &Path, prefix: &str, found: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            collect(&path, prefix, found);
        } else if entry.file_name().to_string_lossy().starts_with(prefix) {
            found.push(path);
        }
    }
}

impl Drop for Domain {
    fn drop(&mut self) {
        for path in self.leftovers() {
            let _ = std::fs::remove_file(path);
        }
    }
}

/// Waits (bounded) for the load generator and parses its report.
pub fn finish_load(child: Child) -> LoadReport {
    let output = wait_bounded(child, Duration::from_secs(60));
    assert!(output.status.success(), "recd-load failed");
    serde_json::from_slice(&output.stdout).expect("recd-load prints its JSON report")
}

/// Waits for a child at most `limit`, killing it after that.
pub fn wait_bounded(mut child: Child, limit: Duration) -> std::process::Output {
    let deadline = Instant::now() + limit;
    while Instant::now() < deadline {
        if child.try_wait().expect("child status").is_some() {
            return child.wait_with_output().expect("child output");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = child.kill();
    panic!("child process did not finish within {limit:?}");
}

/// Polls `condition` every 10 ms for at most `limit`.
pub fn wait_until(limit: Duration, mut condition: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + limit;
    while Instant::now() < deadline {
        if condition() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    false
}

/// Kills a child started by [`Domain::load_in_own_group`] and its publisher processes
/// with SIGKILL, as a crash would.
pub fn kill_group(mut child: Child) {
    // SAFETY: kill(2) on the child's own process group.
    unsafe { libc::kill(-(child.id() as i32), libc::SIGKILL) };
    let _ = child.wait();
}
