use super::*;
use crate::File;
use recd_control::FileState;

fn new_upload(path: &str, priority: bool, changed_ns: i64) -> NewUpload {
    NewUpload {
        path: PathBuf::from(path),
        key: format!("car/{path}"),
        priority,
        incident: false,
        fingerprint: Fingerprint {
            bytes: 100,
            changed_ns,
        },
        metadata: BTreeMap::from([("vehicle".into(), "car".into())]),
    }
}

#[test]
fn the_queue_orders_resumes_and_survives_reopening() {
    let dir = tempfile::tempdir().unwrap();
    let data = Path::new("/data");
    {
        let catalog = Catalog::open(dir.path(), data).unwrap();
        let session = catalog
            .begin_session("drive", Path::new("/data/drive"), "{}", 1)
            .unwrap();
        for name in ["a", "b", "c"] {
            catalog
                .upsert_file(&File {
                    session,
                    path: PathBuf::from(format!("/data/drive/{name}.mcap")),
                    bytes: 100,
                    messages: 1,
                    state: FileState::Complete,
                })
                .unwrap();
        }
        assert!(catalog
            .queue_upload(&new_upload("/data/drive/a.mcap", false, 1), 10)
            .unwrap());
        assert!(catalog
            .queue_upload(&new_upload("/data/drive/b.mcap", false, 1), 11)
            .unwrap());
        assert!(catalog
            .queue_upload(&new_upload("/data/drive/c.mcap", true, 1), 12)
            .unwrap());
        // Queued already: left as it is.
        assert!(!catalog
            .queue_upload(&new_upload("/data/drive/a.mcap", true, 1), 13)
            .unwrap());
        let next = catalog.next_upload().unwrap().unwrap();
        assert_eq!(next.path, Path::new("/data/drive/c.mcap"), "priority first");
        assert_eq!(next.session, "drive");
        assert_eq!(next.metadata["vehicle"], "car");
        // b began and has a part journaled: it resumes before anything else.
        let b = Path::new("/data/drive/b.mcap");
        catalog.begin_multipart(b, "upload-1", 64).unwrap();
        let part = JournaledPart {
            number: 0,
            content_id: "<etag>".into(),
            md5: [7; 16],
            bytes: 64,
        };
        catalog.journal_part(b, &part).unwrap();
    }
    let catalog = Catalog::open(dir.path(), data).unwrap();
    let next = catalog.next_upload().unwrap().unwrap();
    assert_eq!(next.path, Path::new("/data/drive/b.mcap"));
    assert_eq!(next.state, UploadState::Uploading);
    assert_eq!(next.upload_id.as_deref(), Some("upload-1"));
    assert_eq!(next.part_size, Some(64));
    assert_eq!(next.parts.len(), 1);
    assert_eq!(next.parts[0].md5, [7; 16]);
    assert_eq!(next.sent(), 64);
    catalog
        .finish_upload(&next.path, next.fingerprint, "etag-1", 20)
        .unwrap();
    let states = catalog.upload_states().unwrap();
    assert_eq!(
        states[Path::new("/data/drive/b.mcap")],
        UploadState::Uploaded
    );
    assert_eq!(catalog.upload_queue(10).unwrap().len(), 3);
    let queue = catalog.upload_queue(0).unwrap();
    assert_eq!(
        queue.len(),
        2,
        "uploaded files beyond the limit are left out"
    );
    assert_eq!(
        queue[0].path,
        Path::new("/data/drive/c.mcap"),
        "priority first"
    );
    assert_eq!(catalog.uploaded_totals().unwrap(), (1, 100));

    // A failure counts only for the content it was queued with; a failed file is
    // queued again by hand.
    let a = Path::new("/data/drive/a.mcap");
    let stale = Fingerprint {
        bytes: 100,
        changed_ns: 99,
    };
    catalog.fail_upload(a, "changed", stale).unwrap();
    assert_eq!(
        catalog.upload(a).unwrap().unwrap().state,
        UploadState::Queued
    );
    catalog
        .fail_upload(a, "changed", new_upload("", false, 1).fingerprint)
        .unwrap();
    let failed = catalog.upload(a).unwrap().unwrap();
    assert_eq!(failed.state, UploadState::Failed);
    assert_eq!(failed.reason.as_deref(), Some("changed"));
    assert!(catalog
        .queue_upload(&new_upload("/data/drive/a.mcap", false, 2), 30)
        .unwrap());
    assert_eq!(
        catalog.upload(a).unwrap().unwrap().state,
        UploadState::Queued
    );
    // A file rewritten on purpose starts over, unless uploaded.
    catalog
        .requeue_rewritten(&next.path, new_upload("", false, 5).fingerprint)
        .unwrap();
    assert_eq!(
        catalog.upload(&next.path).unwrap().unwrap().state,
        UploadState::Uploaded
    );
}

