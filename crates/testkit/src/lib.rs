//! Helpers of recd's end-to-end tests: isolated iceoryx2 domains, the load generator
//! process, the Python DDS publisher and ROS 2 readers, bounded waits, mounted file
//! systems, and the workspace's built binaries.

#![warn(missing_docs)]
#![warn(clippy::undocumented_unsafe_blocks)]

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

mod bag;
mod beside;
mod cut_check;
mod ddsperf;
mod hogs;
mod http;
mod keys;
mod load;
mod man;
mod memory;
mod mosquitto;
mod mount;
mod netns;
mod node;
mod phases;
mod prometheus;
mod proxy;
mod pty;
mod python;
mod recorded;
mod script;
mod seaweed;
mod stopped;
mod throttle;

pub use bag::bag_files;
pub use beside::{cameras2, Cameras2};
pub use cut_check::{assert_cut_is_window, held_messages, HeldMessage};
pub use ddsperf::{ddsperf_done, ddsperf_publish, DDSPERF_TOPIC};
pub use hogs::{available_memory, Hogs, FILLER_DISK_RESERVE};
pub use http::{http_get, http_request, HttpReply};
pub use keys::{age_identity, openssl_keys};
pub use load::{MessageInfoHeader, RecdLoad};
pub use man::render_man_page;
pub use memory::anonymous_bytes;
pub use mosquitto::{free_port, ClientCert, Mosquitto, Subscription};
pub use mount::{ext4_image, Mount};
pub use netns::NetNs;
pub use node::{
    read_ros2_with_foxglove, read_with_mcap_core, validate_health_with_mcap_core, McapCoreRead,
};
pub use phases::Phases;
pub use prometheus::{Prometheus, SCRAPE_INTERVAL};
pub use proxy::TcpProxy;

pub use pty::{Killed, Pty, CTRL_C, DOWN, RIGHT, SPACE, UP};
pub use python::{
    cyclone_loopback_config, dds_publish, dds_published, dds_subscribe, messages_by_topic, python,
    python_file, read_mcap, read_ros2, read_ros2_lenient, ros2_fixtures, ros2_introspection,
    script_done, shm_camera, shm_pubsub, wheel_msg, wheels_share, zenoh_node, Published,
};
use recd_engine::{RecordingConfig, TopicSelection};
use recd_workload::report::LoadReport;
pub use recorded::{recorded_messages, recorded_queue_depth, RecordedMessage};
pub use script::{clock_subscribe, shm_slice_subscribe, Script};
pub use seaweed::{S3Object, SeaweedFs};
pub use stopped::{Shortfall, StopCounts, Stopped};
pub use throttle::{drop_page_cache, CgroupVersion, ThrottledDisk};

/// A binary of the workspace, built beside the running test (`cargo test --workspace`
/// builds every binary before running any test).
pub fn binary(name: &str) -> PathBuf {
    let test = std::env::current_exe().expect("the test's own path");
    let dir = test
        .parent()
        .and_then(Path::parent)
        .expect("tests run from <target>/<profile>/deps");
    let path = dir.join(name);
    assert!(
        path.exists(),
        "{} is missing: run the tests with `cargo test --workspace` (scripts/test), which builds it",
        path.display()
    );
    path
}

/// An iceoryx2 domain of its own (a unique file prefix); its files are removed on drop.
pub struct Domain {
    /// The iceoryx2 file prefix (`global.prefix`) that sets this domain apart.
    pub prefix: String,
}

impl Default for Domain {
    fn default() -> Self {
        Self::new()
    }
}

