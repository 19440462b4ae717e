//! Helpers of the tests that run Debian's `age` and `age-keygen`.

#![allow(dead_code)]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// Runs `program` with `args` and `stdin`, failing clearly when it is not installed.
pub fn run(program: &str, args: &[&str], stdin: &[u8]) -> Output {
    let child = Command::new(program)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn();
    let mut child = match child {
        Ok(child) => child,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => panic!(
            "`{program}` is not installed: the seal tests use Debian's age; run scripts/setup \
             (or apt-get install age)"
        ),
        Err(e) => panic!("running {program}: {e}"),
    };
    let mut input = child.stdin.take().unwrap();
    let stdin = stdin.to_vec();
    let feeder = std::thread::spawn(move || input.write_all(&stdin));
    let output = child.wait_with_output().unwrap();
    feeder.join().unwrap().unwrap();
    output
}

/// A fresh identity file made by `age-keygen`, and its public key.
pub fn keygen(dir: &Path, name: &str) -> (PathBuf, String) {
    let path = dir.join(name);
    let output = run("age-keygen", &["-o", path.to_str().unwrap()], b"");
    assert!(output.status.success(), "age-keygen: {output:?}");
    let text = std::fs::read_to_string(&path).unwrap();
    let public = text
        .lines()
        .find_map(|line| line.strip_prefix("# public key: "))
        .unwrap_or_else(|| panic!("no public key in {text}"))
        .to_owned();
    (path, public)
}
