//! recd and rec as a user runs them: the real binaries, the real socket, real publisher
//! processes over real shared memory, the real SQLite catalog.

use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::time::Duration;

use recd_testkit::{finish_load, stopped_files, Domain, Recd, RecdLoad};
use recd_workload::verify::check_files;
use serde_json::Value;

/// The .mcap files in a session's directory, sorted.
fn listed_file_paths(root: &Path, session: &str) -> Vec<PathBuf> {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(root.join("data").join(session))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "mcap"))
        .collect();
    paths.sort();
    paths
}

/// Publishes `count` messages on 2 small topics and one 200 kB camera under `prefix`.
fn publish(domain: &Domain, prefix: &str, count: u32) -> std::process::Child {
    domain.load(
        &RecdLoad::new(prefix)
            .cameras(1)
            .frame_size(200_000)
            .fps(100)
            .small_topics(2)
            .small_rate(100)
            .count(count.into())
            .duration(Duration::from_secs(30))
            .wait_subscribers(1),
    )
}

/// Every file holds every message of the three topics of `prefix`, `count` each.
fn assert_all_recorded(files: &[PathBuf], prefix: &str, count: u64) {
    let checks = check_files(files).unwrap();
    for topic in ["camera/0", "small/0", "small/1"] {
        let service = format!("{prefix}{topic}");
        let check = checks
            .get(&service)
            .unwrap_or_else(|| panic!("{service} not recorded"));
        assert!(check.bad.is_empty(), "{service}: {:?}", check.bad);
        assert_eq!(check.sequences, (0..count).collect::<Vec<_>>(), "{service}");
    }
}

#[test]
fn start_status_stop_list_record_every_message_and_catalog_it() {
    let domain = Domain::new();
    let root = tempfile::tempdir().unwrap();
    let recd = Recd::start(root.path(), &domain);

    let started = recd.rec_json(&["start", "--name", "life", "--topic", "life/*"]);
    assert_eq!(started["name"], "life");
    let directory = PathBuf::from(started["directory"].as_str().unwrap());
    assert_eq!(directory, root.path().join("data/life"));
    let sent = finish_load(publish(&domain, "life/", 50));
    assert!(sent.topics.iter().all(|t| t.sent == 50));

    let status = recd.rec_json(&["status", "life"]);
    let session = &status[0];
    assert_eq!(session["name"], "life");
    assert!(session["current_files"][0]
        .as_str()
        .unwrap()
        .starts_with(directory.to_str().unwrap()));
    let human = recd.rec(&["status"]);
    assert!(String::from_utf8_lossy(&human.stdout).contains("life/small/0"));

    let stopped = recd.rec_json(&["stop"]);
    let files = stopped_files(&stopped[0]);
    assert!(files.iter().all(|f| f.starts_with(&directory)));
    assert_all_recorded(&files, "life/", 50);

    let session = recd.listed("life");
    assert_eq!(session["state"], "stopped");
    let catalog_files = session["files"].as_array().unwrap();
    assert_eq!(catalog_files.len(), files.len());
    assert!(catalog_files.iter().all(|f| f["state"] == "complete"));
    let messages: u64 = catalog_files
        .iter()
        .map(|f| f["messages"].as_u64().unwrap())
        .sum();
    assert_eq!(messages, 150);
    let no_session = recd.rec(&["stop"]);
    assert_eq!(no_session.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&no_session.stderr).contains("no session is recording"));
}

