//! Every `rec` command whose reader has gone away before it writes (`rec list | head -1`,
//! `rec completions zsh | head`) ends as `ls` does: quietly, with nothing on standard
//! error, and having done its work.

use std::path::Path;
use std::process::{Command, Output, Stdio};

use recd_testkit::{binary, wait_bounded, Domain, Recd};

/// Runs `rec args…` against the recd of `socket` with its standard output a pipe whose read end is
/// already closed.
fn rec_into_closed_pipe(socket: &Path, args: &[&str]) -> Output {
    let (reader, writer) = std::io::pipe().expect("a pipe");
    drop(reader);
    let child = Command::new(binary("rec"))
        .env("RECD_SOCKET", socket)
        .args(args)
        .stdout(Stdio::from(writer))
        .stderr(Stdio::piped())
        .spawn()
        .expect("rec runs");
    wait_bounded(child, std::time::Duration::from_secs(60))
}

fn assert_quiet(socket: &Path, args: &[&str]) {
    let output = rec_into_closed_pipe(socket, args);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success() && stderr.is_empty(),
        "rec {args:?} into a closed pipe: {:?}, stderr:\n{stderr}",
        output.status
    );
}

#[test]
fn every_command_ends_quietly_when_its_reader_has_gone() {
    let root = tempfile::tempdir().unwrap();
    let domain = Domain::new();
    let recd = Recd::start(root.path(), &domain);
    let socket = recd.socket.clone();

    assert_quiet(&socket, &["start", "--name", "piped", "--topic", "*"]);
    for args in [
        &["status"][..],
        &["status", "piped"],
        &["status", "--json"],
        &["list"],
        &["list", "--json"],
        &["--help"],
        &["start", "--help"],
        &["completions", "zsh"],
        &["completions", "bash"],
        &["topics", "--discovery", "0s", "--window", "0.2s"],
        &["topics", "--discovery", "0s", "--window", "0.2s", "--json"],
    ] {
        assert_quiet(&socket, args);
    }
    assert_quiet(&socket, &["stop", "piped"]);
    // The stop happened although nobody read its report.
    let listed = recd.listed("piped");
    assert_eq!(listed["state"], "stopped", "{listed}");
    let file = listed["files"][0]["path"]
        .as_str()
        .expect("the session has a file");

    assert_quiet(&socket, &["info", file]);
    assert_quiet(&socket, &["info", file, "--json"]);
    let out = root.path().join("reindexed.mcap");
    assert_quiet(&socket, &["reindex", file, "-o", out.to_str().unwrap()]);
    assert!(out.exists(), "the reindex wrote its output");
    assert_quiet(
        &socket,
        &["reindex", file, "-o", out.to_str().unwrap(), "--json"],
    );
    assert_quiet(&socket, &["demo", "--seconds", "0.2"]);
}
