//! Sealed recordings (`[encryption] recipients`): recd's files are age files that Debian's
//! `age` decrypts with the fleet's identity into MCAP the Python `mcap` package reads; no
//! message byte reaches the disk in clear, not even on the raw device; a power cut leaves
//! authentic chunks that `rec decrypt --recover` turns into a readable file holding all
//! but the last second; bad recipients stop recd at start-up.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use recd_testkit::{
    age_identity, assert_cut_is_window, ext4_image, http_get, openssl_keys, read_mcap,
    read_with_mcap_core, recd_refused, script_done, shm_camera, wait_until, Domain, Mount, Recd,
    SeaweedFs,
};
use serde_json::Value;

/// What every camera sample carries after its index: found anywhere on the raw disk, it
/// is plaintext that escaped.
const MARKER: &str = "RECD-SEALED-MARKER-5f1c9a7e";

/// A 256 MiB ext4 image in `work`, loop-mounted on `work/disk`.
fn loop_disk(work: &Path) -> (PathBuf, Mount) {
    let image = work.join("disk.img");
    ext4_image(&image, 256);
    let disk = Mount::at(&work.join("disk"), &image, "ext4", "loop");
    (image, disk)
}

/// `[upload]` to `s3`, under `fleet/<session>/`, its credentials file written in `dir`.
fn upload_section(s3: &SeaweedFs, dir: &Path) -> String {
    let credentials = dir.join("credentials");
    s3.credentials_file(&credentials);
    format!(
        "[upload]\nendpoint = {:?}\nbucket = {:?}\ncredentials_file = {credentials:?}\nvehicle_id = \"car-9\"\nprefix = \"fleet/{{session}}\"\n",
        s3.endpoint, s3.bucket,
    )
}

/// Starts session `drive` of the `drive/*` topics, split at `max_file_size`.
fn start_drive(recd: &Recd, max_file_size: &str) {
    recd.rec_json(&[
        "start",
        "--name",
        "drive",
        "--topic",
        "drive/*",
        "--max-file-size",
        max_file_size,
    ]);
}

fn encryption(public: &str) -> String {
    format!("[encryption]\nrecipients = [{public:?}]\n")
}

/// Runs Debian's `age -d` on `file` into `output`; whether it succeeded, and its stderr.
fn age_decrypt(identity: &Path, file: &Path, output: &Path) -> (bool, String) {
    let run = Command::new("age")
        .arg("-d")
        .arg("-i")
        .arg(identity)
        .arg("-o")
        .arg(output)
        .arg(file)
        .output()
        .expect("age runs");
    (
        run.status.success(),
        String::from_utf8_lossy(&run.stderr).into_owned(),
    )
}

/// Whether `needle` occurs in the file at `path`, read in pieces (a disk image).
fn file_contains(path: &Path, needle: &[u8]) -> bool {
    use std::io::Read;
    let mut file = std::fs::File::open(path).unwrap();
    let mut carry = Vec::new();
    let mut buf = vec![0u8; 8 << 20];
    loop {
        let n = file.read(&mut buf).unwrap();
        if n == 0 {
            return false;
        }
        carry.extend_from_slice(&buf[..n]);
        if carry.windows(needle.len()).any(|w| w == needle) {
            return true;
        }
        carry.drain(..carry.len() - (needle.len() - 1));
    }
}

/// The sealed recordings of session directories under `data`, in name order.
fn sealed_files(data: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(data)
        .unwrap()
        .flat_map(|dir| std::fs::read_dir(dir.unwrap().path()).unwrap())
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.to_string_lossy().ends_with(".mcap.age"))
        .collect();
    files.sort();
    files
}

fn now_ns() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64
}