#[test]
fn sigterm_finalizes_every_session_and_exits_zero() {
    let domain = Domain::new();
    let root = tempfile::tempdir().unwrap();
    let mut recd = Recd::start(root.path(), &domain);
    recd.rec_json(&["start", "--name", "term", "--topic", "term/*"]);
    finish_load(publish(&domain, "term/", 40));

    let status = recd.signal_and_wait(libc::SIGTERM, Duration::from_secs(30));
    assert_eq!(status.code(), Some(0), "log:\n{}", recd.log());
    let files: Vec<PathBuf> = std::fs::read_dir(root.path().join("data/term"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(files.len(), 1);
    let info = recd_storage::summarize(&files[0]).unwrap();
    assert!(info.closed_cleanly, "finalized with its summary");
    assert_eq!(info.message_count, 120);
    assert_all_recorded(&files, "term/", 40);
    assert!(!recd.socket.exists(), "socket removed at exit");
}

#[test]
fn after_sigkill_the_catalog_says_needs_reindex_and_rec_reindex_recovers_everything() {
    let domain = Domain::new();
    let root = tempfile::tempdir().unwrap();
    let mut recd = Recd::start(root.path(), &domain);
    recd.rec_json(&["start", "--name", "crash", "--topic", "crash/*"]);
    finish_load(publish(&domain, "crash/", 30));
    // Every message reached the file (the writer flushes as soon as it runs dry).
    assert!(recd.wait_written("crash", 90));
    recd.signal_and_wait(libc::SIGKILL, Duration::from_secs(10));
    drop(recd);

    let recd = Recd::start(root.path(), &domain);
    let session = recd.listed("crash");
    assert_eq!(session["state"], "interrupted");
    let files = session["files"].as_array().unwrap();
    assert_eq!(files.len(), 1);
    assert_eq!(files[0]["state"], "needs-reindex");
    let path = PathBuf::from(files[0]["path"].as_str().unwrap());
    assert!(!recd_storage::summarize(&path).unwrap().closed_cleanly);

    let reindexed = recd.rec(&["reindex", "crash", "--json"]);
    assert!(
        reindexed.status.success(),
        "{}",
        String::from_utf8_lossy(&reindexed.stderr)
    );
    // One JSON document: the reports of the session's files.
    let reports: Value = serde_json::from_slice(&reindexed.stdout).expect("one JSON document");
    assert_eq!(reports.as_array().map(Vec::len), Some(1), "{reports}");
    assert_all_recorded(std::slice::from_ref(&path), "crash/", 30);
    let info = recd_storage::summarize(&path).unwrap();
    assert!(info.closed_cleanly);
    assert!(info.chunk_count > 0, "reindexed into chunks");
    assert_eq!(recd.listed("crash")["files"][0]["state"], "indexed");
}

#[test]
fn two_sessions_record_their_own_topics_at_once() {
    let domain = Domain::new();
    let root = tempfile::tempdir().unwrap();
    let recd = Recd::start(root.path(), &domain);
    recd.rec_json(&["start", "--name", "front", "--topic", "front/*"]);
    recd.rec_json(&["start", "--name", "all-small", "--topic", "*/small/*"]);
    let ambiguous = recd.rec(&["stop"]);
    assert_eq!(ambiguous.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&ambiguous.stderr).contains("--all"));
    let front = publish(&domain, "front/", 20);
    let rear = publish(&domain, "rear/", 20);
    finish_load(front);
    finish_load(rear);

    let stopped = recd.rec_json(&["stop", "--all"]);
    let by_name = |name: &str| {
        stopped
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["name"] == name)
            .map(stopped_files)
            .unwrap()
    };
    let front_topics: Vec<String> = check_files(&by_name("front"))
        .unwrap()
        .into_keys()
        .collect();
    assert_eq!(
        front_topics,
        ["front/camera/0", "front/small/0", "front/small/1"]
    );
    let small = check_files(&by_name("all-small")).unwrap();
    let small_topics: Vec<&String> = small.keys().collect();
    assert_eq!(
        small_topics,
        [
            "front/small/0",
            "front/small/1",
            "rear/small/0",
            "rear/small/1"
        ]
    );
    assert!(small.values().all(|c| c.messages == 20 && c.bad.is_empty()));
}

