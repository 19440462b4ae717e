//! Recording onto a disk of fixed size that may lose power: the free-space guard, a full
//! disk without it, retention, a power cut, files vanishing and a read-only directory.
//! Each test mounts the file systems it needs (root, as in CI).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Child;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use recd_testkit::{
    ext4_image, finish_load, stopped_files, wait_until, Domain, Mount, Recd, RecdLoad,
};
use recd_workload::verify::check_files;
use serde_json::Value;

/// Per topic: (received, written, dropped, lost, overflows).
fn counts(topics: &Value) -> BTreeMap<String, [u64; 5]> {
    topics
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            let count = |key: &str| t[key].as_u64().unwrap();
            let name = t["name"].as_str().unwrap().to_string();
            let counts = ["received", "written", "dropped", "lost", "overflows"].map(count);
            (name, counts)
        })
        .collect()
}

/// Starts recd-load: one camera `prefix`camera/0 of `frame_size`-byte frames at `fps`,
/// `count` frames.
fn camera_load(domain: &Domain, prefix: &str, frame_size: u32, fps: u32, count: u64) -> Child {
    domain.load(
        &RecdLoad::new(prefix)
            .cameras(1)
            .frame_size(frame_size as usize)
            .fps(fps)
            .count(count)
            .duration(Duration::from_secs(60))
            .wait_subscribers(1),
    )
}

/// Publishes `count` frames of `frame_kb` kB at 100 fps; returns how many were sent.
fn cameras(domain: &Domain, prefix: &str, frame_kb: u32, count: u64) -> u64 {
    let sent = finish_load(camera_load(domain, prefix, frame_kb * 1000, 100, count));
    sent.topics.iter().map(|t| t.sent).sum()
}

/// The stop report, the catalog and the files agree; every sample sent is written or
/// counted; returns the counts.
fn check_agreement(recd: &Recd, stopped: &Value, sent: u64) -> BTreeMap<String, [u64; 5]> {
    let files = stopped_files(stopped);
    let report = counts(&stopped["topics"]);
    let checks = check_files(&files).unwrap();
    for (name, [received, written, dropped, lost, overflows]) in &report {
        let check = &checks[name];
        assert!(
            check.bad.is_empty() && check.in_order(),
            "{name}: {:?} {:?}",
            check.bad,
            check.sequences
        );
        assert_eq!(
            check.sequences.len() as u64,
            *written,
            "{name}: the file agrees"
        );
        assert_eq!(*received, written + dropped, "{name}");
        if *overflows == 0 {
            assert_eq!(
                written + dropped + lost,
                sent,
                "{name}: every sample accounted"
            );
        }
    }
    let catalog = recd.listed(stopped["name"].as_str().unwrap());
    assert_eq!(counts(&catalog["topics"]), report, "catalog topics");
    for (in_report, in_catalog) in stopped["files"]
        .as_array()
        .unwrap()
        .iter()
        .zip(catalog["files"].as_array().unwrap())
    {
        assert_eq!(in_report, in_catalog, "catalog files");
        let path = Path::new(in_report["path"].as_str().unwrap());
        assert_eq!(
            in_report["bytes"].as_u64().unwrap(),
            std::fs::metadata(path).unwrap().len(),
            "{}: the real size",
            path.display()
        );
    }
    report
}