#[test]
fn sealed_files_decrypt_with_the_fleet_identity_and_a_power_cut_leaves_no_plaintext_on_the_disk() {
    let domain = Domain::new();
    let work = tempfile::tempdir().unwrap();
    let (identity, public) = age_identity(work.path());
    let (image, disk) = loop_disk(work.path());
    let config = format!("min_free_space = \"16MiB\"\n{}", encryption(&public));
    let mut recd = Recd::start_with(disk.path(), &domain, &config, &[]);
    start_drive(&recd, "2MiB");
    let publisher = marker_publisher(&domain, 2000);
    // Several files closed, one open.
    assert!(
        wait_until(Duration::from_secs(30), || {
            sealed_files(&disk.join("data")).len() >= 3
        }),
        "{}",
        recd.log()
    );
    std::thread::sleep(Duration::from_secs(2));
    // The power cut: recd dies, and the disk keeps only what reached it.
    let cut_ns = now_ns();
    recd.signal_and_wait(libc::SIGKILL, Duration::from_secs(5));
    let copy = work.path().join("after-the-cut.img");
    std::fs::copy(&image, &copy).unwrap();
    recd_testkit::kill_group(publisher);
    drop(recd);
    drop(disk);
    assert!(
        !file_contains(&copy, MARKER.as_bytes()),
        "the marker is on the raw disk in clear"
    );

    let rebooted = Mount::at(&work.path().join("disk"), &copy, "ext4", "loop");
    let files = sealed_files(&rebooted.join("data"));
    assert!(files.len() >= 3, "{files:?}");
    let plain = tempfile::tempdir().unwrap();
    let (last, closed) = files.split_last().unwrap();
    let mut newest_ns = 0;
    for file in closed {
        let output = plain.path().join(file.file_name().unwrap());
        let (ok, stderr) = age_decrypt(&identity, file, &output);
        assert!(ok, "{}: {stderr}", file.display());
        let read = read_mcap(&output);
        let count = read["message_count"].as_u64().unwrap();
        assert!(count > 0, "{read}");
        // Foxglove's reader reads it too (as recorded, unchunked: by its stream reader).
        let core = &read_with_mcap_core(std::slice::from_ref(&output))[0];
        assert!(core.stream_messages >= count, "{core:?}");
        newest_ns = read["messages"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["log_time"].as_u64().unwrap())
            .max()
            .unwrap()
            .max(newest_ns);
    }
    // The file open at the cut lacks its last chunk: age refuses it as cut short...
    let (ok, stderr) = age_decrypt(&identity, last, &plain.path().join("open.mcap"));
    assert!(!ok, "age decrypted a file without its last chunk");
    assert!(!stderr.is_empty());
    // ...and rec decrypt --recover keeps its authentic chunks, reindexed.
    let recovered = plain.path().join("recovered.mcap");
    let rec = recd_testkit::binary("rec");
    let run = Command::new(rec)
        .args(["decrypt", "--recover", "-i"])
        .arg(&identity)
        .arg("-o")
        .arg(&recovered)
        .arg(last)
        .output()
        .unwrap();
    assert_eq!(
        run.status.code(),
        Some(3),
        "{}{}",
        String::from_utf8_lossy(&run.stdout),
        String::from_utf8_lossy(&run.stderr)
    );
    let read = read_mcap(&recovered);
    for message in read["messages"].as_array().unwrap() {
        newest_ns = newest_ns.max(message["log_time"].as_u64().unwrap());
    }
    assert!(
        newest_ns + 1_000_000_000 >= cut_ns,
        "the newest message kept is {} ms before the cut",
        (cut_ns - newest_ns) / 1_000_000
    );

    // recd after the reboot cannot finish the file it lost the key of: `rec upload` sends
    // it as written, beside the others.
    let s3 = SeaweedFs::start("recordings");
    let config = format!(
        "{}{}",
        encryption(&public),
        upload_section(&s3, work.path())
    );
    let recd = Recd::start_with(rebooted.path(), &domain, &config, &[]);
    assert!(
        recd.log().contains("its key went with the last run"),
        "{}",
        recd.log()
    );
    recd.rec_json(&["upload", "drive"]);
    let all_there = wait_until(Duration::from_secs(60), || {
        s3.objects("fleet/").len() == files.len()
    });
    assert!(all_there, "{:?}\n{}", s3.objects("fleet/"), recd.log());
    let bucket = tempfile::tempdir().unwrap();
    s3.download("fleet/", bucket.path());
    let name = last.file_name().unwrap();
    assert_eq!(
        std::fs::read(bucket.path().join(name)).unwrap(),
        std::fs::read(last).unwrap(),
        "the open file's object is the file as written"
    );
    drop(recd);
    drop(rebooted);
}

