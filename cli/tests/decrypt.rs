//! The real `rec decrypt` and `rec info` on sealed recordings (age v1 files made by
//! recd-seal's writer from real MCAP files), with identity files made by `age-keygen`.

mod common;

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

use common::{outcome, run, wait_until_unlocked, write_recording};
use recd_seal::{Recipients, SealedWriter, CHUNK_SIZE};
use recd_storage::{ChannelId, MessageHeader, StreamWriter, WriterOptions};

/// A fresh identity file made by `age-keygen`, and its public key.
fn keygen(dir: &Path, name: &str) -> (PathBuf, String) {
    let path = dir.join(name);
    let output = Command::new("age-keygen")
        .args(["-o", path.to_str().unwrap()])
        .output()
        .expect("age-keygen is installed (apt-get install age)");
    assert!(output.status.success(), "age-keygen: {output:?}");
    let text = std::fs::read_to_string(&path).unwrap();
    let public = text
        .lines()
        .find_map(|line| line.strip_prefix("# public key: "))
        .unwrap()
        .to_owned();
    (path, public)
}

/// A key file made by `age-keygen` in a new directory, its public key, and a writer of
/// `plain.mcap` there.
fn key_and_writer() -> (tempfile::TempDir, PathBuf, String, PathBuf, StreamWriter) {
    let dir = tempfile::tempdir().unwrap();
    let (key, public) = keygen(dir.path(), "a.key");
    let plain = dir.path().join("plain.mcap");
    let writer = StreamWriter::create(&plain, WriterOptions::default()).unwrap();
    (dir, key, public, plain, writer)
}

/// Writes `count` messages of `payload` on `channel`, a millisecond apart.
fn write_messages(writer: &mut StreamWriter, channel: ChannelId, count: u32, payload: &[u8]) {
    for i in 0..count {
        let header = MessageHeader {
            channel,
            sequence: i,
            log_time: u64::from(i + 1) * 1_000_000,
            publish_time: u64::from(i + 1) * 1_000_000,
        };
        writer.write_message(&header, payload).unwrap();
    }
}

/// `rec decrypt FILE -i KEY EXTRA…`: its exit code, stdout and stderr.
fn decrypt(file: &str, key: &str, extra: &[&str]) -> (i32, String, String) {
    let mut args = vec!["decrypt", file, "-i", key];
    args.extend_from_slice(extra);
    outcome(&run(&args))
}

/// Seals `plaintext` to `public` into `path`; returns the header's length.
fn seal_to(path: &Path, public: &str, plaintext: &[u8]) -> usize {
    let recipients = Recipients::parse(&[public.to_owned()]).unwrap();
    let mut writer = SealedWriter::new(Vec::new(), &recipients).unwrap();
    writer.write_all(plaintext).unwrap();
    let header_len = writer.header_len() as usize;
    std::fs::write(path, writer.finish().unwrap()).unwrap();
    header_len
}

struct Sealed {
    dir: tempfile::TempDir,
    key: PathBuf,
    /// The sealed recording.
    file: PathBuf,
    header_len: usize,
}

impl Sealed {
    fn arg(&self) -> &str {
        self.file.to_str().unwrap()
    }

    fn key_arg(&self) -> &str {
        self.key.to_str().unwrap()
    }

    /// The files in the directory, but the key.
    fn listing(&self) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(self.dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|name| name != "a.key" && name != "stranger.key")
            .collect();
        names.sort();
        names
    }
}

/// A recording of `count` messages of `size` bytes, sealed as `rec.mcap.age`.
fn sealed_recording(count: u32, size: usize) -> Sealed {
    let dir = tempfile::tempdir().unwrap();
    let (key, public) = keygen(dir.path(), "a.key");
    let plain = dir.path().join("plain.mcap");
    write_recording(&plain, count, size);
    let bytes = std::fs::read(&plain).unwrap();
    std::fs::remove_file(&plain).unwrap();
    let file = dir.path().join("rec.mcap.age");
    let header_len = seal_to(&file, &public, &bytes);
    Sealed {
        dir,
        key,
        file,
        header_len,
    }
}

