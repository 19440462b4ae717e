//! The catalog's incidents: pins, cut files, releases, and their place in the upload queue.

use std::collections::BTreeMap;

use std::collections::HashSet;
use std::path::PathBuf;

use super::*;
use crate::files::tests::file;
use crate::File;
use crate::{Fingerprint, NewUpload};
use recd_control::{FileState, FinishMode};

const S: u64 = 1_000_000_000;

fn incident(id: &str, session: SessionId, (start_s, end_s): (u64, u64)) -> NewIncident {
    NewIncident {
        id: id.into(),
        session,
        note: "hard brake".into(),
        origin: "cli".into(),
        time_ns: (start_s + 1) * S,
        window: LogWindow {
            start_ns: start_s * S,
            end_ns: end_s * S,
        },
        created_ns: 0,
        keep_until_ns: Some(1000 * S),
        release_after_upload: false,
        cut: CutState::Waiting,
        rule: None,
        topics: None,
    }
}

/// A catalog with one session of files a (0-10 s), b (10-20 s), c (20-30 s) and d
/// (open since 30 s).
fn catalog(dir: &Path) -> (Catalog, SessionId) {
    let catalog = Catalog::open(dir, Path::new("/d")).unwrap();
    let id = catalog
        .begin_session("drive", Path::new("/d/drive"), "{}", 1)
        .unwrap();
    for (name, start, end) in [
        ("a", 0, Some(10)),
        ("b", 10, Some(20)),
        ("c", 20, Some(30)),
        ("d", 30, None),
    ] {
        let path = format!("/d/drive/{name}.mcap");
        let state = if end.is_some() {
            FileState::Complete
        } else {
            FileState::Recording
        };
        catalog.upsert_file(&file(id, &path, state)).unwrap();
        catalog
            .set_file_times(Path::new(&path), Some(start * S), end.map(|e| e * S))
            .unwrap();
    }
    (catalog, id)
}

fn paths(set: &HashSet<PathBuf>) -> Vec<String> {
    let mut names: Vec<String> = set
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn an_incident_pins_exactly_the_files_its_window_overlaps_until_released_and_across_a_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let (catalog, session) = catalog(dir.path());
    assert!(catalog
        .add_incident(&incident("i1", session, (12, 22)))
        .unwrap());
    assert!(
        !catalog
            .add_incident(&incident("i1", session, (0, 1)))
            .unwrap(),
        "one per id and session"
    );
    assert_eq!(
        paths(&catalog.pinned_paths().unwrap()),
        ["b.mcap", "c.mcap"]
    );
    // A window reaching into the open file pins it too.
    catalog
        .add_incident(&incident("i2", session, (35, 40)))
        .unwrap();
    assert_eq!(
        paths(&catalog.pinned_paths().unwrap()),
        ["b.mcap", "c.mcap", "d.mcap"]
    );
    drop(catalog);
    let catalog = Catalog::open(dir.path(), Path::new("/d")).unwrap();
    let listed = catalog.incidents(Some(session)).unwrap();
    assert_eq!(
        listed.iter().map(|i| i.id.as_str()).collect::<Vec<_>>(),
        ["i2", "i1"]
    );
    assert_eq!(listed[1].pinned_files.len(), 2);
    assert_eq!(catalog.release_incidents("i2", "released", 5).unwrap(), 1);
    assert_eq!(catalog.release_incidents("i2", "released", 6).unwrap(), 0);
    assert_eq!(
        paths(&catalog.pinned_paths().unwrap()),
        ["b.mcap", "c.mcap"]
    );
    let released = catalog.incidents(Some(session)).unwrap()[0]
        .released
        .clone();
    assert_eq!(
        released,
        Some(Released {
            at_ns: 5,
            why: "released".into()
        })
    );
}

