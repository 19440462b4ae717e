//! Damaged files never take rec or recd down: the inputs coverage-guided fuzzing found
//! (tests/data/damaged/, each once a panic or an abort) through the real `rec` and through
//! recd's adoption at start-up, and files far larger than what they hold.

use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use recd_testkit::{binary, finish_load, stopped_files, wait_bounded, wait_until};
use recd_testkit::{Domain, Recd, RecdLoad};

/// The damaged files, sorted.
fn damaged_files() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/data/damaged");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .collect();
    files.sort();
    assert!(!files.is_empty(), "fixtures in {}", dir.display());
    files
}

/// Runs `rec args…` (bounded to 60 s); returns its exit code and stderr.
fn rec_outcome(args: &[&str]) -> (Option<i32>, String) {
    let child = Command::new(binary("rec"))
        .args(args)
        .env("RECD_SOCKET", "/nonexistent/recd.sock")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let output = wait_bounded(child, Duration::from_secs(60));
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// A failure is an exit status of 1 (or 3: damage, for reindex) with a line saying why;
/// never a panic (101) or an abort (a signal, no code).
fn assert_clean_outcome(file: &Path, args: &[&str], (code, stderr): (Option<i32>, String)) {
    let what = format!("rec {args:?} of {}", file.display());
    assert!(
        matches!(code, Some(0 | 1 | 3)),
        "{what}: exit {code:?}\n{stderr}"
    );
    assert!(!stderr.contains("panicked"), "{what}: {stderr}");
    if code == Some(1) {
        assert!(
            stderr.starts_with("rec: "),
            "{what}: a clear line: {stderr}"
        );
    }
}

#[test]
fn every_damaged_file_gets_an_answer_from_rec_info_reindex_and_play() {
    let domain = Domain::new();
    let out = tempfile::tempdir().unwrap();
    for file in damaged_files() {
        let path = file.to_str().unwrap();
        let reindexed = out.path().join("reindexed.mcap");
        let reindexed = reindexed.to_str().unwrap();
        for args in [
            vec!["info", path],
            vec!["info", path, "--json"],
            vec!["reindex", path, "-o", reindexed],
            vec![
                "play",
                path,
                "--iceoryx2-prefix",
                &domain.prefix,
                "--no-dds",
            ],
        ] {
            assert_clean_outcome(&file, &args, rec_outcome(&args));
        }
    }
}

/// Runs `rec args…` (killed after 60 s); returns its exit code and the most memory it
/// held (its peak resident set, KiB).
fn rec_peak_memory(args: &[&str]) -> (Option<i32>, u64) {
    // Reaped by wait4 below, which also gives its peak memory.
    #[allow(clippy::zombie_processes)]
    let child = Command::new(binary("rec"))
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let pid = child.id() as libc::pid_t;
    let finished = Arc::new(AtomicBool::new(false));
    let watchdog = {
        let finished = finished.clone();
        std::thread::spawn(move || {
            if !wait_until(Duration::from_secs(60), || finished.load(Ordering::Relaxed)) {
                // SAFETY: signals a child this test started and has not reaped yet.
                unsafe { libc::kill(pid, libc::SIGKILL) };
            }
        })
    };
    let mut status = 0;
    // SAFETY: an all-zero rusage is valid; wait4 fills it for this child only.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: waits for (and reaps) the child started above.
    let waited = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    finished.store(true, Ordering::Relaxed);
    watchdog.join().unwrap();
    assert_eq!(waited, pid);
    assert!(
        libc::WIFEXITED(status),
        "rec {args:?} was killed (status {status})"
    );
    (Some(libc::WEXITSTATUS(status)), usage.ru_maxrss as u64)
}

/// The memory rec may take for these files. Reading takes a buffer the size of the
/// largest record, which a claim may raise to 1 GiB at most when the file really has that
/// many bytes after it; a larger claim (as here) is damage, refused before allocating.
const REC_MEMORY_BOUND_KIB: u64 = 256 << 10;

#[test]
fn rec_answers_a_4_gib_file_of_zeros_random_bytes_or_one_huge_record_in_bounded_memory() {
    let dir = tempfile::tempdir().unwrap();
    let size = 4u64 << 30;
    let zeros = dir.path().join("zeros.mcap");
    std::fs::File::create(&zeros)
        .unwrap()
        .set_len(size)
        .unwrap();
    // MCAP's magic, then random bytes at the start and the end (where a footer and a
    // summary would be), and a hole of zeros between them.
    let random = dir.path().join("random.mcap");
    let mut file = std::fs::File::create(&random).unwrap();
    file.set_len(size).unwrap();
    let mut noise = vec![0u8; 1 << 20];
    fastrand_fill(&mut noise);
    file.write_all(mcap::MAGIC).unwrap();
    file.write_all(&noise).unwrap();
    file.seek(SeekFrom::Start(size - noise.len() as u64))
        .unwrap();
    file.write_all(&noise).unwrap();
    drop(file);

    // A valid Header, then a Message record that claims the rest of the file.
    let claims_all = dir.path().join("claims-all.mcap");
    let mut file = std::fs::File::create(&claims_all).unwrap();
    file.set_len(size).unwrap();
    file.write_all(mcap::MAGIC).unwrap();
    file.write_all(&[0x01, 8, 0, 0, 0, 0, 0, 0, 0]).unwrap();
    file.write_all(&[0; 8]).unwrap();
    file.write_all(&[0x05]).unwrap();
    file.write_all(&(size - 8 - 17 - 9).to_le_bytes()).unwrap();
    drop(file);

    let reindexed = dir.path().join("reindexed.mcap");
    for input in [&zeros, &random, &claims_all] {
        let input = input.to_str().unwrap();
        for args in [
            vec!["info", input],
            vec!["info", input, "--json"],
            vec!["reindex", input, "-o", reindexed.to_str().unwrap()],
        ] {
            let (code, peak_kib) = rec_peak_memory(&args);
            assert!(
                matches!(code, Some(0 | 1 | 3)),
                "rec {args:?}: exit {code:?}"
            );
            assert!(
                peak_kib < REC_MEMORY_BOUND_KIB,
                "rec {args:?} held {peak_kib} KiB"
            );
        }
    }
}

/// Fills `bytes` with random bytes from /dev/urandom.
fn fastrand_fill(bytes: &mut [u8]) {
    std::fs::File::open("/dev/urandom")
        .unwrap()
        .read_exact(bytes)
        .unwrap();
}

#[test]
fn recd_adopts_damaged_files_at_start_up_reindexes_what_it_can_and_records_on() {
    let domain = Domain::new();
    let root = tempfile::tempdir().unwrap();
    let old = root.path().join("data/old");
    std::fs::create_dir_all(&old).unwrap();
    let fixtures = damaged_files();
    for (n, file) in fixtures.iter().enumerate() {
        std::fs::copy(file, old.join(format!("old_{n:04}.mcap"))).unwrap();
    }
    let recd = Recd::start_with(root.path(), &domain, "reindex_after_crash = true", &[]);

    // Every adopted file is dealt with by the background reindex: recovered (indexed)
    // or, where nothing could be, left needing reindex with an ERROR naming it.
    let handled = |log: &str| {
        log.matches("reindexed after a crash").count()
            + log.matches("background reindex failed").count()
    };
    assert!(
        wait_until(Duration::from_secs(60), || handled(&recd.log())
            == fixtures.len()),
        "log:\n{}",
        recd.log()
    );
    let session = recd.listed("old");
    let files = session["files"].as_array().unwrap();
    assert_eq!(files.len(), fixtures.len(), "{session}");
    let listed_text = String::from_utf8(recd.rec(&["list"]).stdout).unwrap();
    let mut damaged = 0;
    for file in files {
        let state = file["state"].as_str().unwrap();
        assert!(state == "indexed" || state == "needs-reindex", "{file}");
        let name = file["path"].as_str().unwrap();
        if state == "needs-reindex" {
            assert!(recd.log().contains(name), "the log names {name}");
        }
        // Recovered with damage: marked so in the catalog, at the offset the log names.
        if let Some(offset) = file["damaged_at"].as_u64() {
            damaged += 1;
            assert_eq!(state, "indexed", "{file}");
            let warned = recd.log().lines().any(|line| {
                line.contains(name) && line.contains(&format!("damaged at byte {offset}:"))
            });
            assert!(warned, "{file}\n{}", recd.log());
            assert!(
                listed_text.contains(&format!("recovered, damaged at offset {offset}")),
                "{listed_text}"
            );
        }
    }
    assert!(damaged > 0, "the fixtures are damaged files: {session}");

    recd.rec_json(&["start", "--name", "after", "--topic", "after/*"]);
    finish_load(
        domain.load(
            &RecdLoad::new("after/")
                .cameras(0)
                .small_topics(2)
                .count(20)
                .wait_subscribers(1),
        ),
    );
    assert!(recd.wait_written("after", 40));
    let stopped = recd.rec_json(&["stop", "after"]);
    let written: u64 = stopped[0]["topics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["written"].as_u64().unwrap())
        .sum();
    assert_eq!(written, 40, "{stopped}");
    assert!(!stopped_files(&stopped[0]).is_empty());
}