#[test]
fn decrypt_writes_the_mcap_file_beside_and_info_reads_it_sealed() {
    let sealed = sealed_recording(20, 1000);
    let (code, stdout, stderr) = decrypt(sealed.arg(), sealed.key_arg(), &[]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(stdout.contains("every chunk authentic"), "{stdout}");
    assert!(stdout.contains("20 messages"), "{stdout}");
    let output = sealed.dir.path().join("rec.mcap");
    let info = recd_storage::summarize(&output).unwrap();
    assert_eq!(info.message_count, 20);
    assert!(info.closed_cleanly && info.indexed, "{info:?}");
    assert_eq!(sealed.listing(), ["rec.mcap", "rec.mcap.age"]);

    // Never over an existing file.
    let (code, _, stderr) = decrypt(sealed.arg(), sealed.key_arg(), &[]);
    assert_eq!(code, 1);
    assert!(stderr.contains("already exists"), "{stderr}");

    // rec info without a key: what the header and the stored length tell.
    let (code, stdout, stderr) = outcome(&run(&["info", sealed.arg()]));
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stdout.contains("sealed:      age v1, 1 recipient stanza (X25519)"),
        "{stdout}"
    );
    assert!(stdout.contains("chunks:      1 complete"), "{stdout}");
    assert!(stdout.contains("modified:"), "{stdout}");
    let (code, stdout, _) = outcome(&run(&["info", "--json", sealed.arg()]));
    assert_eq!(code, 0);
    let json: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(json["sealed"], "age v1");
    assert_eq!(json["stanza_types"][0], "X25519");

    // With the key, the summary, read through the decryption.
    let (code, stdout, stderr) = outcome(&run(&["info", sealed.arg(), "-i", sealed.key_arg()]));
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("sealed:      age v1"), "{stdout}");
    assert!(stdout.contains("messages:    20"), "{stdout}");
    assert!(stdout.contains("/camera"), "{stdout}");
}

#[test]
fn decrypted_files_read_with_python_mcap() {
    let Some(python) = std::env::var_os("RECD_TEST_PYTHON") else {
        eprintln!("RECD_TEST_PYTHON is not set: Python's mcap is not tried");
        return;
    };
    let sealed = sealed_recording(12, 3000);
    let out = sealed.dir.path().join("out.mcap");
    let (code, _, stderr) = decrypt(
        sealed.arg(),
        sealed.key_arg(),
        &["-o", out.to_str().unwrap(), "--json"],
    );
    assert_eq!(code, 0, "{stderr}");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/python/read_mcap.py");
    let output = Command::new(python).arg(script).arg(&out).output().unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let json: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(json["messages"].as_array().unwrap().len(), 12, "{json}");
}