#[test]
fn cut_files_are_pinned_with_their_incident_and_left_out_of_the_sessions_ring() {
    let dir = tempfile::tempdir().unwrap();
    let (catalog, session) = catalog(dir.path());
    catalog
        .add_incident(&incident("i1", session, (12, 14)))
        .unwrap();
    let key = IncidentKey {
        id: "i1".into(),
        session,
    };
    let cut = Path::new("/d/incidents/i1_hard-brake_drive_iceoryx2.mcap");
    catalog
        .add_cut_file(&key, cut, (100, 7), window(12, 14))
        .unwrap();
    catalog.set_cut(&key, CutState::Cut, None).unwrap();
    assert_eq!(
        paths(&catalog.pinned_paths().unwrap()),
        ["b.mcap", "i1_hard-brake_drive_iceoryx2.mcap"]
    );
    assert_eq!(
        catalog.recording_files(session).unwrap().len(),
        4,
        "the cut file is not the session's recording"
    );
    assert_eq!(catalog.files(session).unwrap().len(), 5);
    let incident = catalog.incident(&key).unwrap().unwrap();
    assert_eq!((incident.cut, incident.cut_files.len()), (CutState::Cut, 1));
    assert!(catalog.incidents_to_cut().unwrap().is_empty());
    assert_eq!(catalog.incidents_owning(cut).unwrap(), ["i1"]);
    assert!(catalog.is_pinned(cut).unwrap());
    assert!(!catalog.is_pinned(Path::new("/d/drive/a.mcap")).unwrap());
}

fn window(start_s: u64, end_s: u64) -> LogWindow {
    LogWindow {
        start_ns: start_s * S,
        end_ns: end_s * S,
    }
}

#[test]
fn a_window_file_two_incidents_share_stays_pinned_until_both_are_released() {
    let dir = tempfile::tempdir().unwrap();
    let (catalog, session) = catalog(dir.path());
    let shared = Path::new("/d/drive/window.mcap");
    catalog
        .upsert_file(&file(session, "/d/drive/window.mcap", FileState::Complete))
        .unwrap();
    catalog
        .set_file_times(shared, Some(40 * S), Some(44 * S))
        .unwrap();
    let keys: Vec<IncidentKey> = ["first", "second"]
        .into_iter()
        .map(|id| IncidentKey {
            id: id.into(),
            session,
        })
        .collect();
    for (key, span) in keys.iter().zip([(40, 42), (41, 44)]) {
        let mut new = incident(&key.id, session, span);
        new.cut = CutState::Buffer;
        catalog.add_incident(&new).unwrap();
        catalog.own_file(shared, key).unwrap();
        catalog.own_file(shared, key).unwrap();
    }
    for key in &keys {
        let incident = catalog.incident(key).unwrap().unwrap();
        let own: Vec<&Path> = incident
            .cut_files
            .iter()
            .map(|f| f.path.as_path())
            .collect();
        assert_eq!(own, [shared], "{incident:?}");
    }
    assert_eq!(
        catalog.incidents_owning(shared).unwrap(),
        ["first", "second"]
    );
    assert!(
        !catalog
            .recording_files(session)
            .unwrap()
            .iter()
            .any(|f| f.path == shared),
        "an incident's own file is not in the session's ring"
    );
    catalog.release_incidents("second", "released", 5).unwrap();
    assert!(catalog.is_pinned(shared).unwrap(), "first still keeps it");
    assert!(catalog.pinned_paths().unwrap().contains(shared));
    catalog.release_incidents("first", "released", 6).unwrap();
    assert!(!catalog.is_pinned(shared).unwrap());
}

#[test]
fn an_older_catalogs_incident_files_are_owned_by_their_incident() {
    let dir = tempfile::tempdir().unwrap();
    let (catalog, session) = catalog(dir.path());
    catalog
        .add_incident(&incident("old", session, (12, 14)))
        .unwrap();
    catalog
        .upsert_file(&file(session, "/d/incidents/old.mcap", FileState::Indexed))
        .unwrap();
    // As an older recd kept it: the incident's id in the file's row.
    catalog
        .connection
        .execute(
            "UPDATE files SET incident = 'old' WHERE path = 'incidents/old.mcap'",
            [],
        )
        .unwrap();
    drop(catalog);
    let catalog = Catalog::open(dir.path(), Path::new("/d")).unwrap();
    let cut = Path::new("/d/incidents/old.mcap");
    assert_eq!(catalog.incidents_owning(cut).unwrap(), ["old"]);
    assert!(catalog.is_pinned(cut).unwrap());
    assert_eq!(catalog.recording_files(session).unwrap().len(), 4);
}

