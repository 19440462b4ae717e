//! recd as a service: systemd's notifications, the background reindex after a crash, the
//! socket's permissions, and shell completions for rec.

use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::UnixDatagram;
use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

use recd_testkit::{binary, finish_load, wait_until, Domain, Recd, RecdLoad};

/// Collects the datagrams recd sends to `$NOTIFY_SOCKET` for up to `limit`, until `done`
/// says enough.
fn notifications(socket: &UnixDatagram, limit: Duration, done: impl Fn(&str) -> bool) -> String {
    socket
        .set_read_timeout(Some(Duration::from_millis(100)))
        .unwrap();
    let deadline = Instant::now() + limit;
    let mut seen = String::new();
    let mut buffer = [0u8; 4096];
    while Instant::now() < deadline && !done(&seen) {
        if let Ok(n) = socket.recv(&mut buffer) {
            seen += &String::from_utf8_lossy(&buffer[..n]);
        }
    }
    seen
}

#[test]
fn systemd_hears_ready_status_and_watchdog_pings() {
    let domain = Domain::new();
    let root = tempfile::tempdir().unwrap();
    let notify_path = root.path().join("notify.sock");
    let notify = UnixDatagram::bind(&notify_path).unwrap();
    let mut recd = Recd::start_with(
        root.path(),
        &domain,
        "",
        &[
            ("NOTIFY_SOCKET", notify_path.to_str().unwrap()),
            ("WATCHDOG_USEC", "400000"),
        ],
    );
    let seen = notifications(&notify, Duration::from_secs(10), |seen| {
        seen.contains("READY=1") && seen.contains("WATCHDOG=1") && seen.contains("STATUS=")
    });
    assert!(seen.contains("READY=1"), "{seen}");
    assert!(seen.contains("WATCHDOG=1"), "{seen}");
    assert!(seen.contains("STATUS=0 sessions recording"), "{seen}");

    recd.rec_json(&["start", "--name", "watched"]);
    let seen = notifications(&notify, Duration::from_secs(10), |seen| {
        seen.contains("STATUS=1 session recording")
    });
    assert!(seen.contains("STATUS=1 session recording"), "{seen}");
    let status = recd.signal_and_wait(libc::SIGTERM, Duration::from_secs(30));
    assert_eq!(status.code(), Some(0));
    let seen = notifications(&notify, Duration::from_secs(2), |seen| {
        seen.contains("STOPPING=1")
    });
    assert!(seen.contains("STOPPING=1"), "{seen}");
}

#[test]
fn reindex_after_crash_recovers_files_in_the_background() {
    let domain = Domain::new();
    let root = tempfile::tempdir().unwrap();
    let mut recd = Recd::start(root.path(), &domain);
    recd.rec_json(&["start", "--name", "bg", "--topic", "bg/*"]);
    finish_load(
        domain.load(
            &RecdLoad::new("bg/")
                .cameras(0)
                .small_topics(2)
                .small_rate(200)
                .count(100)
                .wait_subscribers(1),
        ),
    );
    assert!(recd.wait_written("bg", 200));
    recd.signal_and_wait(libc::SIGKILL, Duration::from_secs(10));
    drop(recd);

    let recd = Recd::start_with(root.path(), &domain, "reindex_after_crash = true", &[]);
    let mut file = None;
    let recovered = wait_until(Duration::from_secs(30), || {
        let list = recd.rec_json(&["list"]);
        let entry = &list[0]["files"][0];
        file = entry["path"].as_str().map(PathBuf::from);
        entry["state"] == "indexed"
    });
    assert!(recovered, "log:\n{}", recd.log());
    let info = recd_storage::summarize(file.unwrap()).unwrap();
    assert!(info.closed_cleanly);
    assert!(info.chunk_count > 0);
    assert_eq!(info.message_count, 200);
}

