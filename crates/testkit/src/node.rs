//! The TypeScript side of the interop tests: `@mcap/core`, the library Foxglove and
//! Lichtblick open MCAP files with, as `scripts/test` installs it into `tests/node`.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

/// What `@mcap/core` made of one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct McapCoreRead {
    /// Messages its stream reader read, record by record.
    pub stream_messages: u64,
    /// A digest of those messages (topic, log time, payload) that ignores their order.
    pub stream_digest: String,
    /// Messages its indexed reader found through the summary; `None` when it refused
    /// the file.
    pub indexed_messages: Option<u64>,
    /// The digest of those.
    pub indexed_digest: Option<String>,
}

/// Reads `files` with `@mcap/core`'s stream and indexed readers (`tests/node/read_mcap.mjs`,
/// CRCs checked); panics when node or the packages are missing.
pub fn read_with_mcap_core(files: &[PathBuf]) -> Vec<McapCoreRead> {
    let output = run_script("read_mcap.mjs", files);
    let read: Value = serde_json::from_slice(&output.stdout).expect("read_mcap.mjs prints JSON");
    files
        .iter()
        .map(|file| {
            let entry = &read[file.to_str().expect("a UTF-8 path")];
            let stream = &entry["stream"];
            let indexed = &entry["indexed"];
            McapCoreRead {
                stream_messages: stream["messages"].as_u64().expect("stream count"),
                stream_digest: stream["digest"].as_str().expect("digest").to_string(),
                indexed_messages: indexed["messages"].as_u64(),
                indexed_digest: indexed["digest"].as_str().map(str::to_string),
            }
        })
        .collect()
}

/// `tests/node/validate_health.mjs` on `file`: `@mcap/core` reads its `recd/health`
/// channel and ajv validates each message against the channel's JSON Schema; its JSON
/// line. Panics when the script fails (a message that does not validate).
pub fn validate_health_with_mcap_core(file: &Path) -> Value {
    let output = run_script("validate_health.mjs", &[file]);
    serde_json::from_slice(&output.stdout).expect("validate_health.mjs prints JSON")
}

/// Every ROS 2 message of `file` as Foxglove decodes it (`tests/node/read_ros2.mjs`:
/// `@mcap/core`, `@foxglove/rosmsg` for the schema, `@foxglove/rosmsg2-serialization` for
/// the CDR): one `{"topic", "type", "data"}` per message, in file order. Panics when a
/// schema does not parse or a message does not decode.
pub fn read_ros2_with_foxglove(file: &Path) -> Vec<Value> {
    let output = run_script("read_ros2.mjs", &[file]);
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(|line| serde_json::from_str(line).expect("read_ros2.mjs prints JSON lines"))
        .collect()
}

/// Runs `tests/node/<script>` on `files`; panics when node, the packages (`scripts/test`
/// installs them into tests/node) or the script fail.
fn run_script(script: &str, files: &[impl AsRef<Path>]) -> std::process::Output {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/node")
        .join(script);
    let output = Command::new("node")
        .arg(&path)
        .args(files.iter().map(AsRef::as_ref))
        .output()
        .expect("node runs (scripts/setup installs it)");
    assert!(
        output.status.success(),
        "{script} failed (scripts/test installs its packages into tests/node): {}",
        String::from_utf8_lossy(&output.stderr)
    );
    output
}