/// Publishes the marker on `drive/0` and `drive/1` from iceoryx2's Python bindings:
/// `count` ticks at 40 Hz, 20 kB a sample.
fn marker_publisher(domain: &Domain, count: u32) -> std::process::Child {
    shm_camera(&[
        "--prefix",
        &domain.prefix,
        "--name-prefix",
        "drive/",
        "--topics",
        "2",
        "--size",
        "20000",
        "--fps",
        "40",
        "--count",
        &count.to_string(),
        "--fill",
        MARKER,
    ])
}

/// The paths of `listed`'s entries under `key` (`files`, `cut_files`).
/// The seal keys recd holds, as its `/metrics` says (`recd_seal_keys`).
fn seal_keys(recd: &Recd) -> Option<f64> {
    let metrics = http_get(recd.http_address(), "/metrics").body;
    (metrics.lines())
        .find_map(|line| line.strip_prefix("recd_seal_keys "))
        .map(|count| count.trim().parse::<f64>().unwrap())
}

fn paths(listed: &Value, key: &str) -> Vec<PathBuf> {
    (listed[key].as_array().unwrap().iter())
        .map(|f| PathBuf::from(f["path"].as_str().or(f.as_str()).unwrap()))
        .collect()
}

#[test]
fn finishing_an_incident_cut_and_uploads_stay_sealed_and_no_step_writes_plaintext() {
    let domain = Domain::new();
    let work = tempfile::tempdir().unwrap();
    let (identity, public) = age_identity(work.path());
    let (image, disk) = loop_disk(work.path());
    let s3 = SeaweedFs::start("recordings");
    let config = format!(
        "min_free_space = \"16MiB\"\n{}{}",
        encryption(&public),
        upload_section(&s3, work.path())
    );
    let mut recd = Recd::start_configured(disk.path(), &domain, &config, "finish = \"zstd\"", &[]);
    start_drive(&recd, "1MiB");
    let publisher = marker_publisher(&domain, 240);
    assert!(recd.wait_written("drive", 150), "{}", recd.log());
    let trigger = recd.rec_json(&[
        "trigger",
        "drive",
        "--before",
        "1s",
        "--after",
        "500ms",
        "--note",
        "sealed brake",
    ]);
    let id = trigger["id"].as_str().unwrap().to_string();
    script_done(publisher, Duration::from_secs(60));
    std::thread::sleep(Duration::from_millis(500));
    recd.rec_json(&["stop", "drive"]);

    // Every file finished, the incident cut, and all of them uploaded.
    let mut files = Vec::new();
    let mut cuts = Vec::new();
    let settled = wait_until(Duration::from_secs(120), || {
        let listed = recd.listed("drive");
        // The session's recordings; its list holds the incident's cut too.
        files = paths(&listed, "files")
            .into_iter()
            .filter(|file| !file.to_string_lossy().contains("/incidents/"))
            .collect();
        let finished =
            (listed["files"].as_array().unwrap().iter()).all(|f| f["state"] == "indexed");
        let incidents = recd.rec_json(&["incidents"]);
        cuts = (incidents.as_array().unwrap().iter())
            .find(|i| i["id"] == id.as_str())
            .map(|i| paths(i, "cut_files"))
            .unwrap_or_default();
        let status = recd.rec_json(&["upload", "--status"]);
        let uploaded = files.iter().chain(&cuts).all(|file| {
            (status["files"].as_array().unwrap().iter())
                .any(|f| f["path"] == file.to_str().unwrap() && f["state"] == "uploaded")
        });
        finished && !cuts.is_empty() && uploaded
    });
    assert!(settled, "files {files:?}, cuts {cuts:?}\n{}", recd.log());
    assert!(files.len() >= 3, "{files:?}");
    for file in files.iter().chain(&cuts) {
        assert!(
            file.to_string_lossy().ends_with(".mcap.age"),
            "{}",
            file.display()
        );
    }
    // Without a key, rec info says what the file is and no more.
    let info = recd.rec(&["info", files[0].to_str().unwrap()]);
    let info = String::from_utf8_lossy(&info.stdout).to_string();
    assert!(info.contains("sealed"), "{info}");
    assert!(!info.contains("drive/0"), "{info}");

    // The bucket holds the sealed files byte for byte; the fleet decrypts them.
    let bucket = tempfile::tempdir().unwrap();
    let objects = s3.download("fleet/", bucket.path());
    assert_eq!(objects.len(), files.len() + cuts.len(), "{objects:?}");
    let plain = tempfile::tempdir().unwrap();
    let mut recorded = 0;
    let (mut recorded_plain, mut cut_plain) = (Vec::new(), Vec::new());
    for object in &objects {
        let name = object.key.rsplit('/').next().unwrap();
        let downloaded = bucket.path().join(name);
        assert!(std::fs::read(&downloaded)
            .unwrap()
            .starts_with(b"age-encryption.org/v1\n"));
        assert!(!file_contains(&downloaded, MARKER.as_bytes()), "{name}");
        let output = plain.path().join(name.trim_end_matches(".age"));
        let (ok, stderr) = age_decrypt(&identity, &downloaded, &output);
        assert!(ok, "{name}: {stderr}");
        let read = read_mcap(&output);
        let core = &read_with_mcap_core(std::slice::from_ref(&output))[0];
        // Finished and cut files are chunked and indexed: Foxglove's indexed reader reads
        // every message through the summary.
        assert_eq!(core.indexed_messages, Some(core.stream_messages), "{name}");
        if object.key.contains("/incidents/") {
            let record = (read["metadata"].as_array().unwrap().iter())
                .find(|m| m["name"] == "incident")
                .unwrap_or_else(|| panic!("{name}: no incident record: {read}"));
            assert_eq!(record["metadata"]["id"], id.as_str(), "{record}");
            assert!(read["message_count"].as_u64().unwrap() > 0);
            cut_plain.push(output);
        } else {
            recorded += read["message_count"].as_u64().unwrap();
            recorded_plain.push(output);
        }
    }
    // The sealed cut holds exactly its window, as the plain cut is checked.
    let incidents = recd.rec_json(&["incidents"]);
    let incident = (incidents.as_array().unwrap().iter())
        .find(|i| i["id"] == id.as_str())
        .unwrap();
    let window = (
        incident["start_ns"].as_u64().unwrap(),
        incident["end_ns"].as_u64().unwrap(),
    );
    let cut_topics = assert_cut_is_window(&cut_plain, &recorded_plain, window, &[]);
    assert!(
        cut_topics.values().all(|messages| !messages.is_empty()),
        "{cut_topics:?}"
    );
    let written: u64 = (recd.listed("drive")["files"].as_array().unwrap().iter())
        .filter(|f| !f["path"].as_str().unwrap().contains("/incidents/"))
        .map(|f| f["messages"].as_u64().unwrap())
        .sum();
    assert_eq!(recorded, written);

    // Nothing of it in clear on the disk: recording, finishing, the cut and the uploads.
    recd.signal_and_wait(libc::SIGTERM, Duration::from_secs(30));
    drop(recd);
    // Everything written reaches the image before it is read.
    let synced = Command::new("sync")
        .arg("-f")
        .arg(disk.path())
        .status()
        .unwrap();
    assert!(synced.success());
    drop(disk);
    assert!(
        !file_contains(&image, MARKER.as_bytes()),
        "the marker is on the raw disk in clear"
    );
}