#[test]
fn a_file_rewritten_before_its_upload_goes_up_with_its_new_size_in_its_metadata() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = Catalog::open(dir.path(), Path::new("/data")).unwrap();
    let path = Path::new("/data/drive/a.mcap");
    let mut queued = new_upload("/data/drive/a.mcap", false, 1);
    queued.fingerprint.bytes = 1_060_260;
    queued.metadata.insert("bytes".into(), "1060260".into());
    catalog.queue_upload(&queued, 10).unwrap();
    let finished = Fingerprint {
        bytes: 6446,
        changed_ns: 2,
    };
    catalog.requeue_rewritten(path, finished).unwrap();
    let upload = catalog.upload(path).unwrap().unwrap();
    assert_eq!(upload.fingerprint, finished);
    assert_eq!(upload.metadata["bytes"], "6446");
    assert_eq!(upload.metadata["vehicle"], "car", "the rest as it was");
}

#[test]
fn markers_are_counted_per_file() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = Catalog::open(dir.path(), Path::new("/data")).unwrap();
    let session = catalog
        .begin_session("drive", Path::new("/data/drive"), "{}", 1)
        .unwrap();
    let path = Path::new("/data/drive/a.mcap");
    catalog
        .upsert_file(&File {
            session,
            path: path.to_path_buf(),
            bytes: 0,
            messages: 0,
            state: FileState::Recording,
        })
        .unwrap();
    assert_eq!(catalog.markers(path).unwrap(), 0);
    catalog.note_marker(path).unwrap();
    catalog.note_marker(path).unwrap();
    assert_eq!(catalog.markers(path).unwrap(), 2);
}

#[test]
fn a_file_queued_again_while_it_uploads_is_uploaded_again() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = Catalog::open(dir.path(), Path::new("/data")).unwrap();
    let chain = "/data/drive/recd-chain.jsonl";
    let first = new_upload(chain, false, 1);
    catalog.queue_upload_again(&first, 10).unwrap();
    let job = catalog.next_upload().unwrap().unwrap();
    assert_eq!(job.fingerprint, first.fingerprint);
    assert!(job.replace, "it replaces the object it uploaded before");
    // It grew while its first content was on its way: that upload does not finish it.
    let grown = new_upload(chain, false, 2);
    catalog.queue_upload_again(&grown, 11).unwrap();
    catalog
        .finish_upload(&job.path, job.fingerprint, "etag-1", 12)
        .unwrap();
    let job = catalog.next_upload().unwrap().unwrap();
    assert_eq!(job.fingerprint, grown.fingerprint);
    assert_eq!(job.state, UploadState::Queued);
    catalog
        .finish_upload(&job.path, job.fingerprint, "etag-2", 13)
        .unwrap();
    assert_eq!(catalog.next_upload().unwrap(), None);
    // Uploaded, and queued again once it grows again.
    catalog
        .queue_upload_again(&new_upload(chain, false, 3), 14)
        .unwrap();
    assert_eq!(
        catalog
            .next_upload()
            .unwrap()
            .unwrap()
            .fingerprint
            .changed_ns,
        3
    );
}

#[test]
fn the_uploads_mode_holds_back_what_it_does_not_allow() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = Catalog::open(dir.path(), Path::new("/data")).unwrap();
    catalog
        .queue_upload(&new_upload("/data/drive/a.mcap", true, 1), 10)
        .unwrap();
    let incident = NewUpload {
        incident: true,
        ..new_upload("/data/incidents/i.mcap", false, 1)
    };
    catalog.queue_upload(&incident, 11).unwrap();
    let next = |catalog: &Catalog| catalog.next_upload().unwrap().map(|job| job.path);
    catalog
        .set_uploads_mode(recd_control::UploadsMode::None)
        .unwrap();
    assert_eq!(next(&catalog), None);
    catalog
        .set_uploads_mode(recd_control::UploadsMode::Incidents)
        .unwrap();
    assert_eq!(next(&catalog), Some(incident.path.clone()));
    catalog
        .finish_upload(&incident.path, incident.fingerprint, "<etag>", 20)
        .unwrap();
    assert_eq!(next(&catalog), None, "only the incident's file was allowed");
    catalog
        .set_uploads_mode(recd_control::UploadsMode::All)
        .unwrap();
    assert_eq!(next(&catalog), Some(PathBuf::from("/data/drive/a.mcap")));
}
