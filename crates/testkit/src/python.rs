//! The Python side of the interop tests: the interpreter `scripts/test` prepares, the
//! Cyclone DDS publisher and the ROS 2 readers in `tests/python/`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde_json::Value;

use crate::wait_bounded;

/// The workspace's root.
fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The Python interpreter with the packages of `tests/python/requirements.txt`:
/// `$RECD_TEST_PYTHON`, else the workspace's `.venv` that `scripts/test` prepares.
pub fn python() -> PathBuf {
    if let Some(python) = std::env::var_os("RECD_TEST_PYTHON") {
        return python.into();
    }
    let venv = workspace().join(".venv/bin/python");
    assert!(
        venv.exists(),
        "no Python with the test packages: run scripts/test, which prepares .venv"
    );
    venv
}

/// A file of `tests/python/`.
pub fn python_file(name: &str) -> PathBuf {
    workspace().join("tests/python").join(name)
}

/// ROS 2 message definitions the DDS tests record with (`share/<pkg>/msg/*.msg`).
pub fn ros2_fixtures() -> PathBuf {
    workspace().join("tests/fixtures/ros2")
}

/// The ROS 2 install tree PyPI's wheels put in the test venv (`share/<pkg>/msg/*.msg`).
pub fn wheels_share() -> PathBuf {
    workspace().join(".venv/share")
}