/// Sends raw bytes on the control socket and reads one reply line.
fn raw_exchange(socket: &Path, bytes: &[u8]) -> Value {
    let mut stream = UnixStream::connect(socket).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    // recd may answer and hang up before taking all of an oversized request.
    let _ = stream.write_all(bytes);
    let mut line = String::new();
    BufReader::new(stream).read_line(&mut line).unwrap();
    serde_json::from_str(&line).unwrap()
}

#[test]
fn bad_requests_and_silent_clients_get_errors_and_recd_keeps_serving() {
    let domain = Domain::new();
    let root = tempfile::tempdir().unwrap();
    let recd = Recd::start(root.path(), &domain);
    // A client that connects and says nothing must not hold anyone up.
    let _silent = UnixStream::connect(&recd.socket).unwrap();

    for (request, expected) in [
        (&b"this is not json\n"[..], "not a JSON request"),
        (
            br#"{"version":1,"request":"explode"}"#.as_slice(),
            "unknown",
        ),
        (br#"{"request":"list"}"#.as_slice(), "version"),
        (br#"{"version":7,"request":"list"}"#.as_slice(), "version 7"),
    ] {
        let mut line = request.to_vec();
        if line.last() != Some(&b'\n') {
            line.push(b'\n');
        }
        let reply = raw_exchange(&recd.socket, &line);
        assert_eq!(reply["response"], "error", "{reply}");
        assert_eq!(reply["kind"], "bad_request");
        assert!(
            reply["message"].as_str().unwrap().contains(expected),
            "{reply}"
        );
    }
    let huge = vec![b'x'; recd_control::MAX_MESSAGE_BYTES + 1];
    let reply = raw_exchange(&recd.socket, &huge);
    assert!(reply["message"].as_str().unwrap().contains("larger than"));

    for name in ["../escape", "a/b", ".."] {
        let output = recd.rec(&["start", "--name", name]);
        assert_eq!(output.status.code(), Some(1), "{name}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            stderr.contains("data directory") && stderr.lines().count() == 1,
            "{stderr}"
        );
    }
    assert!(!root.path().join("escape").exists());
    let bad_glob = recd.rec(&["start", "--name", "glob", "--topic", "camera/[0-"]);
    assert_eq!(bad_glob.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&bad_glob.stderr).contains("camera/[0-"));
    let unknown = recd.rec(&["stop", "nosuch"]);
    assert_eq!(unknown.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&unknown.stderr).contains("no session named \"nosuch\""));

    // Still serving.
    recd.rec_json(&["start", "--name", "after"]);
    let stopped = recd.rec_json(&["stop", "after"]);
    assert_eq!(stopped[0]["name"], "after");
}