#[test]
fn the_socket_is_group_only_and_others_are_told_how_to_get_in() {
    let domain = Domain::new();
    let root = tempfile::tempdir().unwrap();
    let recd = Recd::start(root.path(), &domain);
    let mode = std::fs::metadata(&recd.socket)
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o660);
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return; // Only root can run rec as another user here.
    }
    // Let "nobody" reach the socket's directory, but not the socket itself.
    std::fs::set_permissions(root.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let output = Command::new("setpriv")
        .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
        .arg(binary("rec"))
        .arg("status")
        .arg("--socket")
        .arg(&recd.socket)
        .output()
        .expect("setpriv runs (util-linux)");
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains("no permission"), "{stderr}");
    assert!(stderr.contains("usermod -aG recd"), "{stderr}");
}

#[test]
fn recd_help_says_what_it_records() {
    let output = Command::new(binary("recd")).arg("--help").output().unwrap();
    assert!(output.status.success());
    let help = String::from_utf8_lossy(&output.stdout);
    assert!(
        help.contains("iceoryx2") && help.contains("DDS / ROS 2"),
        "{help}"
    );
}

#[test]
fn completion_offers_commands_options_and_the_session_names_recd_knows() {
    for shell in ["bash", "zsh", "fish"] {
        let output = Command::new(binary("rec"))
            .args(["completions", shell])
            .output()
            .unwrap();
        assert!(output.status.success(), "{shell}");
        let script = String::from_utf8_lossy(&output.stdout);
        assert!(
            script.contains("COMPLETE=") || script.contains("COMPLETE \""),
            "{shell}: {script}"
        );
    }

    let root = tempfile::tempdir().unwrap();
    let domain = Domain::new();
    let recd = Recd::start(root.path(), &domain);
    for name in ["alpha", "beta"] {
        recd.rec_json(&["start", "--name", name, "--topic", "nothing/*"]);
    }
    recd.rec_json(&["stop", "beta"]);
    // What the completion script asks: `COMPLETE=<shell> rec -- <words so far>`.
    let candidates = |words: &[&str]| {
        let output = Command::new(binary("rec"))
            .env("COMPLETE", "fish")
            .env("RECD_SOCKET", &recd.socket)
            .arg("--")
            .args(words)
            .output()
            .unwrap();
        assert!(output.status.success(), "{output:?}");
        String::from_utf8_lossy(&output.stdout)
            .lines()
            .map(|line| line.split('\t').next().unwrap().to_string())
            .filter(|word| !word.starts_with('-'))
            .collect::<Vec<String>>()
    };
    let commands = candidates(&["rec", ""]);
    for command in ["start", "stop", "status", "list", "info", "reindex"] {
        assert!(commands.iter().any(|c| c == command), "{commands:?}");
    }
    assert_eq!(candidates(&["rec", "stop", ""]), ["alpha", "beta"]);
    assert_eq!(candidates(&["rec", "status", "al"]), ["alpha"]);
    assert_eq!(candidates(&["rec", "mark", "be"]), ["beta"]);
    let reindex = candidates(&["rec", "reindex", "b"]);
    assert!(reindex.iter().any(|c| c == "beta"), "{reindex:?}");
    recd.rec_json(&["stop", "alpha"]);
}

#[test]
fn a_bad_configuration_is_named_with_its_line_before_anything_is_touched() {
    let root = tempfile::tempdir().unwrap();
    let state = root.path().join("state");
    let config = root.path().join("recd.toml");
    std::fs::write(
        &config,
        format!("state_dir = {state:?}\n\n[recording]\nmax_duration = \"whenever\"\n"),
    )
    .unwrap();
    let output = Command::new(binary("recd"))
        .arg("--config")
        .arg(&config)
        .arg("--socket")
        .arg(root.path().join("recd.sock"))
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("line 4"), "{stderr}");
    assert!(stderr.contains("max_duration"), "{stderr}");
    assert!(!state.exists(), "nothing created");
    assert!(!root.path().join("recd.sock").exists());

    let missing = Command::new(binary("recd"))
        .args(["--config", "/nonexistent/recd.toml"])
        .output()
        .unwrap();
    assert_eq!(missing.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&missing.stderr).contains("/nonexistent/recd.toml"));
}
