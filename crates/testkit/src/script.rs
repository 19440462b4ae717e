//! A test script of `tests/python/` that runs beside the test and is read while it runs:
//! the test can wait for its `{"ready": true}` line before starting what it observes; the
//! script is killed if the test ends before it does.

use std::io::{BufRead, BufReader, Read};
use std::process::Child;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::{wait_until, Published};

/// A running script of `tests/python/` whose JSON lines are collected as it prints them.
pub struct Script {
    name: String,
    child: Option<Child>,
    lines: Arc<Mutex<Vec<Value>>>,
    stdout: Option<JoinHandle<()>>,
    stderr: Option<JoinHandle<String>>,
}

impl Script {
    /// Starts `tests/python/<script>` with `args` (Cyclone DDS on loopback only, as the
    /// other scripts).
    pub fn spawn(script: &str, args: &[&str]) -> Self {
        let mut child = crate::python::spawn_script(script, args);
        let lines = Arc::new(Mutex::new(Vec::new()));
        let collected = Arc::clone(&lines);
        let stdout = child.stdout.take().expect("piped stdout");
        let name = script.to_string();
        let stdout = std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                let value = serde_json::from_str(&line).unwrap_or_else(|e| {
                    panic!("{name} printed a line that is not JSON ({e}): {line}")
                });
                collected.lock().unwrap().push(value);
            }
        });
        let mut stderr_pipe = child.stderr.take().expect("piped stderr");
        let stderr = std::thread::spawn(move || {
            let mut text = String::new();
            let _ = stderr_pipe.read_to_string(&mut text);
            text
        });
        Self {
            name: script.to_string(),
            child: Some(child),
            lines,
            stdout: Some(stdout),
            stderr: Some(stderr),
        }
    }

    /// Waits (at most `limit`) for the script's `{"ready": true}` line.
    pub fn wait_ready(&self, limit: Duration) -> bool {
        wait_until(limit, || {
            self.lines
                .lock()
                .unwrap()
                .iter()
                .any(|line| line["ready"] == true)
        })
    }

    /// The lines printed so far.
    pub fn lines(&self) -> Vec<Value> {
        self.lines.lock().unwrap().clone()
    }

    /// Waits (at most `limit`) for the script to end and asserts it succeeded: `samples`
    /// holds its lines but its `ready` line and its last line, `done` that last line
    /// (which must say `"done": true`). Kills it and panics if it does not end in time.
    pub fn finish(mut self, limit: Duration) -> Published {
        let mut child = self.child.take().expect("running");
        let deadline = Instant::now() + limit;
        let status = loop {
            if let Some(status) = child.try_wait().expect("script status") {
                break status;
            }
            if Instant::now() > deadline {
                let _ = child.kill();
                let _ = child.wait();
                panic!("{} did not finish within {limit:?}", self.name);
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        self.stdout.take().unwrap().join().expect("stdout reader");
        let stderr = self.stderr.take().unwrap().join().expect("stderr reader");
        assert!(
            status.success(),
            "{} failed ({status}): {stderr}",
            self.name
        );
        let mut samples = std::mem::take(&mut *self.lines.lock().unwrap());
        let done = samples
            .pop()
            .unwrap_or_else(|| panic!("{} printed nothing; {stderr}", self.name));
        assert_eq!(
            done["done"], true,
            "{}: unexpected last line {done}; {stderr}",
            self.name
        );
        samples.retain(|line| line["ready"] != true);
        Published { samples, done }
    }
}

impl Drop for Script {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// Starts `tests/python/clock_subscribe.py` (a Cyclone DDS reader of ROS 2's `/clock`)
/// with `args`.
pub fn clock_subscribe(args: &[&str]) -> Script {
    Script::spawn("clock_subscribe.py", args)
}

/// Starts `tests/python/shm_slice_subscribe.py` (iceoryx2's Python bindings: subscribers
/// of byte-slice services, as `shm_camera.py` publishes) with `args`.
pub fn shm_slice_subscribe(args: &[&str]) -> Script {
    Script::spawn("shm_slice_subscribe.py", args)
}