#[test]
fn a_window_side_beyond_a_week_is_refused_by_rec_and_over_the_socket_never_wrapped() {
    let domain = Domain::new();
    let root = tempfile::tempdir().unwrap();
    let recd = Recd::start(root.path(), &domain);
    recd.rec_json(&["start", "--name", "far", "--topic", "none/*"]);
    // 10^15 s: its milliseconds fit in 64 bits, its nanoseconds do not.
    let asked = recd.rec(&["trigger", "far", "--after", "1000000000000000s"]);
    assert_ne!(asked.status.code(), Some(0));
    let stderr = String::from_utf8_lossy(&asked.stderr);
    assert!(
        stderr.contains("--after (1000000000000000 s) is longer than the 7 days"),
        "{stderr}"
    );
    // The same over the socket, from a client that does not check.
    for (side, json) in [
        ("after", r#""after_ms":1000000000000000000"#),
        ("before", r#""before_ms":18446744073709551615,"after_ms":0"#),
    ] {
        let line = format!(
            "{{\"version\":{},\"request\":\"trigger\",\"name\":\"far\",{json},\"note\":\"\"}}\n",
            recd_control::PROTOCOL_VERSION
        );
        let reply = raw_exchange(&recd.socket, line.as_bytes());
        assert_eq!(reply["response"], "error", "{reply}");
        assert_eq!(reply["kind"], "invalid_argument", "{reply}");
        let message = reply["message"].as_str().unwrap();
        assert!(
            message.contains(&format!("the window's {side} (")) && message.contains("7 days"),
            "{message}"
        );
    }
    let incidents = recd.rec_json(&["incidents", "far"]);
    assert_eq!(incidents.as_array().unwrap().len(), 0, "{incidents}");
    recd.rec_json(&["stop", "far"]);
}

#[test]
fn rec_without_a_daemon_says_so_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("recd.sock");
    let output = recd_testkit::rec(&missing, &["status"]);
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains("recd is not running"), "{stderr}");
    assert!(stderr.contains("--socket"), "{stderr}");

    let not_a_socket = dir.path().join("plain-file");
    std::fs::write(&not_a_socket, b"").unwrap();
    let output = recd_testkit::rec(&not_a_socket, &["list"]);
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains(not_a_socket.to_str().unwrap()), "{stderr}");

    // A socket a crashed recd left behind: the file is there, nobody listens.
    let stale = dir.path().join("stale.sock");
    drop(std::os::unix::net::UnixListener::bind(&stale).unwrap());
    let output = recd_testkit::rec(&stale, &["list"]);
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains("exists but no recd answers"), "{stderr}");
}

#[test]
fn after_a_crash_split_off_files_are_complete_and_open_or_uncatalogued_ones_need_reindex() {
    let domain = Domain::new();
    let root = tempfile::tempdir().unwrap();
    let mut recd = Recd::start(root.path(), &domain);
    recd.rec_json(&[
        "start",
        "--name",
        "split",
        "--topic",
        "split/*",
        "--max-file-size",
        "1MiB",
    ]);
    finish_load(publish(&domain, "split/", 30)); // 30 × 200 kB frames: several files
    assert!(recd.wait_written("split", 90));
    let catalogued = recd_testkit::wait_until(Duration::from_secs(10), || {
        let files = recd.listed("split")["files"].clone();
        let files = files.as_array().unwrap();
        files.len() >= 3
            && files.iter().filter(|f| f["state"] == "complete").count() == files.len() - 1
    });
    assert!(catalogued, "{}", recd.listed("split"));
    recd.signal_and_wait(libc::SIGKILL, Duration::from_secs(10));
    drop(recd);
    // A file recd had created but not yet put in the catalog when it died.
    let open_file = PathBuf::from(
        listed_file_paths(root.path(), "split")
            .last()
            .unwrap()
            .to_str()
            .unwrap()
            .replace(".mcap", ""),
    );
    let stem = open_file.to_str().unwrap();
    let (base, number) = stem.rsplit_once('_').unwrap();
    let unlisted = PathBuf::from(format!(
        "{base}_{:04}.mcap",
        number.parse::<u32>().unwrap() + 1
    ));
    std::fs::copy(format!("{stem}.mcap"), &unlisted).unwrap();

    let recd = Recd::start(root.path(), &domain);
    let files = recd.listed("split")["files"].clone();
    let files = files.as_array().unwrap();
    let (last, closed) = files.split_last().unwrap();
    assert_eq!(last["path"], unlisted.to_str().unwrap(), "found on disk");
    assert_eq!(last["state"], "needs-reindex");
    let (open, closed) = closed.split_last().unwrap();
    assert_eq!(open["state"], "needs-reindex");
    for file in closed {
        assert_eq!(file["state"], "complete", "{file}");
        let path = PathBuf::from(file["path"].as_str().unwrap());
        let info = recd_storage::summarize(&path).unwrap();
        assert!(info.closed_cleanly);
        assert_eq!(info.message_count, file["messages"].as_u64().unwrap());
    }
}