#[test]
fn a_recording_recd_could_not_finish_is_finished_off() {
    let (dir, key, public, plain, mut writer) = key_and_writer();
    let channel = writer
        .add_channel(None, "/imu", "raw", &BTreeMap::new())
        .unwrap();
    write_messages(&mut writer, channel, 30, &[7; 500]);
    // A crash: everything handed to the kernel, no summary.
    writer.flush().unwrap();
    drop(writer);
    wait_until_unlocked(&plain);
    let bytes = std::fs::read(&plain).unwrap();
    assert!(!recd_storage::summarize(&plain).unwrap().closed_cleanly);
    let file = dir.path().join("crashed.mcap.age");
    seal_to(&file, &public, &bytes);

    let (code, stdout, stderr) = decrypt(file.to_str().unwrap(), key.to_str().unwrap(), &[]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(stdout.contains("finished off"), "{stdout}");
    let info = recd_storage::summarize(dir.path().join("crashed.mcap")).unwrap();
    assert_eq!(info.message_count, 30);
    assert!(info.closed_cleanly && info.indexed);
}

#[test]
fn recover_keeps_the_messages_before_a_cut_and_exits_3() {
    let sealed = sealed_recording(40, 10_000);
    let bytes = std::fs::read(&sealed.file).unwrap();
    // Cut inside chunk 4: chunks 0 to 3 are authentic.
    let cut = sealed.header_len + 16 + 4 * (CHUNK_SIZE + 16) + 1000;
    assert!(cut < bytes.len());
    std::fs::write(&sealed.file, &bytes[..cut]).unwrap();

    // Without --recover: refused naming the chunk, nothing written.
    let (code, _, stderr) = decrypt(sealed.arg(), sealed.key_arg(), &[]);
    assert_eq!(code, 1, "{stderr}");
    assert!(stderr.contains("ends inside chunk 4"), "{stderr}");
    assert_eq!(sealed.listing(), ["rec.mcap.age"]);

    // Without a key, a file cut inside a chunk looks like one ending in a shorter last
    // chunk; cut inside a tag, it is cut for sure, and rec info exits 3.
    let (code, stdout, _) = outcome(&run(&["info", sealed.arg()]));
    assert_eq!(code, 0, "{stdout}");
    assert!(
        stdout.contains("ends:        in a shorter chunk"),
        "{stdout}"
    );
    let in_a_tag = sealed.dir.path().join("in-a-tag.age");
    std::fs::write(&in_a_tag, &bytes[..cut - 1000 + 10]).unwrap();
    let (code, stdout, _) = outcome(&run(&["info", in_a_tag.to_str().unwrap()]));
    assert_eq!(code, 3, "{stdout}");
    assert!(stdout.contains("ends:        cut short"), "{stdout}");
    std::fs::remove_file(&in_a_tag).unwrap();

    let (code, stdout, stderr) = decrypt(sealed.arg(), sealed.key_arg(), &["--recover", "--json"]);
    assert_eq!(code, 3, "{stdout}{stderr}");
    let report: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(report["chunks"], 4, "{report}");
    assert_eq!(report["complete"], false);
    assert!(
        report["stopped"].as_str().unwrap().contains("chunk 4"),
        "{report}"
    );
    let messages = report["messages"].as_u64().unwrap();
    // 4 chunks of 64 KiB hold the messages of 10 kB written before the cut, all but the
    // one cut in two.
    assert!((20..=26).contains(&messages), "{report}");
    let info = recd_storage::summarize(sealed.dir.path().join("rec.mcap")).unwrap();
    assert_eq!(info.message_count, messages);
    assert!(info.closed_cleanly && info.indexed);
}

#[test]
fn a_wrong_identity_or_an_altered_chunk_is_refused_by_name_and_nothing_written() {
    let sealed = sealed_recording(40, 10_000);
    let (stranger, _) = keygen(sealed.dir.path(), "stranger.key");
    let (code, _, stderr) = decrypt(sealed.arg(), stranger.to_str().unwrap(), &[]);
    assert_eq!(code, 1);
    assert!(
        stderr.contains("none of the identities opens this file"),
        "{stderr}"
    );
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(!stderr.contains("AGE-SECRET-KEY"), "{stderr}");

    let mut bytes = std::fs::read(&sealed.file).unwrap();
    let chunk_2 = sealed.header_len + 16 + 2 * (CHUNK_SIZE + 16);
    bytes[chunk_2 + 77] ^= 0x10;
    std::fs::write(&sealed.file, &bytes).unwrap();
    let (code, _, stderr) = decrypt(sealed.arg(), sealed.key_arg(), &[]);
    assert_eq!(code, 1);
    assert!(
        stderr.contains(&format!("chunk 2 at byte {chunk_2} failed authentication")),
        "{stderr}"
    );
    assert_eq!(sealed.listing(), ["rec.mcap.age"]);

    // A file that is not sealed needs -o, and a key file must hold keys.
    let plain = sealed.dir.path().join("x.mcap");
    std::fs::write(&plain, b"x").unwrap();
    let (code, _, stderr) = decrypt(plain.to_str().unwrap(), sealed.key_arg(), &[]);
    assert_eq!(code, 1);
    assert!(stderr.contains("does not end in .age"), "{stderr}");
    let (code, _, stderr) = decrypt(sealed.arg(), plain.to_str().unwrap(), &[]);
    assert_eq!(code, 1);
    assert!(
        stderr.contains("is not an age X25519 private key"),
        "{stderr}"
    );
}

#[test]
fn decrypt_help_explains_itself_within_70_columns() {
    let (code, stdout, _) = outcome(&run(&["decrypt", "--help"]));
    assert_eq!(code, 0);
    assert!(stdout.contains("Exit status"), "{stdout}");
    assert!(stdout.contains("--recover"), "{stdout}");
    let (code, short, _) = outcome(&run(&["decrypt", "-h"]));
    assert_eq!(code, 0);
    for line in stdout.lines().chain(short.lines()) {
        assert!(
            line.chars().count() <= 70,
            "{} columns: {line}",
            line.chars().count()
        );
    }
}

#[test]
fn info_with_a_key_counts_service_calls_from_memory() {
    let (dir, key, public, plain, mut writer) = key_and_writer();
    let schema = writer
        .add_schema("example_interfaces/srv/AddTwoInts_Event", "ros2msg", b"")
        .unwrap();
    let events = writer
        .add_channel(
            Some(schema),
            "/add_two_ints/_service_event",
            "cdr",
            &BTreeMap::new(),
        )
        .unwrap();
    write_messages(&mut writer, events, 6, &[0; 8]);
    writer.close().unwrap();
    wait_until_unlocked(&plain);
    let file = dir.path().join("svc.mcap.age");
    seal_to(&file, &public, &std::fs::read(&plain).unwrap());
    std::fs::remove_file(&plain).unwrap();

    let (code, stdout, stderr) = outcome(&run(&[
        "info",
        "--json",
        file.to_str().unwrap(),
        "-i",
        key.to_str().unwrap(),
    ]));
    assert_eq!(code, 0, "{stderr}");
    let json: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(json["services"][0]["name"], "/add_two_ints", "{json}");
    assert_eq!(json["services"][0]["events"], 6, "{json}");
    // Nothing of the plaintext was left on disk.
    let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    assert_eq!(names.len(), 2, "{names:?}");
}
