//! recd's web page in a real browser (Debian's chromium, headless, driven by
//! `tests/python/web_page.py` through Playwright) against the real recd, with an iceoryx2
//! publisher of the Python bindings: a preset started from the page shows its card and its
//! topics at once, a stall turns its row red, a page without the token is refused (401) on
//! Mark and Stop, and the page with it marks, triggers (the session is on disk: an incident
//! of origin `page`, which the page's incident list then shows) and stops. The files, the
//! catalog's incidents and recd's log then hold exactly what the page did.

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use recd_testkit::{recorded_queue_depth, wait_bounded, wait_until, Domain, Recd, Script};
use serde_json::Value;

const TOKEN: &str = "page-token-0123456789abcdef";
const MARK: &str = "from-the-browser";
const REFUSED_MARK: &str = "no-token-mark";

/// The markers of an MCAP file, each record read in order (not only the summary's index),
/// and the messages per topic.
fn markers_and_messages(path: &Path) -> (Vec<BTreeMap<String, String>>, BTreeMap<String, u64>) {
    let bytes = std::fs::read(path).unwrap();
    let mut markers = Vec::new();
    for record in mcap::read::LinearReader::new(&bytes).unwrap() {
        if let mcap::records::Record::Metadata(m) = record.unwrap() {
            if m.name == "marker" {
                markers.push(m.metadata);
            }
        }
    }
    // The summary indexes the same ones.
    let summary = mcap::Summary::read(&bytes).unwrap().expect("a summary");
    let indexed = (summary.metadata_indexes.iter())
        .filter(|i| i.name == "marker")
        .map(|i| mcap::read::metadata(&bytes, i).unwrap().metadata)
        .collect::<Vec<_>>();
    assert_eq!(
        indexed,
        markers,
        "{}: summary and records differ",
        path.display()
    );
    let mut messages = BTreeMap::new();
    for message in mcap::MessageStream::new(&bytes).unwrap() {
        *messages
            .entry(message.unwrap().channel.topic.clone())
            .or_default() += 1;
    }
    (markers, messages)
}