#[test]
fn a_file_or_session_being_recorded_is_not_reindexed_and_the_recording_goes_on_intact() {
    let domain = Domain::new();
    let root = tempfile::tempdir().unwrap();
    let recd = Recd::start(root.path(), &domain);
    recd.rec_json(&["start", "--name", "live", "--topic", "live/*"]);
    let load = publish(&domain, "live/", 200);
    let status = recd.rec_json(&["status", "live"]);
    let current = PathBuf::from(status[0]["current_files"][0].as_str().unwrap());

    for target in [current.to_str().unwrap(), "live"] {
        let refused = recd.rec(&["reindex", target]);
        let stderr = String::from_utf8_lossy(&refused.stderr);
        assert_eq!(refused.status.code(), Some(1), "{target}: {stderr}");
        assert_eq!(stderr.trim().lines().count(), 1, "one line: {stderr}");
        assert!(
            stderr.contains("session live") && stderr.contains("rec stop live"),
            "names the session and what to do: {stderr}"
        );
    }

    let sent = finish_load(load);
    assert!(sent.topics.iter().all(|t| t.sent == 200));
    let stopped = recd.rec_json(&["stop", "live"]);
    let files = stopped_files(&stopped[0]);
    assert_eq!(files, vec![current], "the file was not replaced");
    assert_all_recorded(&files, "live/", 200);
    let reindexed = recd.rec(&["reindex", "live"]);
    assert!(reindexed.status.success(), "a stopped session reindexes");
    assert_all_recorded(&files, "live/", 200);
}

#[test]
fn sessions_never_share_a_directory_and_unnamed_starts_within_a_second_both_record() {
    let root = tempfile::tempdir().unwrap();
    let domain = Domain::new();
    let recd = Recd::start(root.path(), &domain);

    // Two starts without a name, back to back (the same second, nearly always).
    let first = recd.rec_json(&["start", "--topic", "none/*"]);
    let second = recd.rec_json(&["start", "--topic", "none/*"]);
    assert_ne!(first["name"], second["name"]);
    assert_ne!(first["directory"], second["directory"]);
    recd.rec_json(&["stop", "--all"]);

    // The same name twice within a second: each session gets a directory of its own.
    let mut directories = Vec::new();
    for _ in 0..2 {
        let started = recd.rec_json(&["start", "--name", "again", "--topic", "none/*"]);
        directories.push(PathBuf::from(started["directory"].as_str().unwrap()));
        recd.rec_json(&["stop", "again"]);
    }
    // A stopped session's status is its summary from the catalog (the newest of the name).
    let status = recd.rec(&["status", "again"]);
    let text = String::from_utf8_lossy(&status.stdout);
    assert!(status.status.success(), "{status:?}");
    assert!(text.starts_with("again stopped (not recording)"), "{text}");
    assert!(text.contains("again_2"), "{text}");
    let status = recd.rec_json(&["status", "again"]);
    assert_eq!(status[0]["state"], "stopped", "{status}");
    // rec info of a session name: one summary over its files (the newest "again").
    let info = recd.rec(&["info", "again"]);
    assert!(info.status.success(), "{info:?}");
    let text = String::from_utf8_lossy(&info.stdout);
    assert!(text.starts_with("files:       1 ("), "{text}");
    assert!(text.contains("again_2"), "{text}");
    let unknown = recd.rec(&["status", "never-started"]);
    assert!(!unknown.status.success());
    assert!(String::from_utf8_lossy(&unknown.stderr).contains("no session named"));

    assert_eq!(directories[0], root.path().join("data/again"));
    assert_eq!(directories[1], root.path().join("data/again_2"));
    let list = recd.rec_json(&["list"]);
    let again: Vec<&Value> = list
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["name"] == "again")
        .collect();
    assert_eq!(again.len(), 2, "{list}");
    for session in again {
        let directory = PathBuf::from(session["directory"].as_str().unwrap());
        for file in session["files"].as_array().unwrap() {
            let path = PathBuf::from(file["path"].as_str().unwrap());
            assert_eq!(path.parent(), Some(directory.as_path()), "{session}");
        }
    }
}