#[test]
fn the_guard_pauses_before_the_disk_is_full_and_resumes_in_a_new_file_when_room_is_back() {
    let domain = Domain::new();
    let root = tempfile::tempdir().unwrap();
    // The session's directory is a 32 MiB file system of its own, 12 MiB of it ballast.
    let small = Mount::at(
        &root.path().join("data/small"),
        "tmpfs",
        "tmpfs",
        "size=32m",
    );
    let ballast = small.join("ballast");
    std::fs::write(&ballast, vec![1u8; 12 << 20]).unwrap();
    let recd = Recd::start_with(root.path(), &domain, "min_free_space = \"8MiB\"", &[]);
    recd.rec_json(&["start", "--name", "small", "--topic", "small/*"]);
    recd.rec_json(&["start", "--name", "big", "--topic", "big/*"]);
    let big_load = camera_load(&domain, "big/", 100_000, 20, 100);

    // 22 MB at 4 MB/s into 12 MiB of room: the guard pauses; the other session goes on.
    let count = 110;
    let load = camera_load(&domain, "small/", 200_000, 20, count);
    assert!(wait_until(Duration::from_secs(10), || {
        recd.rec_json(&["status", "small"])[0]["disk_full"].is_object()
    }));
    let status = String::from_utf8_lossy(&recd.rec(&["status", "small"]).stdout).to_string();
    assert!(status.contains("paused: disk full (free"), "{status}");
    assert!(status.contains("minimum 8.0 MiB"), "{status}");
    let warned = |log: String| {
        log.lines()
            .any(|l| l.contains("WARN") && l.contains("paused: disk full"))
    };
    assert!(
        wait_until(Duration::from_secs(5), || warned(recd.log())),
        "{}",
        recd.log()
    );
    let paused_file = PathBuf::from(recd.listed("small")["files"][0]["path"].as_str().unwrap());
    assert!(paused_file.starts_with(small.path()));
    // The finished file is readable as it is: summary and footer written.
    let bytes = std::fs::read(&paused_file).unwrap();
    assert!(mcap::Summary::read(&bytes).unwrap().is_some());

    // The user frees space: recording continues in a new file by itself.
    std::fs::remove_file(&ballast).unwrap();
    assert!(wait_until(Duration::from_secs(10), || {
        let status = recd.rec_json(&["status", "small"]);
        status[0]["disk_full"].is_null()
            && status[0]["current_files"][0]
                .as_str()
                .is_some_and(|f| f.ends_with("_0001.mcap"))
    }));
    let sent = finish_load(load).topics[0].sent;
    assert_eq!(sent, count);
    let sent_big = finish_load(big_load).topics[0].sent;

    let stopped = recd.rec_json(&["stop", "small"]);
    let report = check_agreement(&recd, &stopped[0], sent);
    let [_, written, dropped, _, _] = report["small/camera/0"];
    assert!(dropped > 0, "the pause dropped (and counted) frames");
    assert!(written > 60, "{written}");
    let files = stopped_files(&stopped);
    assert_eq!(files.len(), 2, "{files:?}");
    for file in &files {
        let bytes = std::fs::read(file).unwrap();
        assert!(
            mcap::Summary::read(&bytes).unwrap().is_some(),
            "{}",
            file.display()
        );
    }
    assert!(stopped[0]["files"]
        .as_array()
        .unwrap()
        .iter()
        .all(|f| f["state"] == "complete"));

    let stopped_big = recd.rec_json(&["stop", "big"]);
    let big = check_agreement(&recd, &stopped_big[0], sent_big);
    assert_eq!(
        big["big/camera/0"][1], 100,
        "the session on the other disk lost nothing"
    );

    // The name again: a directory of its own, on the disk mounted for the name.
    let again = recd.rec_json(&["start", "--name", "small", "--topic", "small/*"]);
    assert_eq!(again["directory"], small.join("small_2").to_str().unwrap());
    recd.rec_json(&["stop", "small"]);
}

#[test]
fn without_the_guard_a_full_disk_fails_the_session_with_true_files_and_counts() {
    let domain = Domain::new();
    let root = tempfile::tempdir().unwrap();
    let _small = Mount::at(&root.path().join("data/full"), "tmpfs", "tmpfs", "size=16m");
    let recd = Recd::start_with(root.path(), &domain, "min_free_space = \"0\"", &[]);
    recd.rec_json(&["start", "--name", "full", "--topic", "full/*"]);
    recd.rec_json(&["start", "--name", "other", "--topic", "other/*"]);

    let sent = cameras(&domain, "full/", 250, 100);
    let sent_other = cameras(&domain, "other/", 100, 50);
    assert!(wait_until(Duration::from_secs(10), || {
        recd.rec_json(&["status", "full"])[0]["write_error"].is_string()
    }));
    let log = recd.log();
    assert!(
        log.lines()
            .any(|l| l.contains("ERROR") && l.contains("full_") && l.contains(".mcap")),
        "an ERROR names the file:\n{log}"
    );

    let output = recd.rec(&["stop", "full", "--json"]);
    assert_eq!(output.status.code(), Some(1), "a failed session");
    let stopped: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert!(stopped[0]["write_error"]
        .as_str()
        .unwrap()
        .contains("No space left"));
    let report = check_agreement(&recd, &stopped[0], sent);
    let [_, written, dropped, _, _] = report["full/camera/0"];
    assert!(
        written > 0 && dropped > 0,
        "{written} written, {dropped} dropped"
    );
    // The file ends on its last complete message, with its summary.
    let files = stopped_files(&stopped);
    assert_eq!(files.len(), 1);
    let bytes = std::fs::read(&files[0]).unwrap();
    let summary = mcap::Summary::read(&bytes).unwrap().expect("a summary");
    assert_eq!(summary.stats.unwrap().message_count, written);
    let session = recd.listed("full");
    assert_eq!(session["state"], "failed");
    assert!(session["reason"]
        .as_str()
        .unwrap()
        .contains("No space left"));

    let stopped = recd.rec_json(&["stop", "other"]);
    let other = check_agreement(&recd, &stopped[0], sent_other);
    assert_eq!(
        other["other/camera/0"][1], sent_other,
        "the other disk lost nothing"
    );
}

