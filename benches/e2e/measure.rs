//! Child processes and what they cost: rusage from wait4.

use std::path::Path;
use std::process::{Child, Command};

use crate::Scenario;

/// CPU time, memory, faults and context switches of one or more processes.
#[derive(Debug, Clone, Copy, Default)]
pub struct Usage {
    /// User CPU seconds.
    pub utime: f64,
    /// System CPU seconds.
    pub stime: f64,
    /// Wall seconds the process ran.
    pub wall: f64,
    /// Peak resident set, KiB (the largest of the processes).
    pub max_rss_kib: i64,
    /// Minor page faults.
    pub minflt: i64,
    /// Major page faults.
    pub majflt: i64,
    /// Voluntary context switches.
    pub nvcsw: i64,
    /// Involuntary context switches.
    pub nivcsw: i64,
}

impl Usage {
    /// Adds another process's usage (CPU and counters summed, peak RSS the larger).
    pub fn add(&mut self, other: &Usage) {
        self.utime += other.utime;
        self.stime += other.stime;
        self.wall = self.wall.max(other.wall);
        self.max_rss_kib = self.max_rss_kib.max(other.max_rss_kib);
        self.minflt += other.minflt;
        self.majflt += other.majflt;
        self.nvcsw += other.nvcsw;
        self.nivcsw += other.nivcsw;
    }

    /// User plus system CPU seconds.
    pub fn cpu(&self) -> f64 {
        self.utime + self.stime
    }
}

/// A started child and when it started.
pub struct Started {
    child: Child,
    at: std::time::Instant,
}

/// Starts a command.
pub fn spawn(command: &mut Command) -> Result<Started, String> {
    let child = command
        .spawn()
        .map_err(|e| format!("cannot start {:?}: {e}", command.get_program()))?;
    Ok(Started {
        child,
        at: std::time::Instant::now(),
    })
}

impl Started {
    /// The child's process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }
}

/// Sends SIGINT.
pub fn interrupt(started: &Started) {
    // SAFETY: kill(2) on our own child.
    unsafe { libc::kill(started.child.id() as i32, libc::SIGINT) };
}

/// Reads the child's stdout to the end and reaps it with wait4, returning its rusage
/// (which covers the process and the children it waited for); fails if it failed.
pub fn wait_measured(started: Started) -> Result<(Vec<u8>, Usage), String> {
    let pid = started.child.id();
    let (out, usage, success) = reap(started)?;
    if !success {
        return Err(format!("child {pid} failed"));
    }
    Ok((out, usage))
}

fn reap(mut started: Started) -> Result<(Vec<u8>, Usage, bool), String> {
    use std::io::Read;
    let mut out = Vec::new();
    if let Some(mut stdout) = started.child.stdout.take() {
        stdout.read_to_end(&mut out).map_err(|e| e.to_string())?;
    }
    let mut status = 0;
    // SAFETY: rusage is plain data, filled by wait4 for our own child.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let pid = started.child.id() as i32;
    // SAFETY: waits for our own child, which std has not reaped.
    let reaped = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    if reaped != pid {
        return Err(format!("wait4: {}", std::io::Error::last_os_error()));
    }
    let success = libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0;
    let seconds = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    Ok((
        out,
        Usage {
            utime: seconds(usage.ru_utime),
            stime: seconds(usage.ru_stime),
            wall: started.at.elapsed().as_secs_f64(),
            max_rss_kib: usage.ru_maxrss,
            minflt: usage.ru_minflt,
            majflt: usage.ru_majflt,
            nvcsw: usage.ru_nvcsw,
            nivcsw: usage.ru_nivcsw,
        },
        success,
    ))
}

/// `iox2 service record` processes, one per service.
pub struct Peer {
    processes: Vec<Started>,
    dir: std::path::PathBuf,
}

/// Starts one `iox2 service record` per service of the scenario; the services must exist
/// already (`iox2` reads their types at start).
pub fn start_iox2_peer(
    iox2: &Path,
    name_prefix: &str,
    scenario: &Scenario,
    run_dir: &Path,
) -> Result<Peer, String> {
    let dir = run_dir.join("iox2");
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    let mut peer = Peer {
        processes: Vec::new(),
        dir,
    };
    for (i, service) in scenario.services.iter().enumerate() {
        let output = peer.dir.join(format!("{i}.iox2dump"));
        peer.processes.push(spawn(
            Command::new(iox2)
                .args([
                    "service",
                    "record",
                    "--data-representation",
                    "IOX2DUMP",
                    "--output",
                ])
                .arg(&output)
                .arg(format!("{name_prefix}{service}"))
                .stdout(std::process::Stdio::null()),
        )?);
    }
    Ok(peer)
}

/// Stops the peer's processes; returns their summed usage and the bytes they wrote. A
/// peer process that wrote nothing (it failed to start, say) is an error, so a broken
/// reference cannot pass for a cheap one.
pub fn stop_iox2_peer(peer: Peer) -> Result<(Usage, u64), String> {
    let mut total = Usage::default();
    for process in &peer.processes {
        interrupt(process);
    }
    for process in peer.processes {
        // iox2 may exit non-zero on SIGINT; its usage counts all the same.
        let (_, usage, _) = reap(process)?;
        total.add(&usage);
    }
    let mut bytes = 0;
    let mut empty = Vec::new();
    for entry in std::fs::read_dir(&peer.dir).map_err(|e| e.to_string())? {
        let entry = entry.map_err(|e| e.to_string())?;
        let len = entry.metadata().map_or(0, |m| m.len());
        if len == 0 {
            empty.push(entry.file_name().to_string_lossy().into_owned());
        }
        bytes += len;
    }
    let _ = std::fs::remove_dir_all(&peer.dir);
    if bytes == 0 || !empty.is_empty() {
        return Err(format!(
            "`iox2 service record` wrote nothing ({}); check that --iox2 runs",
            if empty.is_empty() {
                "no files".to_string()
            } else {
                empty.join(", ")
            }
        ));
    }
    Ok((total, bytes))
}