#[test]
fn a_session_with_a_duration_stops_by_itself_with_its_files_complete() {
    let root = tempfile::tempdir().unwrap();
    let domain = Domain::new();
    let recd = Recd::start(root.path(), &domain);
    let began = std::time::Instant::now();
    recd.rec_json(&[
        "start",
        "--name",
        "timed",
        "--topic",
        "timed/*",
        "--duration",
        "2s",
    ]);
    finish_load(publish(&domain, "timed/", 10));
    let stopped = recd_testkit::wait_until(Duration::from_secs(20), || {
        recd.listed("timed")["state"] == "stopped"
    });
    assert!(stopped, "{}", recd.listed("timed"));
    assert!(began.elapsed() >= Duration::from_secs(2), "stopped early");
    let running = recd.rec_json(&["status"]);
    assert_eq!(running, serde_json::json!([]), "{running}");
    let session = recd.listed("timed");
    for file in session["files"].as_array().unwrap() {
        assert_eq!(file["state"], "complete", "{session}");
    }
    let files = listed_file_paths(root.path(), "timed");
    assert_all_recorded(&files, "timed/", 10);

    let refused = recd.rec(&["start", "--name", "never", "--duration", "0s"]);
    assert_eq!(refused.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(stderr.contains("duration must be more than 0"), "{stderr}");
}

#[test]
fn metadata_and_attachments_go_into_every_file_and_split_files_merge() {
    let root = tempfile::tempdir().unwrap();
    let domain = Domain::new();
    let recd = Recd::start(root.path(), &domain);
    let calibration = root.path().join("calibration.yaml");
    std::fs::write(&calibration, "camera_matrix: [1, 0, 0]\n").unwrap();

    // A missing attachment is refused before anything starts.
    let missing = root.path().join("missing.yaml");
    let refused = recd.rec(&[
        "start",
        "--name",
        "never",
        "--attach",
        missing.to_str().unwrap(),
    ]);
    assert_eq!(refused.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(
        stderr.contains("missing.yaml") && stderr.contains("No such file"),
        "{stderr}"
    );
    assert_eq!(recd.rec_json(&["list"]), serde_json::json!([]));

    recd.rec_json(&[
        "start",
        "--name",
        "tagged",
        "--topic",
        "tagged/*",
        "--max-duration",
        "1s",
        "--metadata",
        "vehicle=car-3",
        "--metadata",
        "driver=ana",
        "--attach",
        calibration.to_str().unwrap(),
    ]);
    finish_load(publish(&domain, "tagged/", 250));
    recd.rec_json(&["stop", "tagged"]);
    let files = listed_file_paths(root.path(), "tagged");
    assert!(files.len() >= 2, "split by duration: {files:?}");
    assert_all_recorded(&files, "tagged/", 250);

    // Read by the Python mcap package: every file has the user's record and the
    // attachment, and records of names no other file uses (so that `mcap merge` of the
    // session's files does not refuse them).
    let mut names = Vec::new();
    for file in &files {
        let read = recd_testkit::read_mcap(file);
        let metadata = read["metadata"].as_array().unwrap();
        let user: Vec<&Value> = metadata
            .iter()
            .filter(|m| m["name"].as_str().unwrap().starts_with("user/"))
            .collect();
        assert_eq!(user.len(), 1, "{file:?}: {metadata:?}");
        assert_eq!(
            user[0]["metadata"],
            serde_json::json!({"vehicle": "car-3", "driver": "ana"})
        );
        names.extend(
            metadata
                .iter()
                .map(|m| m["name"].as_str().unwrap().to_string()),
        );
        let attachments = read["attachments"].as_array().unwrap();
        assert_eq!(attachments.len(), 1, "{file:?}");
        assert_eq!(attachments[0]["name"], "calibration.yaml");
        assert_eq!(attachments[0]["data"], "camera_matrix: [1, 0, 0]\n");
    }
    // Each file's own user/, recorder/ and health/ records.
    let mut unique = names.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), 3 * files.len(), "{names:?}");
}