#[test]
fn the_page_starts_shows_a_stall_refuses_without_the_token_marks_and_stops() {
    let began = Instant::now();
    let domain = Domain::new();
    let root = tempfile::tempdir().unwrap();
    let token = root.path().join("http-token");
    std::fs::write(&token, format!("{TOKEN}\n")).unwrap();
    std::fs::set_permissions(&token, std::fs::Permissions::from_mode(0o600)).unwrap();
    let recd = Recd::start_with(
        root.path(),
        &domain,
        &format!(
            "[http]\nlisten = \"127.0.0.1:0\"\ntoken_file = {token:?}\nallow_control = true\n\n\
             [[preset]]\nname = \"drive\"\nexpect = [\"imu:max_gap=300ms\"]\n"
        ),
        &[],
    );
    let address = recd.http_address();

    // gps and imu at 50 Hz from when the session subscribes; imu falls silent 4 s in, to
    // the end. 15 s covers the browser's walk (about 10 s from the click).
    let publisher = Script::spawn(
        "shm_health.py",
        &[
            "--prefix",
            &domain.prefix,
            "--services",
            "gps,imu",
            "--rate",
            "50",
            "--duration",
            "15",
            "--linger",
            "0",
            "--wait",
            "40",
            "--silence",
            "imu:4:120",
            // The queue depth an integrator configures for a recorded service (iceoryx2's
            // 2 is found full by a pass one period late, which is not this test's point).
            "--buffer",
            "16",
        ],
    );

    let browser = Command::new(recd_testkit::python())
        .arg(recd_testkit::python_file("web_page.py"))
        .args(["--url", &format!("http://{address}")])
        .args([
            "--token",
            TOKEN,
            "--session",
            "drive",
            "--topics",
            "gps,imu",
        ])
        .args(["--stall-topic", "imu", "--mark-text", MARK])
        .args(["--refused-mark-text", REFUSED_MARK])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("web_page.py starts");
    let output = wait_bounded(browser, Duration::from_secs(60));
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    eprintln!("web_page.py: {stdout}");
    assert!(
        output.status.success(),
        "web_page.py failed ({}): {stderr}\n{stdout}\nrecd log:\n{}",
        output.status,
        recd.log()
    );
    let seen: Value = serde_json::from_str(stdout.lines().last().expect("a JSON line"))
        .unwrap_or_else(|e| panic!("web_page.py printed no JSON ({e}): {stdout}"));
    assert_eq!(seen["ok"], true, "{seen}");
    let timings = &seen["timings_ms"];
    assert!(
        timings["click_to_card"].as_f64().unwrap() <= 2000.0,
        "{seen}"
    );
    for topic in ["gps", "imu"] {
        assert!(
            timings[format!("card_to_row:{topic}")].as_f64().unwrap() <= 2000.0,
            "{seen}"
        );
    }
    assert_eq!(seen["states"]["stalled_cell"]["color"], "rgb(207, 34, 46)");
    for refused in ["mark:401", "stop:401"] {
        let text = seen["messages"][refused].as_str().unwrap();
        assert!(
            text.starts_with("401: ") && text.contains("token"),
            "{seen}"
        );
    }
    assert_eq!(seen["messages"]["mark:200"], "Marked drive");
    let shown = seen["messages"]["trigger:200"].as_str().unwrap();
    let id = (shown.strip_prefix("Triggered drive: incident "))
        .unwrap_or_else(|| panic!("{seen}"))
        .to_string();
    let row = &seen["states"]["incident_row"];
    assert_eq!(row["i-id"], id.as_str(), "{seen}");
    assert_eq!(row["i-session"], "drive", "{seen}");
    assert!(
        row["i-note"]
            .as_str()
            .unwrap()
            .starts_with("web page (127.0.0.1:"),
        "{seen}"
    );
    assert_eq!(seen["messages"]["stop:200"], "Stopped drive");

    // The catalog holds the page's incident, of origin page; its window (the default 30 s
    // before the click, so from the start) is cut once written.
    let mut incidents = Value::Null;
    let cut = wait_until(Duration::from_secs(30), || {
        incidents = recd.rec_json(&["incidents", "drive"]);
        incidents[0]["cut"] == "cut"
    });
    assert!(cut, "{incidents}");
    assert_eq!(incidents.as_array().unwrap().len(), 1, "{incidents}");
    assert_eq!(incidents[0]["id"], id.as_str(), "{incidents}");
    assert_eq!(incidents[0]["origin"], "page", "{incidents}");
    let cut_files: Vec<PathBuf> = (incidents[0]["cut_files"].as_array().unwrap().iter())
        .map(|f| PathBuf::from(f["path"].as_str().unwrap()))
        .collect();
    assert!(!cut_files.is_empty(), "{incidents}");
    let cut_markers: Vec<_> = (cut_files.iter())
        .flat_map(|file| markers_and_messages(file).0)
        .collect();
    assert_eq!(
        (cut_markers.iter())
            .map(|m| m["text"].as_str())
            .collect::<Vec<_>>(),
        [MARK],
        "the mark came before the click: the cut holds it"
    );

    // The catalog has it stopped, with its recording file (and the incident's own).
    let listed = recd.listed("drive");
    assert_eq!(listed["state"], "stopped", "{listed}");
    let files: Vec<PathBuf> = (listed["files"].as_array().unwrap().iter())
        .map(|f| PathBuf::from(f["path"].as_str().unwrap()))
        .filter(|path| !cut_files.contains(path))
        .collect();
    assert!(!files.is_empty(), "{listed}");
    for topic in ["gps", "imu"] {
        assert_eq!(recorded_queue_depth(&files[0], topic), 16, "{topic}");
    }

    // Exactly one marker, the one sent with the token; and both topics recorded, imu less
    // (silent from 4 s on).
    let mut markers = Vec::new();
    let mut messages: BTreeMap<String, u64> = BTreeMap::new();
    for file in &files {
        let (found, counted) = markers_and_messages(file);
        markers.extend(found);
        for (topic, n) in counted {
            *messages.entry(topic).or_default() += n;
        }
    }
    let texts: Vec<&str> = markers.iter().map(|m| m["text"].as_str()).collect();
    assert_eq!(texts, [MARK], "{markers:?}");
    let gps = messages.get("gps").copied().unwrap_or(0);
    let imu = messages.get("imu").copied().unwrap_or(0);
    assert!(imu >= 150 && gps > imu, "{messages:?}");

    // Every action is in recd's log with the client's address: start, mark and stop done;
    // mark and stop refused (401); the token nowhere.
    let log = recd.log();
    let lines = |what: &str| -> Vec<&str> { log.lines().filter(|l| l.contains(what)).collect() };
    let done = lines("HTTP control done");
    assert_eq!(done.len(), 4, "start, mark, trigger and stop: {done:#?}");
    for (line, action) in done.iter().zip(["start", "mark", "trigger", "stop"]) {
        assert!(
            line.contains("client=127.0.0.1:") && line.contains(&format!("action=\"{action}\"")),
            "{line}"
        );
    }
    let refused = lines("HTTP control refused");
    assert_eq!(refused.len(), 2, "mark and stop: {refused:#?}");
    for (line, action) in refused.iter().zip(["mark", "stop"]) {
        assert!(
            line.contains("client=127.0.0.1:")
                && line.contains("status=401")
                && line.contains(&format!("action=\"{action}\"")),
            "{line}"
        );
    }
    assert!(!log.contains(TOKEN), "the token never reaches the log");

    let published = publisher.finish(Duration::from_secs(30));
    assert_eq!(published.done["matched"], true, "{}", published.done);
    eprintln!("http_page: {:.1} s", began.elapsed().as_secs_f64());
}
