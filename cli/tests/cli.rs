//! The real `rec` binary on real files: summaries, reindexing with its exit statuses, and
//! clear one-line errors on bad input.

mod common;

use std::os::unix::fs::PermissionsExt;
use std::process::Stdio;
use std::time::{Duration, Instant};

use common::{outcome, rec, rec_unprivileged, run, wait_until_unlocked, write_recording};

#[test]
fn info_prints_the_summary_as_text_and_json() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("rec.mcap");
    write_recording(&path, 10, 1000);
    let path_arg = path.to_str().unwrap();

    let (code, stdout, _) = outcome(&run(&["info", path_arg]));
    assert_eq!(code, 0);
    assert!(stdout.contains("messages:    10"), "{stdout}");
    assert!(stdout.contains("/camera"), "{stdout}");
    assert!(
        stdout.contains("sensor_msgs/msg/Image [ros2msg]"),
        "{stdout}"
    );
    assert!(!stdout.contains("not closed cleanly"));
    // A file as recd streams it: which readers find its messages, and the way out.
    assert!(stdout.contains("is not indexed"), "{stdout}");
    assert!(
        stdout.contains("Foxglove and Lichtblick open unindexed files only up to 1 GiB"),
        "{stdout}"
    );
    assert!(
        stdout.contains(&format!("`rec reindex {path_arg}`")),
        "{stdout}"
    );

    let (code, stdout, _) = outcome(&run(&["info", "--json", path_arg]));
    assert_eq!(code, 0);
    let json: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(json["message_count"], 10);
    assert_eq!(json["closed_cleanly"], true);
    assert_eq!(json["indexed"], false);
    assert_eq!(json["start_time"], 1_000_000_000u64);
    assert_eq!(json["end_time"], 10_000_000_000u64);
    let channels = json["channels"].as_array().unwrap();
    assert_eq!(channels.len(), 2);
    assert_eq!(channels[0]["topic"], "/camera");
    assert_eq!(channels[0]["message_count"], 5);
}

#[test]
fn info_over_a_directory_or_several_files_sums_them_and_lists_each() {
    let dir = tempfile::tempdir().unwrap();
    let first = dir.path().join("s_0000.mcap");
    let second = dir.path().join("s_0001.mcap");
    write_recording(&first, 10, 1000);
    write_recording(&second, 6, 1000);

    let (code, stdout, stderr) = outcome(&run(&["info", dir.path().to_str().unwrap()]));
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.starts_with("files:       2 ("), "{stdout}");
    assert!(stdout.contains("messages:    16"), "{stdout}");
    assert!(stdout.contains("s_0000.mcap"), "{stdout}");
    assert!(stdout.contains("s_0001.mcap"), "{stdout}");
    assert!(
        stdout.contains("sensor_msgs/msg/Image [ros2msg]"),
        "{stdout}"
    );

    let (code, stdout, _) = outcome(&run(&[
        "info",
        "--json",
        first.to_str().unwrap(),
        second.to_str().unwrap(),
    ]));
    assert_eq!(code, 0);
    let json: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(json["message_count"], 16);
    assert_eq!(json["files"].as_array().unwrap().len(), 2);
    let camera = json["topics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["topic"] == "/camera")
        .unwrap()
        .clone();
    assert_eq!(camera["message_count"], 8);

    let (code, _, stderr) = outcome(&run(&["info", dir.path().join("nope").to_str().unwrap()]));
    assert_eq!(code, 1);
    assert!(stderr.contains("No such file or directory"), "{stderr}");
}

#[test]
fn reindex_into_a_directory_writes_a_file_of_the_same_name_there() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("drive_0000.mcap");
    write_recording(&input, 10, 1000);
    let out = dir.path().join("out");
    std::fs::create_dir(&out).unwrap();
    let target = format!("{}/", out.display());
    let (code, _, stderr) = outcome(&run(&["reindex", input.to_str().unwrap(), "-o", &target]));
    assert_eq!(code, 0, "{stderr}");
    let written = out.join("drive_0000.mcap");
    let info = recd_storage::summarize(&written).unwrap();
    assert_eq!((info.message_count, info.indexed), (10, true));
    let (_, stdout, _) = outcome(&run(&["info", written.to_str().unwrap()]));
    assert!(!stdout.contains("not indexed"), "{stdout}");

    // lz4 at a level of its own; a level the compressor has not is refused.
    let lz4 = dir.path().join("lz4.mcap");
    let args = [
        "reindex",
        input.to_str().unwrap(),
        "-o",
        lz4.to_str().unwrap(),
    ];
    let (code, _, stderr) = outcome(&run(&[
        &args[..],
        &["--compression", "lz4", "--level", "9"],
    ]
    .concat()));
    assert_eq!(code, 0, "{stderr}");
    let info = recd_storage::summarize(&lz4).unwrap();
    assert_eq!((info.message_count, info.indexed), (10, true));
    assert_eq!(info.compression[0].compression, "lz4");
    let (code, _, stderr) = outcome(&run(&[
        &args[..],
        &["--compression", "lz4", "--level", "13"],
    ]
    .concat()));
    assert_eq!(code, 1);
    assert!(
        stderr.contains("--level 13 is beyond the compressor's 12"),
        "{stderr}"
    );
    let (code, _, stderr) = outcome(&run(&[
        &args[..],
        &["--compression", "none", "--level", "3"],
    ]
    .concat()));
    assert_eq!(code, 1);
    assert!(
        stderr.contains("--level needs --compression zstd or lz4"),
        "{stderr}"
    );
}