#[test]
fn a_changed_byte_fails_decryption_at_its_chunk_and_rec_verify_names_the_file() {
    let domain = Domain::new();
    let root = tempfile::tempdir().unwrap();
    let (identity, public) = age_identity(root.path());
    let (key, signing_public) = openssl_keys(root.path(), 0o600);
    let config = format!(
        "{}\n[signing]\nkey_file = {key:?}\n\n[http]\nlisten = \"127.0.0.1:0\"\n",
        encryption(&public)
    );
    let recd = Recd::start_with(root.path(), &domain, &config, &[]);
    start_drive(&recd, "1MiB");
    script_done(marker_publisher(&domain, 120), Duration::from_secs(60));
    std::thread::sleep(Duration::from_millis(500));
    recd.rec_json(&["stop", "drive"]);
    let files = paths(&recd.listed("drive"), "files");
    assert!(files.len() >= 3, "{files:?}");
    // recd holds the key of each file it sealed, and says how many in /metrics.
    let seal_keys = || seal_keys(&recd);
    assert_eq!(seal_keys(), Some(files.len() as f64));
    let dir = files[0].parent().unwrap().to_path_buf();
    let verify = |expect_ok: bool| {
        let output = recd.rec(&[
            "verify",
            dir.to_str().unwrap(),
            "--key",
            signing_public.to_str().unwrap(),
        ]);
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
        (output.status.success() == expect_ok, text)
    };
    // Every sealed file enters the chain once it is closed.
    assert!(
        wait_until(Duration::from_secs(30), || verify(true).0),
        "{}\n{}",
        verify(true).1,
        recd.log()
    );

    // A byte flipped inside the second file's second chunk, the third file deleted.
    let altered = &files[1];
    let mut bytes = std::fs::read(altered).unwrap();
    let header_len = bytes.windows(4).position(|w| w == b"\n---").unwrap();
    let header_len = header_len
        + 1
        + bytes[header_len + 1..]
            .iter()
            .position(|&b| b == b'\n')
            .unwrap()
        + 1;
    let in_chunk_1 = header_len + 16 + 65_552 + 1000;
    bytes[in_chunk_1] ^= 0x20;
    std::fs::write(altered, bytes).unwrap();
    std::fs::remove_file(&files[2]).unwrap();
    // The deleted file's key is forgotten once retention finds it gone.
    let forgotten = (files.len() - 1) as f64;
    assert!(
        wait_until(Duration::from_secs(30), || seal_keys() == Some(forgotten)),
        "{:?}\n{}",
        seal_keys(),
        recd.log()
    );

    let plain = tempfile::tempdir().unwrap();
    let decrypted = Command::new(recd_testkit::binary("rec"))
        .args(["decrypt", "-i"])
        .arg(&identity)
        .arg("-o")
        .arg(plain.path().join("altered.mcap"))
        .arg(altered)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&decrypted.stderr);
    assert_eq!(decrypted.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("chunk 1"), "{stderr}");
    assert!(!plain.path().join("altered.mcap").exists());
    let (age_ok, _) = age_decrypt(&identity, altered, &plain.path().join("by-age.mcap"));
    assert!(!age_ok, "age decrypted an altered file");

    let (failed, text) = verify(false);
    assert!(failed, "rec verify passed: {text}");
    let name = |file: &Path| file.file_name().unwrap().to_string_lossy().into_owned();
    assert!(
        text.contains(&format!("{} altered", name(altered))),
        "{text}"
    );
    assert!(
        text.contains(&format!("{} missing", name(&files[2]))),
        "{text}"
    );
}