/// The `.msg` file the wheels ship for `pkg/Type`.
pub fn wheel_msg(name: &str) -> String {
    let (package, type_name) = name.split_once('/').expect("pkg/Type");
    let path = wheels_share().join(format!("{package}/msg/{type_name}.msg"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// `CYCLONEDDS_URI` for Cyclone DDS on loopback only, discovering by unicast.
pub fn cyclone_loopback_config() -> String {
    format!(
        "file://{}",
        python_file("cyclonedds-loopback.xml").display()
    )
}

/// Starts `tests/python/dds_publish.py` with `args`, on loopback only (Cyclone's
/// unicast loopback configuration: `lo` may lack the MULTICAST flag).
pub fn dds_publish(args: &[&str]) -> Child {
    spawn_script("dds_publish.py", args)
}

/// Starts `tests/python/dds_subscribe.py` with `args`, on loopback only; read what it
/// received with [`script_done`].
pub fn dds_subscribe(args: &[&str]) -> Child {
    spawn_script("dds_subscribe.py", args)
}

/// Starts `tests/python/shm_pubsub.py` (iceoryx2's Python bindings) with `args`; read
/// what it printed with [`script_done`].
pub fn shm_pubsub(args: &[&str]) -> Child {
    spawn_script("shm_pubsub.py", args)
}

/// Starts `tests/python/shm_camera.py` (iceoryx2's Python bindings: N topics of byte
/// slices, each sample's first 8 bytes its index) with `args`; read its report (`sent`
/// per service) with [`script_done`].
pub fn shm_camera(args: &[&str]) -> Child {
    spawn_script("shm_camera.py", args)
}

/// Starts `tests/python/<script>` with `args`, stdout and stderr piped (Cyclone DDS on
/// loopback only).
/// Starts `tests/python/zenoh_node.py` (a ROS 2 node on rmw_zenoh played with Python
/// `eclipse-zenoh`, and the router it talks through) with `args`.
pub fn zenoh_node(args: &[&str]) -> Child {
    spawn_script("zenoh_node.py", args)
}

pub(crate) fn spawn_script(script: &str, args: &[&str]) -> Child {
    Command::new(python())
        .arg(python_file(script))
        .args(args)
        .env("CYCLONEDDS_URI", cyclone_loopback_config())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{script} does not start: {e}"))
}

/// What a DDS publisher published, or a DDS subscriber received.
pub struct Published {
    /// One entry per sample: topic, i, bytes, sha256 of the CDR, data.
    pub samples: Vec<Value>,
    /// The final line: done, matched, sent.
    pub done: Value,
}

/// Waits (at most `limit`) for a publisher of [`dds_publish`] and asserts it succeeded.
pub fn dds_published(child: Child, limit: Duration) -> Published {
    script_lines(child, limit, "DDS publisher")
}

/// Waits (at most `limit`) for a script of [`dds_subscribe`] or [`shm_pubsub`] and
/// asserts it succeeded: `samples` holds one entry per sample it published or received
/// (its `ready` line left out), `done` its last line.
pub fn script_done(child: Child, limit: Duration) -> Published {
    let mut lines = script_lines(child, limit, "test script");
    lines.samples.retain(|line| line["ready"] != true);
    lines
}

/// The JSON lines a test script printed, the last (`done`) apart.
fn script_lines(mut child: Child, limit: Duration, what: &str) -> Published {
    // Read while it runs: a full pipe would stall the script.
    let stdout = read_in_background(child.stdout.take());
    let stderr = read_in_background(child.stderr.take());
    let status = wait_bounded(child, limit).status;
    let stdout = stdout.join().expect("stdout reader");
    let stderr = stderr.join().expect("stderr reader");
    assert!(status.success(), "the {what} failed ({status}): {stderr}");
    let mut lines: Vec<Value> = stdout
        .lines()
        .map(|line| serde_json::from_str(line).expect("the script prints JSON lines"))
        .collect();
    let done = lines.pop().expect("a final line");
    assert_eq!(done["done"], true, "unexpected last line {done}; {stderr}");
    Published {
        samples: lines,
        done,
    }
}

fn read_in_background(
    pipe: Option<impl std::io::Read + Send + 'static>,
) -> std::thread::JoinHandle<String> {
    std::thread::spawn(move || {
        let mut text = String::new();
        if let Some(mut pipe) = pipe {
            let _ = pipe.read_to_string(&mut text);
        }
        text
    })
}

/// Every message of an MCAP file as `tests/python/read_ros2.py` decodes it with
/// `rosbags` and with `mcap-ros2-support` (field `reader` tells which).
pub fn read_ros2(path: &Path) -> Vec<Value> {
    ros2_lines(&read_with("read_ros2.py", path, &[]))
}

/// [`read_ros2`] with `--lenient`: a message a reader cannot decode gives a line with
/// `"data": null` and its `"error"` instead of failing.
pub fn read_ros2_lenient(path: &Path) -> Vec<Value> {
    ros2_lines(&read_with("read_ros2.py", path, &["--lenient"]))
}

fn ros2_lines(stdout: &[u8]) -> Vec<Value> {
    String::from_utf8_lossy(stdout)
        .lines()
        .map(|line| serde_json::from_str(line).expect("read_ros2.py prints JSON lines"))
        .collect()
}

/// An MCAP file as `tests/python/read_mcap.py` reads it with the Python `mcap` package:
/// `library`, `message_count`, `messages` (of the recorded topics: recd's own
/// `recd/health` channel left out, which `daemon/tests/health.rs` reads itself),
/// `metadata` and `attachments`.
pub fn read_mcap(path: &Path) -> Value {
    let mut read: Value = serde_json::from_slice(&read_with("read_mcap.py", path, &[]))
        .expect("read_mcap.py prints JSON");
    if let Some(messages) = read["messages"].as_array_mut() {
        messages.retain(|m| m["topic"] != recd_engine::recd_health::HEALTH_CHANNEL);
    }
    read
}

/// Messages of `files` (in order) as the Python `mcap` package reads them, by recorded
/// topic ([`read_mcap`]): the SHA-256 of each message's data in file order, and the log
/// times (ns).
pub fn messages_by_topic(
    files: &[PathBuf],
) -> (BTreeMap<String, Vec<String>>, BTreeMap<String, Vec<u64>>) {
    let mut digests: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut times: BTreeMap<String, Vec<u64>> = BTreeMap::new();
    for file in files {
        let read = read_mcap(file);
        for message in read["messages"].as_array().unwrap() {
            let topic = message["topic"].as_str().unwrap().to_string();
            digests
                .entry(topic.clone())
                .or_default()
                .push(message["sha256"].as_str().unwrap().to_string());
            times
                .entry(topic)
                .or_default()
                .push(message["log_time"].as_u64().unwrap());
        }
    }
    (digests, times)
}

/// What the reader script `script` prints about `path` with `options`; it must succeed.
fn read_with(script: &str, path: &Path, options: &[&str]) -> Vec<u8> {
    let output = Command::new(python())
        .arg(python_file(script))
        .args(options)
        .arg(path)
        .output()
        .expect("python runs");
    assert!(
        output.status.success(),
        "{script} failed on {}: {}",
        path.display(),
        String::from_utf8_lossy(&output.stderr)
    );
    output.stdout
}

/// Starts `tests/python/ros2_introspection.py` with `args` (a Cyclone DDS writer of ROS 2
/// service and action introspection, on loopback only); read what it wrote with
/// [`script_done`].
pub fn ros2_introspection(args: &[&str]) -> Child {
    spawn_script("ros2_introspection.py", args)
}