impl Domain {
    /// A domain no other test (or process) uses.
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
            ..TopicSelection::default()
        };
        config.discovery_interval = Duration::from_millis(50);
        config
    }

    /// Starts the load generator in this domain, its JSON report piped for [`finish_load`].
    pub fn load(&self, load: &RecdLoad) -> Child {
        load.command(&["--iceoryx2-prefix", &self.prefix])
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("recd-load starts")
    }

    /// Starts the load generator in a process group of its own, for [`kill_group`].
    pub fn load_in_own_group(&self, load: &RecdLoad) -> Child {
        use std::os::unix::process::CommandExt;
        load.command(&["--iceoryx2-prefix", &self.prefix])
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

/// A `recd` daemon of the tests: its socket, data and state directories under `root`, and
/// every session recording in `domain`.
pub struct Recd {
    child: Option<Child>,
    /// Where its socket, configuration, log, data and state live.
    pub root: PathBuf,
    /// Its control socket.
    pub socket: PathBuf,
}

impl Recd {
    /// Starts recd under `root` (reusing what a previous recd left there) and waits until
    /// its socket answers.
    pub fn start(root: &Path, domain: &Domain) -> Self {
        Self::start_with(root, domain, "", &[])
    }

    /// [`Recd::start`] with extra top-level configuration lines and environment variables.
    pub fn start_with(
        root: &Path,
        domain: &Domain,
        extra_config: &str,
        environment: &[(&str, &str)],
    ) -> Self {
        Self::start_configured(root, domain, extra_config, "", environment)
    }

    /// [`Recd::start`] with DDS on loopback only (`dds_interfaces = ["127.0.0.1"]`).
    pub fn start_on_dds_loopback(root: &Path, domain: &Domain) -> Self {
        Self::start_configured(root, domain, "", "dds_interfaces = [\"127.0.0.1\"]\n", &[])
    }

    /// [`Recd::start_with`] with extra lines for the `[recording]` table too.
    pub fn start_configured(
        root: &Path,
        domain: &Domain,
        extra_config: &str,
        recording_config: &str,
        environment: &[(&str, &str)],
    ) -> Self {
        Self::start_wrapped(
            root,
            domain,
            &[],
            extra_config,
            recording_config,
            environment,
        )
    }

    /// [`Recd::start_configured`] with recd's command line prefixed by `wrapper` (a
    /// program and its arguments that exec the command after them, as `setpriv
    /// --bounding-set=-sys_nice` does); empty, recd runs as is.
    pub fn start_wrapped(
        root: &Path,
        domain: &Domain,
        wrapper: &[&str],
        extra_config: &str,
        recording_config: &str,
        environment: &[(&str, &str)],
    ) -> Self {
        let socket = root.join("recd.sock");
        let config = root.join("recd.toml");
        // Files stay as recorded unless a test is about finishing them: tests of other
        // features look at the files their sessions wrote.
        let finish = if recording_config.contains("finish") {
            ""
        } else {
            "finish = \"none\"\n"
        };
        std::fs::write(
            &config,
            format!(
                "socket = {socket:?}\ndata_dir = {data:?}\nstate_dir = {state:?}\nstop_timeout = \"30s\"\n{extra_config}\n\n[recording]\niceoryx2_prefix = {prefix:?}\ndiscovery_interval = \"50ms\"\n{finish}{recording_config}\n",
                data = root.join("data"),
                state = root.join("state"),
                prefix = domain.prefix,
            ),
        )
        .expect("config written");
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(root.join("recd.log"))
            .expect("log file");
        let mut command = match wrapper.split_first() {
            Some((program, args)) => {
                let mut command = Command::new(program);
                command.args(args).arg(binary("recd"));
                command
            }
            None => Command::new(binary("recd")),
        };
        let child = command
            .arg("--config")
            .arg(&config)
            .envs(environment.iter().copied())
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .expect("recd starts");
        let recd = Self {
            child: Some(child),
            root: root.to_path_buf(),
            socket,
        };
        let up = wait_until(Duration::from_secs(10), || {
            std::os::unix::net::UnixStream::connect(&recd.socket).is_ok()
        });
        assert!(up, "recd did not listen within 10 s; log:\n{}", recd.log());
        recd
    }

    /// recd's process id.
    pub fn pid(&self) -> u32 {
        self.child.as_ref().expect("recd is running").id()
    }

    /// What recd logged so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.root.join("recd.log")).unwrap_or_default()
    }

    /// The address its HTTP listener took (`[http] listen`, port 0 for any), from its
    /// log; waits (bounded) for the line.
    pub fn http_address(&self) -> std::net::SocketAddr {
        let mut found = None;
        wait_until(Duration::from_secs(10), || {
            found = (self.log().lines())
                .find_map(|line| line.split("HTTP listening address=").nth(1))
                .and_then(|rest| rest.split_whitespace().next())
                .and_then(|address| address.parse().ok());
            found.is_some()
        });
        found.unwrap_or_else(|| {
            panic!(
                "recd logged no HTTP address; log:
{}",
                self.log()
            )
        })
    }

    /// Runs `rec args…` against this recd.
    pub fn rec(&self, args: &[&str]) -> std::process::Output {
        rec(&self.socket, args)
    }

    /// Runs `rec … --json`, asserts success and parses its output.
    pub fn rec_json(&self, args: &[&str]) -> serde_json::Value {
        let mut args = args.to_vec();
        args.push("--json");
        let output = self.rec(&args);
        assert!(
            output.status.success(),
            "rec {args:?} failed: {}\nrecd log:\n{}",
            String::from_utf8_lossy(&output.stderr),
            self.log()
        );
        serde_json::from_slice(&output.stdout).expect("rec prints JSON")
    }

    /// The session called `name` in `rec list --json` (the catalog's record of it).
    pub fn listed(&self, name: &str) -> serde_json::Value {
        let list = self.rec_json(&["list"]);
        list.as_array()
            .expect("rec list --json is an array")
            .iter()
            .find(|s| s["name"] == name)
            .cloned()
            .unwrap_or_else(|| panic!("session {name} not in {list}"))
    }

    /// Waits (at most 30 s) until `session` has written `messages` in all; false if not.
    pub fn wait_written(&self, session: &str, messages: u64) -> bool {
        // Bounded generously: with the whole suite running on 2 cores, a publisher in
        // Python can take a while; callers check the exact counts in the files after.
        wait_until(Duration::from_secs(30), || {
            let status = self.rec_json(&["status", session]);
            status[0]["topics"]
                .as_array()
                .map(|topics| {
                    topics
                        .iter()
                        .filter_map(|t| t["written"].as_u64())
                        .sum::<u64>()
                })
                .is_some_and(|written| written >= messages)
        })
    }

    /// The topic's per-topic counts in `rec status SESSION --json`, if it has them.
    pub fn topic_status(&self, session: &str, topic: &str) -> Option<serde_json::Value> {
        let status = self.rec_json(&["status", session]);
        status[0]["topics"]
            .as_array()?
            .iter()
            .find(|t| t["name"] == topic)
            .cloned()
    }

    /// Waits (at most `limit`) until `topic` of `session` has written exactly `count`
    /// messages; false if not.
    pub fn wait_topic_written(
        &self,
        session: &str,
        topic: &str,
        count: u64,
        limit: Duration,
    ) -> bool {
        wait_until(limit, || {
            self.topic_status(session, topic)
                .is_some_and(|t| t["written"] == count)
        })
    }

    /// Sends `signal` and waits (bounded) for recd to exit; returns its exit status.
    pub fn signal_and_wait(&mut self, signal: i32, limit: Duration) -> std::process::ExitStatus {
        let mut child = self.child.take().expect("recd is running");
        // SAFETY: kill(2) on our own child.
        unsafe { libc::kill(child.id() as i32, signal) };
        let deadline = Instant::now() + limit;
        loop {
            if let Some(status) = child.try_wait().expect("recd status") {
                return status;
            }
            if Instant::now() > deadline {
                let _ = child.kill();
                panic!("recd did not exit within {limit:?} of signal {signal}");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Recd {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// Runs recd on `config`, asserts that it refuses to start (bounded: 20 s), and returns
/// what it said on stderr.
pub fn recd_refused(config: &Path) -> String {
    let child = Command::new(binary("recd"))
        .arg("--config")
        .arg(config)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("recd starts");
    let output = wait_bounded(child, Duration::from_secs(20));
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(
        !output.status.success(),
        "recd started on {}",
        config.display()
    );
    stderr
}

/// Messages the first stopped session in `rec stop --json` dropped or lost.
pub fn stopped_dropped(stopped: &serde_json::Value) -> u64 {
    (stopped[0]["topics"]
        .as_array()
        .expect("a stop report lists topics")
        .iter())
    .map(|t| t["dropped"].as_u64().unwrap_or(0) + t["lost"].as_u64().unwrap_or(0))
    .sum()
}

/// Samples the receive threads of the first stopped session in `rec stop --json` took
/// back from writers that fell behind (spilled).
pub fn stopped_spilled(stopped: &serde_json::Value) -> u64 {
    (stopped[0]["receive_threads"]
        .as_array()
        .expect("a stop report lists its receive threads")
        .iter())
    .map(|t| {
        t["spilled"]
            .as_u64()
            .expect("a receive thread counts its spills")
    })
    .sum()
}

/// The files of one stopped session in `rec stop --json` (the session itself, or the
/// array of sessions with it first).
pub fn stopped_files(stopped: &serde_json::Value) -> Vec<PathBuf> {
    stopped[0]["files"]
        .as_array()
        .or_else(|| stopped["files"].as_array())
        .expect("a stop report lists files")
        .iter()
        .map(|f| PathBuf::from(f["path"].as_str().expect("a file has a path")))
        .collect()
}

/// Runs `rec args…` with `RECD_SOCKET=<socket>` (so that commands that talk to no recd
/// run too).
pub fn rec(socket: &Path, args: &[&str]) -> std::process::Output {
    Command::new(binary("rec"))
        .env("RECD_SOCKET", socket)
        .args(args)
        .output()
        .expect("rec runs")
}

/// The pacing of a series of times in seconds: from the first to the last, and the median
/// interval between neighbours.
pub fn pacing(times: &[f64]) -> (f64, f64) {
    let mut gaps: Vec<f64> = times.windows(2).map(|w| w[1] - w[0]).collect();
    gaps.sort_by(f64::total_cmp);
    (times[times.len() - 1] - times[0], gaps[gaps.len() / 2])
}

/// Asserts that `played` (arrival times, s) kept the pacing of `recorded` (s): the span
/// within 5 % and the median interval within 10 %.
pub fn assert_paced_like(recorded: &[f64], played: &[f64]) {
    let (recorded_span, recorded_gap) = pacing(recorded);
    let (played_span, played_gap) = pacing(played);
    assert!(
        (played_span / recorded_span - 1.0).abs() < 0.05,
        "span {played_span:.3} s played, {recorded_span:.3} s recorded"
    );
    assert!(
        (played_gap / recorded_gap - 1.0).abs() < 0.1,
        "median interval {played_gap:.4} s played, {recorded_gap:.4} s recorded"
    );
}

/// The `t` (arrival time) of each sample a test script received.
pub fn arrival_times(samples: &[serde_json::Value]) -> Vec<f64> {
    samples.iter().map(|s| s["t"].as_f64().unwrap()).collect()
}