#[test]
fn info_on_a_crashed_file_says_so_points_to_reindex_and_exits_3() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("rec.mcap");
    write_recording(&path, 10, 1000);
    let bytes = std::fs::read(&path).unwrap();
    std::fs::write(&path, &bytes[..bytes.len() / 2]).unwrap();

    let (code, stdout, _) = outcome(&run(&["info", path.to_str().unwrap()]));
    // Cut inside a record: damaged, exit 3 as rec reindex exits, so that scripts can tell.
    assert_eq!(code, 3, "{stdout}");
    assert!(stdout.contains("was not closed cleanly"), "{stdout}");
    assert!(
        stdout.contains("readable records end at offset"),
        "{stdout}"
    );
    assert!(stdout.contains("rec reindex"), "{stdout}");
    let (code, _, _) = outcome(&run(&["info", "--json", path.to_str().unwrap()]));
    assert_eq!(code, 3);
}

#[test]
fn reindex_exits_0_when_nothing_was_lost_and_3_when_the_input_was_damaged() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("rec.mcap");
    let payloads = write_recording(&path, 20, 5000);
    let out = dir.path().join("indexed.mcap");

    let (code, stdout, stderr) = outcome(&run(&[
        "reindex",
        path.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
        "--compression",
        "none",
        "--chunk-size",
        "16KiB",
    ]));
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(stdout.contains("20 messages"), "{stdout}");
    let info = recd_storage::summarize(&out).unwrap();
    assert!(info.chunk_count > 1);
    assert_eq!(info.message_count, 20);

    // Cut the last message in half: 19 recovered, the rest reported, exit 3.
    let bytes = std::fs::read(&path).unwrap();
    let data_end = bytes.len() - 300; // well inside the summary of this file
    let last_message = bytes[..data_end]
        .windows(payloads[19].len())
        .rposition(|w| w == payloads[19])
        .unwrap();
    let cut = path.with_file_name("cut.mcap");
    std::fs::write(&cut, &bytes[..last_message + 10]).unwrap();
    let (code, stdout, _) = outcome(&run(&["reindex", cut.to_str().unwrap()]));
    assert_eq!(code, 3, "{stdout}");
    assert!(stdout.contains("19 messages"), "{stdout}");
    assert!(stdout.contains("damaged input"), "{stdout}");
    let info = recd_storage::summarize(&cut).unwrap();
    assert!(
        info.closed_cleanly,
        "the file was replaced by its indexed form"
    );
    assert_eq!(info.message_count, 19);
    assert_eq!(info.compression[0].compression, "zstd");
}

#[test]
fn bad_inputs_get_one_line_naming_the_problem_and_exit_1() {
    let dir = tempfile::tempdir().unwrap();
    let text = dir.path().join("notes.txt");
    std::fs::write(&text, "not an mcap file at all").unwrap();
    let empty = dir.path().join("empty.mcap");
    std::fs::write(&empty, "").unwrap();
    let missing = dir.path().join("missing.mcap");
    let cases = [
        (&text, "not an MCAP file"),
        (&empty, "is empty"),
        (&missing, "No such file"),
    ];
    for (path, problem) in cases {
        for command in ["info", "reindex"] {
            let (code, stdout, stderr) = outcome(&run(&[command, path.to_str().unwrap()]));
            assert_eq!(code, 1, "{command} {path:?}");
            assert_eq!(stdout, "");
            assert_eq!(stderr.lines().count(), 1, "{stderr}");
            assert!(stderr.contains(problem), "{command}: {stderr}");
            assert!(
                stderr.contains(path.file_name().unwrap().to_str().unwrap()),
                "{stderr}"
            );
        }
    }
    assert_eq!(std::fs::read(&text).unwrap(), b"not an mcap file at all");
}