#[test]
fn pins_end_when_their_keep_is_over_or_once_their_cut_is_uploaded() {
    let dir = tempfile::tempdir().unwrap();
    let (catalog, session) = catalog(dir.path());
    catalog
        .add_incident(&incident("kept", session, (0, 5)))
        .unwrap();
    let mut uploaded = incident("sent", session, (12, 14));
    uploaded.keep_until_ns = None;
    uploaded.release_after_upload = true;
    catalog.add_incident(&uploaded).unwrap();
    let key = IncidentKey {
        id: "sent".into(),
        session,
    };
    let cut = Path::new("/d/incidents/sent_drive_iceoryx2.mcap");
    catalog
        .add_cut_file(&key, cut, (100, 7), window(12, 14))
        .unwrap();
    catalog.set_cut(&key, CutState::Cut, None).unwrap();
    assert!(catalog.release_due(999 * S).unwrap().is_empty());
    catalog
        .queue_upload(
            &NewUpload {
                path: cut.to_path_buf(),
                key: "car/incidents/sent.mcap".into(),
                priority: true,
                incident: true,
                fingerprint: Fingerprint {
                    bytes: 100,
                    changed_ns: 1,
                },
                metadata: BTreeMap::new(),
            },
            1,
        )
        .unwrap();
    assert!(
        catalog.release_due(999 * S).unwrap().is_empty(),
        "queued is not uploaded"
    );
    let queued_as = Fingerprint {
        bytes: 100,
        changed_ns: 1,
    };
    catalog.finish_upload(cut, queued_as, "etag", 2).unwrap();
    let released = catalog.release_due(999 * S).unwrap();
    assert_eq!(released, [(key, "uploaded")]);
    let released = catalog.release_due(1000 * S).unwrap();
    assert_eq!(released.len(), 1);
    assert_eq!((released[0].0.id.as_str(), released[0].1), ("kept", "keep"));
    assert!(catalog.pinned_paths().unwrap().is_empty());
}

#[test]
fn max_age_finds_the_files_whose_newest_message_is_older() {
    let dir = tempfile::tempdir().unwrap();
    let (catalog, session) = catalog(dir.path());
    let old: Vec<String> = (catalog
        .files_ended_before(session, 20 * S + 1)
        .unwrap()
        .iter())
    .map(|f| f.path.file_name().unwrap().to_string_lossy().into_owned())
    .collect();
    assert_eq!(old, ["a.mcap", "b.mcap"], "the open file has no end yet");
}

fn upload(path: &str) -> NewUpload {
    NewUpload {
        path: PathBuf::from(path),
        key: format!("car{path}"),
        priority: true,
        incident: false,
        fingerprint: Fingerprint {
            bytes: 100,
            changed_ns: 1,
        },
        metadata: BTreeMap::new(),
    }
}

#[test]
fn an_incidents_cut_file_goes_before_priority_files_queued_earlier() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = Catalog::open(dir.path(), Path::new("/data")).unwrap();
    let session = catalog
        .begin_session("drive", Path::new("/data/drive"), "{}", 1)
        .unwrap();
    for name in ["drive/marked", "incidents/cut"] {
        catalog
            .upsert_file(&File {
                session,
                path: PathBuf::from(format!("/data/{name}.mcap")),
                bytes: 100,
                messages: 1,
                state: FileState::Complete,
            })
            .unwrap();
    }
    let marked = upload("/data/drive/marked.mcap");
    catalog.queue_upload(&marked, 10).unwrap();
    let mut cut = upload("/data/incidents/cut.mcap");
    cut.incident = true;
    catalog.queue_upload(&cut, 20).unwrap();
    let next = catalog.next_upload().unwrap().unwrap();
    assert_eq!(next.path, Path::new("/data/incidents/cut.mcap"));
    assert!(next.priority);
}

