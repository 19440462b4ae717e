//! Helpers for tests that run the real `rec` binary.

#![allow(dead_code)]

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Output};

use recd_storage::{MessageHeader, StreamWriter, WriterOptions};

/// The `rec` binary under test.
pub fn rec() -> Command {
    Command::new(env!("CARGO_BIN_EXE_rec"))
}

/// Runs `rec` with `args` and returns its output.
pub fn run(args: &[&str]) -> Output {
    rec().args(args).output().expect("rec runs")
}

/// Exit code, stdout and stderr of a finished `rec`.
pub fn outcome(output: &Output) -> (i32, String, String) {
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// Writes `count` messages of `size` bytes on `/camera` and `/imu`, alternating, and
/// returns the payloads in order.
pub fn write_recording(path: &Path, count: u32, size: usize) -> Vec<Vec<u8>> {
    write_recording_with(path, count, size, WriterOptions::default())
}

/// [`write_recording`] with the writer's options given.
pub fn write_recording_with(
    path: &Path,
    count: u32,
    size: usize,
    options: WriterOptions,
) -> Vec<Vec<u8>> {
    let mut writer = StreamWriter::create(path, options).unwrap();
    let schema = writer
        .add_schema("sensor_msgs/msg/Image", "ros2msg", b"")
        .unwrap();
    let camera = writer
        .add_channel(Some(schema), "/camera", "cdr", &BTreeMap::new())
        .unwrap();
    let imu = writer
        .add_channel(None, "/imu", "raw", &BTreeMap::new())
        .unwrap();
    let mut payloads = Vec::new();
    for i in 0..count {
        let payload = recd_workload::mixed_bytes(size, u64::from(i));
        let header = MessageHeader {
            channel: if i % 2 == 0 { camera } else { imu },
            sequence: i,
            log_time: 1_000_000_000 * u64::from(i + 1),
            publish_time: 1_000_000_000 * u64::from(i + 1),
        };
        writer.write_message(&header, &payload).unwrap();
        payloads.push(payload);
    }
    writer.close().unwrap();
    wait_until_unlocked(path);
    payloads
}

/// Waits (at most 10 s) until nobody holds the writer's `flock` of `path` any more.
///
/// Closing the writer is not enough in a test process: sibling tests spawn children, and a
/// child forked before the close holds a copy of the descriptor, and with it the lock, until
/// it execs. `rec reindex` would then rightly call the file "still being recorded".
pub fn wait_until_unlocked(path: &Path) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while recd_storage::is_being_recorded(path).unwrap() {
        assert!(
            std::time::Instant::now() < deadline,
            "{} stayed locked after its writer closed",
            path.display()
        );
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
}

/// Whether this process runs as root, where file permissions do not bind it.
pub fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() == 0 }
}

/// `rec` run as an unprivileged user when the tests run as root, so that file permissions
/// apply to it.
pub fn rec_unprivileged() -> Command {
    if is_root() {
        let mut command = Command::new("setpriv");
        command.args([
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
            env!("CARGO_BIN_EXE_rec"),
        ]);
        command
    } else {
        rec()
    }
}