#[test]
fn unreadable_input_and_unwritable_output_directory_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let secret = dir.path().join("secret.mcap");
    write_recording(&secret, 4, 100);
    std::fs::set_permissions(&secret, std::fs::Permissions::from_mode(0o000)).unwrap();
    let readable = dir.path().join("readable.mcap");
    write_recording(&readable, 4, 100);
    std::fs::set_permissions(&readable, std::fs::Permissions::from_mode(0o644)).unwrap();
    let locked = dir.path().join("locked");
    std::fs::create_dir(&locked).unwrap();
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o555)).unwrap();
    let before = std::fs::read(&readable).unwrap();

    let output = rec_unprivileged()
        .args(["info", secret.to_str().unwrap()])
        .output()
        .unwrap();
    let (code, _, stderr) = outcome(&output);
    assert_eq!(code, 1, "{stderr}");
    assert!(
        stderr.contains("Permission denied") && stderr.contains("secret.mcap"),
        "{stderr}"
    );

    let target = locked.join("out.mcap");
    let output = rec_unprivileged()
        .args([
            "reindex",
            readable.to_str().unwrap(),
            "-o",
            target.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    let (code, _, stderr) = outcome(&output);
    assert_eq!(code, 1, "{stderr}");
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.contains("Permission denied") && stderr.contains("locked"),
        "{stderr}"
    );
    assert_eq!(std::fs::read(&readable).unwrap(), before, "input untouched");
    assert_eq!(
        std::fs::read_dir(&locked).unwrap().count(),
        0,
        "nothing left behind"
    );
}

#[test]
fn ctrl_c_during_reindex_leaves_the_input_untouched_and_no_stray_files() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("big.mcap");
    // ~400 MiB of camera-like frames: zstd takes seconds on it.
    {
        let mut writer =
            recd_storage::StreamWriter::create(&path, recd_storage::WriterOptions::default())
                .unwrap();
        let channel = writer
            .add_channel(None, "/camera", "raw", &Default::default())
            .unwrap();
        let frames: Vec<Vec<u8>> = (0..4)
            .map(|s| recd_workload::camera_frame(1920, 1080, s))
            .collect();
        for i in 0..64u32 {
            let header = recd_storage::MessageHeader {
                channel,
                sequence: i,
                log_time: u64::from(i),
                publish_time: u64::from(i),
            };
            writer
                .write_message(&header, &frames[i as usize % 4])
                .unwrap();
        }
        writer.close().unwrap();
    }
    wait_until_unlocked(&path);
    let before = std::fs::metadata(&path).unwrap();
    let mut child = rec()
        .args(["reindex", path.to_str().unwrap(), "--compression", "zstd"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(300));
    let status = std::process::Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let deadline = Instant::now() + Duration::from_secs(60);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        assert!(
            Instant::now() < deadline,
            "rec reindex did not stop after SIGINT"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    let output = child.wait_with_output().unwrap();
    assert_eq!(
        status.code(),
        Some(130),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let after = std::fs::metadata(&path).unwrap();
    assert_eq!(after.len(), before.len());
    assert_eq!(
        after.modified().unwrap(),
        before.modified().unwrap(),
        "input untouched"
    );
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(
        names,
        vec![std::ffi::OsString::from("big.mcap")],
        "no stray files"
    );
}

#[test]
fn help_explains_the_exit_statuses_and_options() {
    let (code, stdout, _) = outcome(&run(&["reindex", "--help"]));
    assert_eq!(code, 0);
    for needle in [
        "Exit status",
        "--compression",
        "--chunk-size",
        "-o, --output",
    ] {
        assert!(stdout.contains(needle), "missing {needle}: {stdout}");
    }
}

#[test]
fn socket_is_an_option_of_the_commands_that_talk_to_recd_only() {
    for command in [
        "start", "stop", "status", "pause", "resume", "mark", "list", "info", "reindex",
    ] {
        let (code, stdout, _) = outcome(&run(&[command, "--help"]));
        assert_eq!(code, 0);
        assert!(stdout.contains("--socket <PATH>"), "{command}: {stdout}");
    }
    for command in ["demo", "completions"] {
        let (code, stdout, _) = outcome(&run(&[command, "--help"]));
        assert_eq!(code, 0);
        assert!(!stdout.contains("--socket"), "{command}: {stdout}");
    }
    let (code, _, stderr) = outcome(&run(&["demo", "--socket", "/tmp/x.sock"]));
    assert_eq!(code, 2);
    assert!(
        stderr.contains("unexpected argument '--socket'"),
        "{stderr}"
    );
}

#[test]
fn demo_records_reindexes_and_summarizes() {
    let dir = tempfile::tempdir().unwrap();
    let (code, stdout, stderr) = outcome(&run(&[
        "demo",
        "--seconds",
        "0.5",
        "--dir",
        dir.path().to_str().unwrap(),
    ]));
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("/camera/front/image_raw"), "{stdout}");
    let recorded = recd_storage::summarize(dir.path().join("demo_0000.mcap")).unwrap();
    let indexed = recd_storage::summarize(dir.path().join("demo_0000.indexed.mcap")).unwrap();
    // 0.5 s: 15 camera frames, 5 lidar scans, 500 IMU samples.
    assert_eq!(recorded.message_count, 520);
    assert_eq!(indexed.message_count, 520);
    assert!(indexed.chunk_count > 0 && indexed.compression[0].compression == "zstd");
}