#[test]
fn a_bad_recipient_stops_recd_at_start_up_naming_it() {
    let work = tempfile::tempdir().unwrap();
    let (identity, public) = age_identity(work.path());
    let secret = std::fs::read_to_string(&identity)
        .unwrap()
        .lines()
        .find(|line| line.starts_with("AGE-SECRET-KEY-"))
        .unwrap()
        .to_string();
    let missing = work.path().join("no-such-recipients.txt");
    // Whoever may write the recipients file chooses who reads every sealed file.
    let writable = work.path().join("writable-recipients.txt");
    std::fs::write(&writable, format!("{public}\n")).unwrap();
    std::fs::set_permissions(&writable, PermissionsExt::from_mode(0o666)).unwrap();
    // A line that is no public key may be anything pasted there: it is not repeated.
    let pasted = work.path().join("pasted-recipients.txt");
    std::fs::write(&pasted, format!("{public}\nhunter2-fleet-password\n")).unwrap();
    std::fs::set_permissions(&pasted, PermissionsExt::from_mode(0o644)).unwrap();
    let cases = [
        (
            format!("recipients = {:?}", writable.to_str().unwrap()),
            "mode 0666",
        ),
        (
            format!("recipients = {:?}", pasted.to_str().unwrap()),
            "pasted-recipients.txt:2",
        ),
        (
            format!("recipients = [{public:?}, \"age1notakey\"]"),
            "age1notakey",
        ),
        (format!("recipients = {secret:?}"), "private key"),
        (
            format!("recipients = {:?}", missing.to_str().unwrap()),
            "no-such-recipients.txt",
        ),
        ("recipients = []".to_string(), "no recipients"),
    ];
    for (line, named) in cases {
        let config = work.path().join("recd.toml");
        std::fs::write(
            &config,
            format!(
                "socket = {:?}\ndata_dir = {:?}\nstate_dir = {:?}\n[encryption]\n{line}\n",
                work.path().join("recd.sock"),
                work.path().join("data"),
                work.path().join("state"),
            ),
        )
        .unwrap();
        let stderr = recd_refused(&config);
        assert!(stderr.contains(named), "{line}: {stderr}");
        assert!(
            !stderr.contains("AGE-SECRET-KEY-1") && !stderr.contains("hunter2"),
            "the secret is echoed: {stderr}"
        );
    }
}

