//! Python's `mcap` package, an implementation none of us wrote, reads every message of
//! a streamed file and of its `rec reindex` output byte-exact.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::{run, write_recording, write_recording_with};
use recd_storage::{IoMode, WriterOptions};

/// The Python interpreter with `mcap` installed: `$RECD_TEST_PYTHON`, else the workspace's
/// `.venv` that `scripts/test` prepares.
fn python() -> PathBuf {
    if let Some(python) = std::env::var_os("RECD_TEST_PYTHON") {
        return python.into();
    }
    let venv = Path::new(env!("CARGO_MANIFEST_DIR")).join("../.venv/bin/python");
    assert!(
        venv.exists(),
        "no Python with the `mcap` package: run scripts/test, which prepares .venv"
    );
    venv
}

fn read_with_python(path: &Path) -> serde_json::Value {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/python/read_mcap.py");
    let output = Command::new(python())
        .arg(script)
        .arg(path)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "python mcap failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).unwrap()
}

fn sha256_hex(bytes: &[u8]) -> String {
    let output = Command::new(python())
        .args([
            "-c",
            "import hashlib,sys; print(hashlib.sha256(sys.stdin.buffer.read()).hexdigest())",
        ])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .and_then(|mut child| {
            use std::io::Write;
            child.stdin.take().unwrap().write_all(bytes)?;
            child.wait_with_output()
        })
        .unwrap();
    String::from_utf8(output.stdout).unwrap().trim().to_string()
}

#[test]
fn python_mcap_reads_streamed_and_reindexed_files_byte_exact() {
    let dir = tempfile::tempdir().unwrap();
    let streamed = dir.path().join("rec.mcap");
    // Sizes on both sides of the 64 KiB zero-copy threshold.
    let mut payloads = write_recording(&streamed, 6, 100);
    let big = dir.path().join("big.mcap");
    payloads.extend(write_recording(&big, 4, 200_000));
    let digests: Vec<String> = payloads.iter().map(|p| sha256_hex(p)).collect();

    let indexed = dir.path().join("indexed.mcap");
    let (code, _, stderr) = common::outcome(&run(&[
        "reindex",
        streamed.to_str().unwrap(),
        "-o",
        indexed.to_str().unwrap(),
    ]));
    assert_eq!(code, 0, "{stderr}");
    let big_indexed = dir.path().join("big-indexed.mcap");
    let (code, _, stderr) = common::outcome(&run(&[
        "reindex",
        big.to_str().unwrap(),
        "-o",
        big_indexed.to_str().unwrap(),
        "--chunk-size",
        "256KiB",
    ]));
    assert_eq!(code, 0, "{stderr}");

    for (files, expected) in [
        ([&streamed, &indexed], &digests[..6]),
        ([&big, &big_indexed], &digests[6..]),
    ] {
        for (i, file) in files.iter().enumerate() {
            let read = read_with_python(file);
            assert_eq!(read["message_count"], expected.len() as u64);
            let messages = read["messages"].as_array().unwrap();
            assert_eq!(messages.len(), expected.len(), "{file:?}");
            for (n, (message, digest)) in messages.iter().zip(expected).enumerate() {
                assert_eq!(message["sequence"], n as u64);
                assert_eq!(
                    message["topic"],
                    if n % 2 == 0 { "/camera" } else { "/imu" }
                );
                assert_eq!(message["log_time"], 1_000_000_000 * (n as u64 + 1));
                assert_eq!(
                    message["sha256"].as_str().unwrap(),
                    digest,
                    "{file:?} message {n}"
                );
            }
            let chunked = read["chunk_count"].as_u64().unwrap() > 0;
            assert_eq!(chunked, i == 1, "only the reindexed file is chunked");
        }
    }
}

#[test]
fn python_mcap_skips_the_padding_records_of_direct_io_files() {
    let dir = tempfile::tempdir().unwrap();
    let direct = dir.path().join("direct.mcap");
    let options = WriterOptions {
        io_mode: IoMode::Direct,
        ..WriterOptions::default()
    };
    // Large payloads get a padding record each; the small ones are batched between them.
    let mut payloads = write_recording_with(&direct, 6, 300_000, options.clone());
    let small = dir.path().join("direct-small.mcap");
    payloads.extend(write_recording_with(&small, 5, 100, options));
    let digests: Vec<String> = payloads.iter().map(|p| sha256_hex(p)).collect();

    for (file, expected) in [(&direct, &digests[..6]), (&small, &digests[6..])] {
        let read = read_with_python(file);
        assert_eq!(read["message_count"], expected.len() as u64);
        let messages = read["messages"].as_array().unwrap();
        let got: Vec<&str> = messages
            .iter()
            .map(|m| m["sha256"].as_str().unwrap())
            .collect();
        assert_eq!(got, *expected, "{file:?}");
    }
}