#[test]
fn a_rule_incident_keeps_what_fired_it() {
    let dir = tempfile::tempdir().unwrap();
    let (catalog, session) = catalog(dir.path());
    let firing = recd_control::RuleFiring {
        rule: "hard_brake".into(),
        topic: "/vehicle/status".into(),
        sample_ns: 6 * S,
        values: BTreeMap::from([("msg.accel.x".to_string(), serde_json::json!(-6.5))]),
    };
    let mut new = incident("rule", session, (5, 7));
    new.origin = "rule".into();
    new.rule = Some(firing.clone());
    catalog.add_incident(&new).unwrap();
    catalog
        .add_incident(&incident("plain", session, (1, 2)))
        .unwrap();
    let key = |id: &str| IncidentKey {
        id: id.into(),
        session,
    };
    let kept = catalog.incident(&key("rule")).unwrap().unwrap();
    assert_eq!(kept.rule, Some(firing));
    assert_eq!(catalog.incident(&key("plain")).unwrap().unwrap().rule, None);
}

#[test]
fn an_incident_keeps_the_topics_its_cut_keeps() {
    let dir = tempfile::tempdir().unwrap();
    let (catalog, session) = catalog(dir.path());
    let mut chosen = incident("chosen", session, (5, 7));
    chosen.topics = Some(vec!["/camera/*".into(), "/imu".into()]);
    catalog.add_incident(&chosen).unwrap();
    catalog
        .add_incident(&incident("whole", session, (1, 2)))
        .unwrap();
    let key = |id: &str| IncidentKey {
        id: id.into(),
        session,
    };
    let kept = catalog.incident(&key("chosen")).unwrap().unwrap();
    assert_eq!(kept.topics, chosen.topics);
    let whole = catalog.incident(&key("whole")).unwrap().unwrap();
    assert_eq!(whole.topics, None, "every topic");
}

#[test]
fn settled_files_are_old_enough_finished_and_pinned_by_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let (catalog, session) = catalog(dir.path());
    let settled = |before_s: u64| {
        (["a", "b", "c", "d"].into_iter())
            .map(|name| format!("{name}.mcap"))
            .filter(|name| {
                let path = Path::new("/d/drive").join(name);
                catalog.is_settled_before(&path, before_s * S).unwrap()
            })
            .collect::<Vec<_>>()
    };
    // d is being recorded; c ends at 30 s, not before it.
    assert_eq!(settled(30), ["a.mcap", "b.mcap"]);
    assert_eq!(settled(15), ["a.mcap"]);
    // Waiting to be finished: finishing reads it again.
    catalog
        .set_finish(Path::new("/d/drive/a.mcap"), Some(FinishMode::Index), 1)
        .unwrap();
    assert_eq!(settled(30), ["b.mcap"]);
    catalog
        .set_finish(Path::new("/d/drive/a.mcap"), None, 2)
        .unwrap();
    // Pinned by an incident until it is released.
    catalog
        .add_incident(&incident("i1", session, (12, 14)))
        .unwrap();
    assert_eq!(settled(1000), ["a.mcap", "c.mcap"]);
    catalog.release_incidents("i1", "released", 3).unwrap();
    assert_eq!(settled(1000), ["a.mcap", "b.mcap", "c.mcap"]);
    // Gone from the disk, or never known: nothing to keep a key for, nor to read.
    catalog
        .set_file_state(Path::new("/d/drive/a.mcap"), FileState::Deleted)
        .unwrap();
    assert_eq!(settled(1000), ["b.mcap", "c.mcap"]);
    assert!(!catalog
        .is_settled_before(Path::new("/d/drive/x.mcap"), 1000 * S)
        .unwrap());
}