/// A sealed file's key is held only while an incident can still reach the file: once it is
/// finished, pinned by nothing and older than `[encryption] key_reach`, recd forgets it
/// (`/metrics` shows the count fall to the open file's alone), and a trigger whose window
/// reaches such a file is refused naming the rule, while one within the reach is taken.
#[test]
fn keys_beyond_key_reach_are_forgotten_and_a_trigger_reaching_their_files_is_refused() {
    let domain = Domain::new();
    let root = tempfile::tempdir().unwrap();
    let (_, public) = age_identity(root.path());
    let config = format!(
        "{}key_reach = \"2s\"\n\n[http]\nlisten = \"127.0.0.1:0\"\n",
        encryption(&public)
    );
    let recd = Recd::start_with(root.path(), &domain, &config, &[]);
    start_drive(&recd, "1MiB");
    script_done(marker_publisher(&domain, 120), Duration::from_secs(60));
    let seal_keys = || seal_keys(&recd);
    // The closed files settle 2 s after their last message; keys are looked over every
    // 10 s. The open file's key stays.
    assert!(
        wait_until(Duration::from_secs(40), || seal_keys() == Some(1.0)),
        "{:?}\n{}",
        seal_keys(),
        recd.log()
    );
    let status = recd.rec_json(&["status", "drive"]);
    let directory = PathBuf::from(status[0]["directory"].as_str().unwrap());
    let sealed = (std::fs::read_dir(&directory).unwrap().flatten())
        .filter(|entry| entry.path().to_string_lossy().ends_with(".mcap.age"))
        .count();
    assert!(sealed >= 3, "{sealed} files in {}", directory.display());

    let refused = recd.rec(&["trigger", "drive", "--before", "60s"]);
    let said = String::from_utf8_lossy(&refused.stderr);
    assert!(
        !refused.status.success()
            && said.contains("no longer holds the key of drive_")
            && said.contains("key_reach (2s)"),
        "{}: {said}",
        refused.status
    );
    let taken = recd.rec(&["trigger", "drive", "--before", "1s"]);
    assert!(
        taken.status.success(),
        "{}",
        String::from_utf8_lossy(&taken.stderr)
    );
}
