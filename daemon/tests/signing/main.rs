//! Tamper evidence (`[signing] key_file`): real recd chains and signs a session's files
//! as they close and as finishing replaces them, and real `rec verify` checks them with
//! the public key openssl derives; a byte flipped or a file deleted is named. The chain
//! goes up to the bucket beside the session's files, and verifies there too.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use recd_testkit::{
    age_identity, finish_load, openssl_keys, rec, recd_refused, stopped_files, wait_until, Domain,
    Recd, RecdLoad,
};
use serde_json::Value;

mod bucket;

/// `rec verify DIR [--key PUBLIC] --json`: its exit code, report and stderr.
fn verify(socket: &Path, dir: &Path, public: Option<&Path>) -> (i32, Value, String) {
    verify_with(socket, dir, public, &[])
}

/// [`verify`] with `extra` arguments (what the fleet saw last).
fn verify_with(
    socket: &Path,
    dir: &Path,
    public: Option<&Path>,
    extra: &[String],
) -> (i32, Value, String) {
    let mut args = vec!["verify", dir.to_str().unwrap(), "--json"];
    if let Some(public) = public {
        args.extend(["--key", public.to_str().unwrap()]);
    }
    args.extend(extra.iter().map(String::as_str));
    let output = rec(socket, &args);
    let report = serde_json::from_slice(&output.stdout).unwrap_or(Value::Null);
    (
        output.status.code().unwrap_or(-1),
        report,
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// `rec verify DIR --key PUBLIC` as a person reads it: whether it passed, and its report.
fn verify_text(socket: &Path, dir: &Path, public: &Path) -> (bool, String) {
    let args = [
        "verify",
        dir.to_str().unwrap(),
        "--key",
        public.to_str().unwrap(),
    ];
    let output = rec(socket, &args);
    let text = String::from_utf8_lossy(&output.stdout).into_owned();
    (output.status.success(), text)
}

/// Each file of a report with its state and kind.
fn files_of(report: &Value) -> Vec<(String, String, String)> {
    (report["files"].as_array().unwrap().iter())
        .map(|f| {
            (
                f["file"].as_str().unwrap().to_string(),
                f["state"].as_str().unwrap().to_string(),
                f["kind"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect()
}

/// Starts one camera `cam/camera/0` publishing `frames` frames of `frame_size` bytes at
/// 30 fps once recd subscribes.
fn camera(domain: &Domain, frame_size: usize, frames: u64) -> std::process::Child {
    domain.load(&RecdLoad::one_camera("cam/", frame_size, frames))
}

/// Records `frames` 1 MB frames of one camera into session `name`, split at 4 MiB
/// (`extra` added to `rec start`); returns its files.
fn record(recd: &Recd, domain: &Domain, name: &str, frames: u64, extra: &[&str]) -> Vec<PathBuf> {
    let mut args = vec![
        "start",
        "--name",
        name,
        "--topic",
        "cam/*",
        "--max-file-size",
        "4MiB",
    ];
    args.extend_from_slice(extra);
    recd.rec_json(&args);
    let sent: u64 = (finish_load(camera(domain, 1_000_000, frames)).topics.iter())
        .map(|t| t.sent)
        .sum();
    assert_eq!(sent, frames);
    assert!(recd.wait_written(name, frames), "{}", recd.log());
    stopped_files(&recd.rec_json(&["stop", name]))
}

/// recd under `root` signing with a key openssl made (`recording` lines in its
/// `[recording]` table); the public key's file.
fn signing_recd(root: &Path, domain: &Domain, recording: &str) -> (Recd, PathBuf) {
    let (key, public) = openssl_keys(root, 0o600);
    let config = format!("[signing]\nkey_file = {key:?}\n");
    let recd = Recd::start_configured(root, domain, &config, recording, &[]);
    (recd, public)
}

#[test]
fn closed_and_finished_files_are_signed_and_rec_verify_names_an_altered_and_a_missing_one() {
    let root = tempfile::tempdir().unwrap();
    let domain = Domain::new();
    let (recd, public) = signing_recd(root.path(), &domain, "finish = \"index\"\n");
    let recorded = record(&recd, &domain, "drive", 15, &[]);
    assert!(
        recorded.len() >= 3,
        "split into several files: {recorded:?}"
    );
    let dir = recorded[0].parent().unwrap().to_path_buf();
    let names: Vec<String> = (recorded.iter())
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();

    // Finishing replaces each file in place once the session stopped; each finished file
    // enters the chain after its recording.
    let mut report = Value::Null;
    let all_finished = wait_until(Duration::from_secs(90), || {
        let (code, now, _) = verify(&recd.socket, &dir, Some(&public));
        report = now;
        code == 0
            && files_of(&report)
                .iter()
                .filter(|(_, _, kind)| kind == "finished")
                .count()
                == names.len()
    });
    assert!(all_finished, "{report:#}\n{}", recd.log());
    assert_eq!(report["ok"], true);
    assert_eq!(report["signatures"], "checked");
    // Each entry names its session's directory and the host, signed with the rest.
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap();
    assert_eq!(
        report["origin"],
        serde_json::json!({"session": "drive", "host": host.trim()}),
        "{report:#}"
    );
    for name in &names {
        let file = (report["files"].as_array().unwrap().iter())
            .find(|f| f["file"] == name.as_str())
            .unwrap_or_else(|| panic!("{name} not in {report:#}"));
        assert_eq!(file["state"], "intact", "{report:#}");
        assert_eq!(
            file["replaced"],
            serde_json::json!(["recorded"]),
            "{report:#}"
        );
    }
    // The text report lists every file intact.
    let (success, text) = verify_text(&recd.socket, &dir, &public);
    assert!(success, "{text}");
    for name in &names {
        assert!(
            text.lines()
                .any(|l| l.starts_with("intact") && l.contains(name.as_str())),
            "{text}"
        );
    }

    // Without the key nothing says who wrote the chain: the same intact files are not
    // "ok", and the exit is neither success nor the tampered one.
    let (code, unsigned, stderr) = verify(&recd.socket, &dir, None);
    assert_eq!(code, 3, "{unsigned:#}\n{stderr}");
    assert_eq!(unsigned["ok"], false, "{unsigned:#}");
    assert!(
        (unsigned["reason"].as_str()).is_some_and(|r| r.contains("signatures not checked")),
        "{unsigned:#}"
    );
    assert!(stderr.contains("signatures not checked"), "{stderr}");

    // One byte flipped in one file, another file deleted: both named, exit 1.
    let mut bytes = std::fs::read(&recorded[1]).unwrap();
    let middle = bytes.len() / 2;
    bytes[middle] ^= 0x01;
    std::fs::write(&recorded[1], bytes).unwrap();
    std::fs::remove_file(&recorded[2]).unwrap();
    let (code, report, stderr) = verify(&recd.socket, &dir, Some(&public));
    assert_eq!(code, 1, "{report:#}");
    assert_eq!(report["ok"], false);
    let states = files_of(&report);
    assert!(
        states.contains(&(names[1].clone(), "altered".into(), "finished".into())),
        "{states:?}"
    );
    assert!(
        states.contains(&(names[2].clone(), "missing".into(), "finished".into())),
        "{states:?}"
    );
    assert!(
        states.contains(&(names[0].clone(), "intact".into(), "finished".into())),
        "{states:?}"
    );
    assert!(
        stderr.contains(&format!("{} altered", names[1])),
        "{stderr}"
    );
    assert!(
        stderr.contains(&format!("{} missing", names[2])),
        "{stderr}"
    );

    // Without the key the files are still checked, and the report says what was not.
    let (code, report, _) = verify(&recd.socket, &dir, None);
    assert_eq!(code, 1);
    assert_eq!(report["signatures"], "not_checked");
    let text = rec(&recd.socket, &["verify", dir.to_str().unwrap()]);
    assert!(
        String::from_utf8_lossy(&text.stdout).contains("signatures NOT checked"),
        "{text:?}"
    );
}

#[test]
fn a_key_others_may_read_or_a_bad_key_refuses_start_up() {
    let root = tempfile::tempdir().unwrap();
    let (key, _) = openssl_keys(root.path(), 0o644);
    let config = root.path().join("recd.toml");
    let write_config = |key: &Path| {
        std::fs::write(
            &config,
            format!(
                "socket = {:?}\ndata_dir = {:?}\nstate_dir = {:?}\n\n[signing]\nkey_file = {key:?}\n",
                root.path().join("recd.sock"),
                root.path().join("data"),
                root.path().join("state"),
            ),
        )
        .unwrap();
    };
    write_config(&key);
    let stderr = recd_refused(&config);
    assert!(
        stderr.contains(&key.display().to_string()) && stderr.contains("mode 0644"),
        "{stderr}"
    );

    let bad = root.path().join("bad-key.pem");
    std::fs::write(
        &bad,
        "-----BEGIN PRIVATE KEY-----\nbm90IGEga2V5\n-----END PRIVATE KEY-----\n",
    )
    .unwrap();
    std::fs::set_permissions(&bad, std::fs::Permissions::from_mode(0o600)).unwrap();
    write_config(&bad);
    let stderr = recd_refused(&config);
    assert!(
        stderr.contains(&bad.display().to_string())
            && stderr.contains("is not an Ed25519 private key"),
        "{stderr}"
    );
}

#[test]
fn files_retention_deleted_are_told_from_files_gone_without_recd() {
    let root = tempfile::tempdir().unwrap();
    let domain = Domain::new();
    let (recd, public) = signing_recd(root.path(), &domain, "");
    // Three seconds of recording: retention looks at the ring every second.
    let files = record(&recd, &domain, "ring", 90, &["--max-files", "2"]);
    let dir = files[0].parent().unwrap().to_path_buf();
    let mut report = Value::Null;
    // Settled once every deletion has entered the chain: between retention's unlink and
    // the signing thread's entry (at background priority) a deleted file is missing to
    // the chain. Never settled if a deletion never entered. The ring's retention ended
    // with the session: no file is deleted while the test looks.
    let settled = wait_until(Duration::from_secs(30), || {
        report = verify(&recd.socket, &dir, Some(&public)).1;
        let states = files_of(&report);
        let count = |wanted: &str| states.iter().filter(|(_, s, _)| s == wanted).count();
        report["ok"] == true && count("deleted") >= 2 && count("intact") >= 1
    });
    assert!(settled, "{report:#}\n{}", recd.log());
    let intact: Vec<String> = (files_of(&report).into_iter())
        .filter(|(_, state, _)| state == "intact")
        .map(|(name, _, _)| name)
        .collect();
    std::fs::remove_file(dir.join(&intact[0])).unwrap();
    let (code, report, stderr) = verify(&recd.socket, &dir, Some(&public));
    assert_eq!(code, 1, "{report:#}");
    assert!(
        stderr.contains(&format!("{} missing", intact[0])),
        "{stderr}"
    );
}

/// The DDS domain of the name-reuse test's publisher (no other test of this binary uses
/// DDS).
const REUSE_DDS_DOMAIN: u16 = 83;

#[test]
fn an_older_sessions_incident_is_cut_with_its_own_config_into_its_own_chain_after_its_name_is_reused(
) {
    let root = tempfile::tempdir().unwrap();
    let domain = Domain::new();
    let (recd, public) = signing_recd(root.path(), &domain, "dds_interfaces = [\"127.0.0.1\"]\n");
    // The older session records DDS only: its files carry no source in their names.
    let dds_domain = REUSE_DDS_DOMAIN.to_string();
    recd.rec_json(&[
        "start",
        "--name",
        "reuse",
        "--no-iceoryx2",
        "--dds-domain",
        &dds_domain,
    ]);
    let publisher = RecdLoad::new("reusedds_")
        .cameras(0)
        .small_topics(1)
        .small_rate(50)
        .count(400)
        .duration(Duration::from_secs(60))
        .dds(REUSE_DDS_DOMAIN, "127.0.0.1")
        .spawn();
    assert!(recd.wait_written("reuse", 100), "{}", recd.log());
    // Its window ends after the session does: it is cut once a newer session took the name.
    recd.rec_json(&[
        "trigger", "reuse", "--id", "older", "--before", "1s", "--after", "2s",
    ]);
    let older = stopped_files(&recd.rec_json(&["stop", "reuse"]));
    let older_dir = older[0].parent().unwrap().to_path_buf();
    let newer = recd.rec_json(&["start", "--name", "reuse", "--topic", "cam/*"]);
    let newer_dir = PathBuf::from(newer["directory"].as_str().unwrap());
    assert_ne!(newer_dir, older_dir);
    let load = camera(&domain, 100_000, 30);

    let mut incident = Value::Null;
    let cut = wait_until(Duration::from_secs(60), || {
        let listed = recd.rec_json(&["incidents"]);
        incident = (listed.as_array().unwrap().iter())
            .find(|i| i["id"] == "older")
            .cloned()
            .unwrap_or(Value::Null);
        incident["cut"] == "cut"
    });
    assert!(cut, "{incident:#}\n{}", recd.log());
    let cut_path = PathBuf::from(incident["cut_files"][0]["path"].as_str().unwrap());
    let cut_name = cut_path.file_name().unwrap().to_string_lossy().into_owned();
    assert!(
        cut_name.ends_with("_reuse_dds.mcap"),
        "named for what the older session recorded: {cut_name}"
    );
    // The cut enters the older session's chain, not the newer one's.
    let entered = format!("incidents/{cut_name}");
    let mut report = Value::Null;
    let chained = wait_until(Duration::from_secs(30), || {
        report = verify(&recd.socket, &older_dir, Some(&public)).1;
        files_of(&report).contains(&(entered.clone(), "intact".into(), "cut".into()))
    });
    assert!(chained, "{report:#}\n{}", recd.log());
    finish_load(load);
    let newer_files = stopped_files(&recd.rec_json(&["stop", "reuse"]));
    assert!(!newer_files.is_empty());
    let (_, newer_report, _) = verify(&recd.socket, &newer_dir, Some(&public));
    assert!(
        !files_of(&newer_report)
            .iter()
            .any(|(name, _, _)| *name == entered),
        "{newer_report:#}"
    );
    let _ = recd_testkit::finish_load(publisher);
}

#[test]
fn an_incident_cut_enters_the_chain_of_its_session() {
    let root = tempfile::tempdir().unwrap();
    let domain = Domain::new();
    let (recd, public) = signing_recd(root.path(), &domain, "");
    recd.rec_json(&["start", "--name", "drive", "--topic", "cam/*"]);
    let load = camera(&domain, 100_000, 90);
    assert!(recd.wait_written("drive", 20), "{}", recd.log());
    let taken = recd.rec_json(&[
        "trigger", "drive", "--before", "300ms", "--after", "100ms", "--note", "brake", "--wait",
    ]);
    assert_eq!(taken["cut"], "cut", "{taken}");
    finish_load(load);
    let files = stopped_files(&recd.rec_json(&["stop", "drive"]));
    let dir = files[0].parent().unwrap().to_path_buf();
    let id = taken["id"].as_str().unwrap();
    let listed = recd.rec_json(&["incidents", "drive"]);
    let incident = (listed.as_array().unwrap().iter())
        .find(|i| i["id"] == id)
        .unwrap_or_else(|| panic!("no incident {id} in {listed:#}"));
    let cut = PathBuf::from(incident["cut_files"][0]["path"].as_str().unwrap());
    let cut_name = format!("incidents/{}", cut.file_name().unwrap().to_string_lossy());

    let mut report = Value::Null;
    let chained = wait_until(Duration::from_secs(30), || {
        report = verify(&recd.socket, &dir, Some(&public)).1;
        files_of(&report).contains(&(cut_name.clone(), "intact".into(), "cut".into()))
            && report["ok"] == true
    });
    assert!(chained, "{report:#}\n{}", recd.log());

    // The cut altered is named, as any file of the session.
    std::fs::write(&cut, b"another window").unwrap();
    let (code, _, stderr) = verify(&recd.socket, &dir, Some(&public));
    assert_eq!(code, 1);
    assert!(stderr.contains(&format!("{cut_name} altered")), "{stderr}");
}

#[test]
fn a_chain_cut_while_recd_was_stopped_is_not_extended_and_rec_verify_names_the_new_segment() {
    let root = tempfile::tempdir().unwrap();
    let domain = Domain::new();
    let (key, public) = openssl_keys(root.path(), 0o600);
    let signing = format!("[signing]\nkey_file = {key:?}\n");
    let mut recd = Recd::start_configured(root.path(), &domain, &signing, "", &[]);
    let files = record(&recd, &domain, "drive", 12, &[]);
    assert!(files.len() >= 3, "{files:?}");
    let dir = files[0].parent().unwrap().to_path_buf();
    let chained = wait_until(Duration::from_secs(30), || {
        let (code, report, _) = verify(&recd.socket, &dir, Some(&public));
        code == 0 && report["entries"] == files.len()
    });
    assert!(chained, "{}", recd.log());
    // Stopped as systemd stops it: what is queued is chained, the catalog keeps the head.
    assert!(recd
        .signal_and_wait(libc::SIGTERM, Duration::from_secs(30))
        .success());

    // The last two entries and their files removed while recd was not running.
    let chain = dir.join("recd-chain.jsonl");
    let lines: Vec<String> = (std::fs::read_to_string(&chain).unwrap().lines())
        .map(str::to_string)
        .collect();
    std::fs::write(&chain, lines[..lines.len() - 2].join("\n") + "\n").unwrap();
    for file in &files[files.len() - 2..] {
        std::fs::remove_file(file).unwrap();
    }
    let (code, report, stderr) = verify(&recd.socket, &dir, Some(&public));
    assert_eq!(
        code, 0,
        "cut where nothing else tells: {report:#}\n{stderr}"
    );

    // recd again, with a disk budget its retention meets by deleting the file left: that
    // deletion is the next entry of the session's chain, which recd reopens.
    let config = format!("max_total_size = \"1MiB\"\n{signing}");
    let recd = Recd::start_configured(root.path(), &domain, &config, "", &[]);
    let mut report = Value::Null;
    let deleted = wait_until(Duration::from_secs(30), || {
        report = verify(&recd.socket, &dir, Some(&public)).1;
        files_of(&report)
            .iter()
            .any(|(_, state, _)| state == "deleted")
    });
    assert!(deleted, "{report:#}\n{}", recd.log());
    let (code, report, stderr) = verify(&recd.socket, &dir, Some(&public));
    assert_eq!(code, 1, "{report:#}");
    let kept = lines.len() - 2;
    assert_eq!(
        report["problems"],
        serde_json::json!([{
            "problem": "new_segment",
            "line": kept + 1,
            "found": format!(
                "the chain held {kept} entries where recd had written {}: 2 were cut",
                lines.len()
            ),
        }]),
        "{report:#}"
    );
    assert!(stderr.contains("the chain is broken or forged"), "{stderr}");
    assert!(
        recd.log().contains("recd does not extend the chain"),
        "{}",
        recd.log()
    );
}

/// age alone does not say who wrote a file: anyone with the fleet's public key makes one
/// that `age -d` accepts. A sealed recording replaced by such a file before recd hashed
/// it (here while it was still being written, the widest such gap) is named altered: the
/// chain holds the digest the writer took of the bytes it stored, not what the disk held
/// when the chain's entry was made.
#[test]
fn a_sealed_file_replaced_before_it_was_chained_is_named_altered() {
    let root = tempfile::tempdir().unwrap();
    let domain = Domain::new();
    let (identity, fleet) = age_identity(root.path());
    let (key, public) = openssl_keys(root.path(), 0o600);
    let config =
        format!("[signing]\nkey_file = {key:?}\n\n[encryption]\nrecipients = [{fleet:?}]\n");
    let recd = Recd::start_configured(root.path(), &domain, &config, "", &[]);
    recd.rec_json(&["start", "--name", "drive", "--topic", "cam/*"]);
    finish_load(camera(&domain, 100_000, 10));
    assert!(recd.wait_written("drive", 10), "{}", recd.log());
    let dir = root.path().join("data").join("drive");
    let sealed: Vec<PathBuf> = (std::fs::read_dir(&dir).unwrap().flatten())
        .map(|entry| entry.path())
        .filter(|path| path.to_string_lossy().ends_with(".mcap.age"))
        .collect();
    assert_eq!(sealed.len(), 1, "{sealed:?}");
    let file = &sealed[0];

    // The forger seals a file of his own to the fleet with Debian's age and puts it in
    // place of the one recd is writing.
    let forged_plain = root.path().join("forged.mcap");
    std::fs::write(&forged_plain, b"not what the camera saw").unwrap();
    let forged = root.path().join("forged.mcap.age");
    let sealed_by_age = std::process::Command::new("age")
        .args(["-r", &fleet, "-o"])
        .arg(&forged)
        .arg(&forged_plain)
        .output()
        .expect("age runs");
    assert!(sealed_by_age.status.success(), "{sealed_by_age:?}");
    std::fs::rename(&forged, file).unwrap();
    recd.rec_json(&["stop", "drive"]);

    let name = file.file_name().unwrap().to_string_lossy().into_owned();
    let mut report = Value::Null;
    let chained = wait_until(Duration::from_secs(30), || {
        report = verify(&recd.socket, &dir, Some(&public)).1;
        files_of(&report).iter().any(|(file, _, _)| *file == name)
    });
    assert!(chained, "{report:#}\n{}", recd.log());
    let (code, report, stderr) = verify(&recd.socket, &dir, Some(&public));
    assert_eq!(code, 1, "{report:#}\n{stderr}");
    assert!(
        files_of(&report).contains(&(name.clone(), "altered".into(), "recorded".into())),
        "{report:#}"
    );
    // Yet age takes the forgery for a file sealed to the fleet.
    let decrypted = std::process::Command::new("age")
        .arg("-d")
        .arg("-i")
        .arg(&identity)
        .arg(file)
        .output()
        .expect("age runs");
    assert!(decrypted.status.success(), "{decrypted:?}");
    assert_eq!(decrypted.stdout, b"not what the camera saw");
}