/// Files of `session` on disk and in the catalog's list (those not deleted or missing).
fn kept_files(recd: &Recd, session: &str) -> (Vec<PathBuf>, Vec<PathBuf>) {
    let listed = recd.listed(session);
    let mut in_catalog: Vec<PathBuf> = listed["files"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["state"] != "deleted" && f["state"] != "missing")
        .map(|f| PathBuf::from(f["path"].as_str().unwrap()))
        .collect();
    let mut on_disk: Vec<PathBuf> = std::fs::read_dir(listed["directory"].as_str().unwrap())
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    in_catalog.sort();
    on_disk.sort();
    (in_catalog, on_disk)
}

fn total_size(files: &[PathBuf]) -> u64 {
    files
        .iter()
        .map(|f| std::fs::metadata(f).unwrap().len())
        .sum()
}

#[test]
fn retention_keeps_the_newest_files_within_the_bound_also_after_a_restart() {
    let domain = Domain::new();
    let root = tempfile::tempdir().unwrap();
    let bound = 6u64 << 20;
    let mut recd = Recd::start_with(root.path(), &domain, "max_total_size = \"6MiB\"", &[]);
    recd.rec_json(&[
        "start",
        "--name",
        "ring",
        "--topic",
        "ring/*",
        "--max-file-size",
        "1MiB",
    ]);
    // 20 MB in 1 MiB files, at 2 MB/s so that retention (each second) keeps up.
    let sent = cameras(&domain, "ring/", 20, 1000);
    let stopped = recd.rec_json(&["stop", "ring"]);
    let largest = stopped[0]["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["bytes"].as_u64().unwrap())
        .max()
        .unwrap();
    assert!(wait_until(Duration::from_secs(5), || {
        let (in_catalog, on_disk) = kept_files(&recd, "ring");
        in_catalog == on_disk && total_size(&on_disk) <= bound
    }));
    let (_, on_disk) = kept_files(&recd, "ring");
    assert!(
        total_size(&on_disk) + largest > bound,
        "within one file of the bound"
    );
    let deleted = recd.listed("ring")["files"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["state"] == "deleted")
        .count();
    assert!(deleted >= 10, "{deleted} files deleted:\n{}", recd.log());
    assert!(recd.log().contains("deleted the oldest recording"));
    // The newest messages are kept, without gaps, up to the last one sent.
    let checks = check_files(&on_disk).unwrap();
    let sequences = &checks["ring/camera/0"].sequences;
    let first = sequences[0];
    assert_eq!(*sequences, (first..sent).collect::<Vec<_>>());

    // A lower bound holds from the next start on.
    recd.signal_and_wait(libc::SIGTERM, Duration::from_secs(30));
    drop(recd);
    let recd = Recd::start_with(root.path(), &domain, "max_total_size = \"3MiB\"", &[]);
    let (in_catalog, on_disk) = kept_files(&recd, "ring");
    assert_eq!(in_catalog, on_disk);
    assert!(total_size(&on_disk) <= 3 << 20);
    assert!(!on_disk.is_empty());
}

#[test]
fn a_power_cut_loses_at_most_the_stated_second_and_the_catalog_knows_the_session() {
    let domain = Domain::new();
    let work = tempfile::tempdir().unwrap();
    let image = work.path().join("disk.img");
    ext4_image(&image, 256);
    let disk = Mount::at(&work.path().join("disk"), &image, "ext4", "loop");
    let config = "min_free_space = \"16MiB\"";
    let mut recd = Recd::start_with(disk.path(), &domain, config, &[]);
    recd.rec_json(&["start", "--name", "drive", "--topic", "drive/*"]);
    let load = domain.load_in_own_group(
        &RecdLoad::new("drive/")
            .cameras(1)
            .frame_size(100_000)
            .fps(50)
            .small_topics(2)
            .small_rate(200)
            .duration(Duration::from_secs(20))
            .wait_subscribers(1),
    );
    assert!(recd.wait_written("drive", 600), "{}", recd.log());
    std::thread::sleep(Duration::from_secs(2));
    // The power cut: recd dies, and the disk keeps only what reached it, not the page
    // cache of the mounted file system.
    let cut_ns = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64;
    recd.signal_and_wait(libc::SIGKILL, Duration::from_secs(5));
    let copy = work.path().join("after-the-cut.img");
    std::fs::copy(&image, &copy).unwrap();
    recd_testkit::kill_group(load);
    drop(recd);
    drop(disk);

    // "Reboot": the disk as it was at the cut, mounted where it was.
    let rebooted = Mount::at(&work.path().join("disk"), &copy, "ext4", "loop");
    let recd = Recd::start_with(rebooted.path(), &domain, config, &[]);
    let session = recd.listed("drive");
    let files: Vec<&str> = session["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["path"].as_str().unwrap())
        .collect();
    assert!(!files.is_empty(), "{session}");
    assert!(
        session["files"][0]["bytes"].as_u64().unwrap() > 0,
        "its real size: {session}\n{}",
        recd.log()
    );
    let list = String::from_utf8_lossy(&recd.rec(&["list"]).stdout).to_string();
    assert!(list.contains("messages: after reindex"), "{list}");

    // A cut may leave a partial record at a file's end: reindex keeps every complete one
    // and says so with exit status 3.
    let reindexed = recd.rec(&["reindex", "drive"]);
    assert!(
        matches!(reindexed.status.code(), Some(0 | 3)),
        "{:?}\n{}{}",
        reindexed.status,
        String::from_utf8_lossy(&reindexed.stdout),
        String::from_utf8_lossy(&reindexed.stderr)
    );
    let paths: Vec<PathBuf> = files.iter().map(PathBuf::from).collect();
    let checks = check_files(&paths).unwrap();
    let bound_ns = 1_000_000_000;
    for (topic, check) in &checks {
        let count = check.sequences.len() as u64;
        assert_eq!(
            check.sequences,
            (0..count).collect::<Vec<_>>(),
            "{topic}: no gaps"
        );
        let last_log_time = last_log_time(&paths, topic);
        assert!(
            last_log_time + bound_ns >= cut_ns,
            "{topic}: the last recovered message is {} ms before the cut",
            (cut_ns - last_log_time) / 1_000_000
        );
    }
}

/// The latest log_time of `topic` in `paths`.
fn last_log_time(paths: &[PathBuf], topic: &str) -> u64 {
    paths
        .iter()
        .flat_map(|path| {
            let bytes = std::fs::read(path).unwrap();
            mcap::MessageStream::new(&bytes)
                .unwrap()
                .map(|m| m.unwrap())
                .filter(|m| m.channel.topic == topic)
                .map(|m| m.log_time)
                .collect::<Vec<_>>()
        })
        .max()
        .unwrap()
}

#[test]
fn a_read_only_directory_or_files_deleted_by_hand_get_clear_errors_and_recd_keeps_serving() {
    let domain = Domain::new();
    let root = tempfile::tempdir().unwrap();
    let _read_only = Mount::at(&root.path().join("data/ro"), "tmpfs", "tmpfs", "ro,size=1m");
    let recd = Recd::start_with(root.path(), &domain, "min_free_space = \"0\"", &[]);
    let refused = recd.rec(&["start", "--name", "ro"]);
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert_eq!(refused.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("Read-only file system"), "{stderr}");
    let session = recd.listed("ro");
    assert_eq!(session["state"], "failed");
    assert!(session["files"].as_array().unwrap().is_empty(), "{session}");

    recd.rec_json(&[
        "start",
        "--name",
        "gone",
        "--topic",
        "gone/*",
        "--max-file-size",
        "1MiB",
    ]);
    cameras(&domain, "gone/", 100, 30);
    let first = PathBuf::from(recd.listed("gone")["files"][0]["path"].as_str().unwrap());
    std::fs::remove_file(&first).unwrap();
    assert!(wait_until(Duration::from_secs(5), || {
        recd.listed("gone")["files"][0]["state"] == "missing"
    }));
    assert!(
        recd.log().contains("deleted outside recd"),
        "{}",
        recd.log()
    );
    let stopped = recd.rec_json(&["stop", "gone"]);
    assert!(stopped_files(&stopped).len() > 1);
    assert_eq!(recd.listed("gone")["files"][0]["state"], "missing");
}
