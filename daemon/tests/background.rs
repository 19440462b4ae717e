//! Background work on a busy machine (docs/operations.md, "Background work on a busy
//! vehicle"): while a recording loses samples steadily (a 1 MB camera at 30 fps on
//! iceoryx2's 2-deep queue beside two CPU hogs: its writer falls behind about once a
//! second), files are still finished and uploaded to a real
//! SeaweedFS as the recording goes on, and the recording loses no more in the moments
//! background work runs than in those it keeps off. A file waiting past `max_delay` is
//! warned of, and one retention deletes before it was finished or uploaded is counted.

use std::time::{Duration, Instant};

use recd_testkit::{finish_load, wait_until, Domain, Hogs, Recd, RecdLoad, SeaweedFs};
use serde_json::Value;

/// How long the busy recording runs.
const RECORDING: Duration = Duration::from_secs(60);
/// The pace files must keep at least: one finished and one uploaded per this much
/// recording (files of 32 MiB close every second or so; finishing and uploads run at
/// least 1 window of 5 s in 6 even when they are shown to cost the recording).
const PACE: Duration = Duration::from_secs(15);

/// recd uploading to a SeaweedFS of its own.
struct Rig {
    // recd first: it stops before the store it uploads to.
    recd: Recd,
    domain: Domain,
    _s3: SeaweedFs,
    _root: tempfile::TempDir,
}

impl Rig {
    /// recd with `top_level` lines, `[upload]` (with `upload` lines) and `recording` lines
    /// in `[recording]`.
    fn start(top_level: &str, upload: &str, recording: &str) -> Self {
        let s3 = SeaweedFs::start("recordings");
        let root = tempfile::tempdir().unwrap();
        let credentials = root.path().join("credentials");
        s3.credentials_file(&credentials);
        let domain = Domain::new();
        let config = format!(
            "{top_level}\n[upload]\nendpoint = {:?}\nbucket = {:?}\ncredentials_file = {credentials:?}\n{upload}\n",
            s3.endpoint, s3.bucket,
        );
        let recd = Recd::start_configured(root.path(), &domain, &config, recording, &[]);
        Self {
            recd,
            domain,
            _s3: s3,
            _root: root,
        }
    }
}

/// One look at the session: whether background work was on, and its losses so far.
struct Look {
    on: bool,
    spilled: u64,
    lost: u64,
}

fn look(status: &Value) -> Option<Look> {
    let session = status.as_array()?.first()?;
    let spilled = (session["receive_threads"].as_array()?.iter())
        .map(|t| t["spilled"].as_u64().unwrap_or(0))
        .sum();
    let lost = (session["topics"].as_array()?.iter())
        .map(|t| t["dropped"].as_u64().unwrap_or(0) + t["lost"].as_u64().unwrap_or(0))
        .sum();
    Some(Look {
        on: session["backlog"]["background_on"].as_bool()?,
        spilled,
        lost,
    })
}

/// Files of the catalog's session `name` in `state`.
fn files_in_state(recd: &Recd, name: &str, state: &str) -> usize {
    (recd.listed(name)["files"].as_array().into_iter().flatten())
        .filter(|f| f["state"] == state)
        .count()
}