#[test]
fn a_selection_that_matches_nothing_is_told_in_the_log_and_the_status() {
    let root = tempfile::tempdir().unwrap();
    let domain = Domain::new();
    let recd = Recd::start(root.path(), &domain);
    recd.rec_json(&["start", "--name", "typo", "--topic", "no/such/*"]);
    let status = recd.rec(&["status", "typo"]);
    let text = String::from_utf8_lossy(&status.stdout);
    assert!(
        text.contains("no topic matches the selection yet"),
        "{text}"
    );
    let warned = recd_testkit::wait_until(Duration::from_secs(10), || {
        recd.log().lines().any(|line| {
            line.contains("WARN") && line.contains("no topic matches --topic no/such/*")
        })
    });
    assert!(warned, "{}", recd.log());
    recd.rec_json(&["stop", "typo"]);
}

#[test]
fn a_data_directory_that_moved_keeps_its_sessions_and_files_and_they_still_reindex_and_play() {
    let domain = Domain::new();
    let disk = tempfile::tempdir().unwrap();
    let before = disk.path().join("mounted-here");
    std::fs::create_dir(&before).unwrap();
    let mut recd = Recd::start(&before, &domain);
    recd.rec_json(&["start", "--name", "done", "--topic", "done/*"]);
    finish_load(publish(&domain, "done/", 30));
    assert!(recd.wait_written("done", 90));
    recd.rec_json(&["stop", "done"]);
    recd.rec_json(&["start", "--name", "cut", "--topic", "cut/*"]);
    finish_load(publish(&domain, "cut/", 20));
    assert!(recd.wait_written("cut", 60));
    recd.signal_and_wait(libc::SIGKILL, Duration::from_secs(10));
    drop(recd);
    let sessions_before = catalogued_files(&before);

    let after = disk.path().join("mounted-elsewhere");
    std::fs::rename(&before, &after).unwrap();
    let recd = Recd::start(&after, &domain);
    let list = recd.rec_json(&["list"]);
    let sessions = list.as_array().unwrap();
    assert_eq!(sessions.len(), 2, "no session adopted twice: {list}");
    for (name, state) in [("done", "complete"), ("cut", "needs-reindex")] {
        let session = recd.listed(name);
        let files = session["files"].as_array().unwrap();
        assert_eq!(files.len(), sessions_before[name], "{session}");
        for file in files {
            assert_eq!(file["state"], state, "{session}");
            let path = PathBuf::from(file["path"].as_str().unwrap());
            assert!(path.starts_with(&after), "{path:?} is under the new place");
        }
    }

    let reindexed = recd.rec(&["reindex", "cut"]);
    assert!(
        reindexed.status.success(),
        "{}",
        String::from_utf8_lossy(&reindexed.stderr)
    );
    assert_eq!(recd.listed("cut")["files"][0]["state"], "indexed");
    assert_all_recorded(&listed_file_paths(&after, "cut"), "cut/", 20);

    let report = recd.rec_json(&["play", "done", "--iceoryx2-prefix", &domain.prefix]);
    let topics = report["topics"].as_array().unwrap();
    assert_eq!(topics.len(), 3, "{report}");
    assert!(topics.iter().all(|t| t["sent"] == 30), "{report}");
}

/// How many files the catalog under `root` holds for each session (read while no recd
/// runs).
fn catalogued_files(root: &Path) -> std::collections::HashMap<String, usize> {
    let catalog = recd_catalog::Catalog::open(&root.join("state"), &root.join("data")).unwrap();
    catalog
        .sessions()
        .unwrap()
        .into_iter()
        .map(|session| (session.name, catalog.files(session.id).unwrap().len()))
        .collect()
}