#[test]
fn files_are_finished_and_uploaded_while_a_busy_recording_loses_samples_and_cost_it_nothing() {
    let rig = Rig::start(
        "",
        "",
        "finish = \"zstd\"\nfinish_while_recording = true\nmax_file_size = \"32MiB\"",
    );
    let (domain, recd) = (&rig.domain, &rig.recd);
    recd.rec_json(&["start", "--name", "busy", "--topic", "busy/*"]);
    let hogs = Hogs::cpu(2);
    let load = domain.load(
        &RecdLoad::new("busy/")
            .cameras(1)
            .frame_size(1_000_000)
            .fps(30)
            .buffer(2)
            .duration(RECORDING)
            .wait_subscribers(1),
    );
    // Each second: the losses since the last look, filed under whether background work
    // was on at both looks (a second that straddles a change is left out).
    let (mut with, mut without) = (Vec::new(), Vec::new());
    let mut last: Option<Look> = None;
    let started = Instant::now();
    while started.elapsed() < RECORDING - Duration::from_secs(5) {
        std::thread::sleep(Duration::from_secs(1));
        let Some(now) = look(&recd.rec_json(&["status", "busy"])) else {
            continue;
        };
        if let Some(before) = &last {
            let losses = (now.spilled - before.spilled) + (now.lost - before.lost);
            match (before.on, now.on) {
                (true, true) => with.push(losses),
                (false, false) => without.push(losses),
                _ => {}
            }
        }
        last = Some(now);
    }
    let recording = started.elapsed();
    let finished = files_in_state(recd, "busy", "indexed");
    let uploaded = recd.rec_json(&["upload", "--status"])["uploaded_files"]
        .as_u64()
        .unwrap_or(0);
    let status = recd.rec(&["status"]);
    drop(hogs);
    finish_load(load);
    recd.rec_json(&["stop", "busy"]);
    // Medians, as the policy judges: one burst in one second is not a cost.
    let median = |losses: &[u64]| {
        let mut sorted = losses.to_vec();
        sorted.sort_unstable();
        sorted.get(sorted.len() / 2).copied().unwrap_or(0) as f64
    };
    println!(
        "{:.0} s beside 2 CPU hogs: {finished} files finished, {uploaded} uploaded while recording; \
         median losses per second with background work {:.1} ({} s), without {:.1} ({} s)\n{}",
        recording.as_secs_f64(),
        median(&with),
        with.len(),
        median(&without),
        without.len(),
        String::from_utf8_lossy(&status.stdout)
    );
    let at_least = (recording.as_secs_f64() / PACE.as_secs_f64()) as usize;
    assert!(
        finished >= at_least && uploaded >= at_least as u64,
        "{finished} finished, {uploaded} uploaded in {recording:?}: fewer than one per {PACE:?}\n{}",
        recd.log()
    );
    // Where the recording lost while background work kept off, it may lose as much while
    // it runs, not clearly more (the policy's own margin: 1.5 times, plus a little).
    if without.len() >= 3 {
        let allowed = median(&without) * 1.5 + 2.0;
        assert!(
            median(&with) <= allowed,
            "the recording lost {:.1} a second with background work, {:.1} without\n{}",
            median(&with),
            median(&without),
            recd.log()
        );
    }
    assert!(
        String::from_utf8_lossy(&status.stdout).contains("background work: "),
        "{}",
        String::from_utf8_lossy(&status.stdout)
    );
}

#[test]
fn a_file_waiting_past_max_delay_is_warned_of_and_one_deleted_before_its_turn_is_counted() {
    // Finishing waits while the session records, uploads wait for finishing, and
    // retention keeps 40 MiB: the oldest files go before either got to them.
    let rig = Rig::start(
        "max_total_size = \"40MiB\"",
        "max_delay = \"2s\"",
        "finish = \"zstd\"\nmax_file_size = \"8MiB\"",
    );
    let (domain, recd) = (&rig.domain, &rig.recd);
    recd.rec_json(&["start", "--name", "parked", "--topic", "parked/*"]);
    let load = domain.load(
        &RecdLoad::new("parked/")
            .cameras(1)
            .frame_size(1_000_000)
            .fps(30)
            .count(90)
            .duration(Duration::from_secs(30))
            .wait_subscribers(1),
    );
    finish_load(load);
    let mut backlog = Value::Null;
    // Files keep being deleted while the load runs, so the oldest left may be young for
    // a moment after the warning; once the load ended, the files left age past 2 s.
    let counted = wait_until(Duration::from_secs(20), || {
        backlog = recd.rec_json(&["status", "parked"])[0]["backlog"].clone();
        backlog["deleted_unfinished"].as_u64() >= Some(1)
            && backlog["deleted_unuploaded"].as_u64() >= Some(1)
            && backlog["finish_oldest_s"].as_f64() > Some(2.0)
            && backlog["upload_oldest_s"].as_f64() > Some(2.0)
            && recd.log().contains("more than max_delay")
    });
    assert!(counted, "{backlog:#}\n{}", recd.log());
    let log = recd.log();
    assert!(
        log.contains("deleted before it was finished or uploaded"),
        "{log}"
    );
    let warned = (log.lines())
        .find(|line| line.contains("more than max_delay"))
        .unwrap();
    assert!(
        warned.contains("WARN") && warned.contains("session=parked") && warned.contains("2s"),
        "{warned}"
    );
    // The deleted file's upload says why it never happened.
    let uploads = recd.rec_json(&["upload", "--status"]);
    let gone = (uploads["files"].as_array().unwrap().iter())
        .find(|f| f["reason"] == "deleted by retention before it was uploaded");
    assert!(gone.is_some_and(|f| f["state"] == "failed"), "{uploads:#}");
    let text = String::from_utf8_lossy(&recd.rec(&["status"]).stdout).into_owned();
    assert!(
        text.contains("deleted by retention before finished"),
        "{text}"
    );

    // Once the session stops, finishing and uploads catch up, and the log says so.
    recd.rec_json(&["stop", "parked"]);
    let caught_up = wait_until(Duration::from_secs(60), || {
        let log = recd.log();
        log.contains("no file waits longer than max_delay to be finished")
            && log.contains("no file waits longer than max_delay to be uploaded")
    });
    assert!(caught_up, "{}", recd.log());
}
