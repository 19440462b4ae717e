use super::*;
use crate::entry::sha256;
use crate::key::SigningKey;
use crate::writer::{ChainWriter, NewEntry};
use base64::Engine;

/// Another key, as a forger would sign with.
const OTHER: &str = "-----BEGIN PRIVATE KEY-----\nMC4CAQAwBQYDK2VwBCIEIKYOOxlFEl5qWLwLtvF4DTj37pkJscSTGjWikQiRxqzN\n-----END PRIVATE KEY-----\n";

fn key() -> SigningKey {
    SigningKey::from_pem(crate::key::tests::PRIVATE, "test").unwrap()
}

fn public() -> PublicKey {
    PublicKey::from_pem(crate::key::tests::PUBLIC, "test").unwrap()
}

/// Writes `name` in `dir` and enters it in the chain as `kind`.
fn record(chain: &mut ChainWriter, key: &SigningKey, dir: &Path, name: &str, kind: Kind) {
    let content = format!("the bytes of {name} as {kind}");
    let path = dir.join(name);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, &content).unwrap();
    chain
        .append(
            key,
            NewEntry {
                kind,
                file: name.into(),
                bytes: content.len() as u64,
                sha256: sha256(content.as_bytes()),
                time_ns: 42,
            },
        )
        .unwrap();
}

/// A session of three recorded files, the first finished since.
fn session() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let key = key();
    let mut chain = ChainWriter::open(dir.path(), &key, None).unwrap();
    for name in ["s_0000.mcap", "s_0001.mcap", "s_0002.mcap.age"] {
        record(&mut chain, &key, dir.path(), name, Kind::Recorded);
    }
    record(&mut chain, &key, dir.path(), "s_0000.mcap", Kind::Finished);
    dir
}

fn states(report: &Report) -> Vec<(&str, FileState)> {
    report
        .files
        .iter()
        .map(|f| (f.file.as_str(), f.state))
        .collect()
}

fn chain_lines(dir: &Path) -> Vec<String> {
    std::fs::read_to_string(dir.join(CHAIN_FILE))
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect()
}

fn write_lines(dir: &Path, lines: &[String]) {
    std::fs::write(dir.join(CHAIN_FILE), lines.join("\n") + "\n").unwrap();
}

#[test]
fn an_untouched_session_verifies_and_a_finished_file_replaced_its_recording() {
    let dir = session();
    let report = verify(dir.path(), Some(&public())).unwrap();
    assert!(report.is_good(), "{report:?}");
    assert_eq!(report.entries, 4);
    assert_eq!(
        report.signatures,
        Signatures::Checked {
            key: public().fingerprint()
        }
    );
    assert_eq!(
        states(&report),
        [
            ("s_0000.mcap", FileState::Intact),
            ("s_0001.mcap", FileState::Intact),
            ("s_0002.mcap.age", FileState::Intact),
        ]
    );
    assert_eq!(report.files[0].kind, Some(Kind::Finished));
    assert_eq!(report.files[0].replaced, [Kind::Recorded]);
}

#[test]
fn altered_missing_and_unlisted_files_are_named() {
    let dir = session();
    let altered = dir.path().join("s_0001.mcap");
    let mut bytes = std::fs::read(&altered).unwrap();
    bytes[3] ^= 1;
    std::fs::write(&altered, bytes).unwrap();
    std::fs::remove_file(dir.path().join("s_0002.mcap.age")).unwrap();
    std::fs::write(dir.path().join("planted.mcap"), b"x").unwrap();
    std::fs::write(dir.path().join(".s_0000.mcap.finishing"), b"x").unwrap();
    let report = verify(dir.path(), Some(&public())).unwrap();
    assert!(report.problems.is_empty(), "{report:?}");
    assert!(!report.is_good());
    assert_eq!(
        states(&report),
        [
            ("s_0000.mcap", FileState::Intact),
            ("s_0001.mcap", FileState::Altered),
            ("s_0002.mcap.age", FileState::Missing),
            ("planted.mcap", FileState::Unlisted),
        ]
    );
}

#[test]
fn a_file_deleted_by_recd_is_told_from_a_missing_one() {
    let dir = session();
    let key = key();
    let mut chain = ChainWriter::open(dir.path(), &key, None).unwrap();
    std::fs::remove_file(dir.path().join("s_0001.mcap")).unwrap();
    chain
        .append(
            &key,
            NewEntry {
                kind: Kind::Deleted,
                file: "s_0001.mcap".into(),
                bytes: 0,
                sha256: [0; 32],
                time_ns: 43,
            },
        )
        .unwrap();
    let report = verify(dir.path(), Some(&public())).unwrap();
    assert!(report.is_good(), "{report:?}");
    assert_eq!(report.files[1].state, FileState::Deleted);
}

/// Enters a deletion of `name` (`kind`: deleted or offloaded) in `dir`'s chain.
fn delete(dir: &Path, name: &str, kind: Kind) {
    let mut chain = ChainWriter::open(dir, &key(), None).unwrap();
    chain
        .append(
            &key(),
            NewEntry {
                kind,
                file: name.into(),
                bytes: 0,
                sha256: [0; 32],
                time_ns: 44,
            },
        )
        .unwrap();
}

#[test]
fn a_file_offloaded_after_upload_is_good_on_the_vehicle_and_in_the_bucket() {
    let vehicle = session();
    let bucket = tempfile::tempdir().unwrap();
    for name in ["s_0000.mcap", "s_0001.mcap", "s_0002.mcap.age"] {
        std::fs::copy(vehicle.path().join(name), bucket.path().join(name)).unwrap();
    }
    std::fs::remove_file(vehicle.path().join("s_0000.mcap")).unwrap();
    delete(vehicle.path(), "s_0000.mcap", Kind::Offloaded);
    std::fs::remove_file(vehicle.path().join("s_0001.mcap")).unwrap();
    delete(vehicle.path(), "s_0001.mcap", Kind::Deleted);
    std::fs::copy(
        vehicle.path().join(CHAIN_FILE),
        bucket.path().join(CHAIN_FILE),
    )
    .unwrap();

    let on_vehicle = verify(vehicle.path(), Some(&public())).unwrap();
    assert!(on_vehicle.is_good(), "{on_vehicle:?}");
    assert_eq!(
        states(&on_vehicle),
        [
            ("s_0000.mcap", FileState::Offloaded),
            ("s_0001.mcap", FileState::Deleted),
            ("s_0002.mcap.age", FileState::Intact),
        ]
    );
    // The bucket holds the files as they were before recd deleted them on the vehicle.
    let in_bucket = verify(bucket.path(), Some(&public())).unwrap();
    assert!(in_bucket.is_good(), "{in_bucket:?}");
    assert!(states(&in_bucket)
        .iter()
        .all(|(_, state)| *state == FileState::Intact));
    assert_eq!(in_bucket.files[0].kind, Some(Kind::Offloaded));
    assert_eq!(
        in_bucket.files[0].replaced,
        [Kind::Recorded, Kind::Finished],
        "the finished bytes are the ones offloaded"
    );

    // A copy whose bytes are not those the deletion replaced is altered.
    std::fs::write(bucket.path().join("s_0000.mcap"), b"other bytes").unwrap();
    let altered = verify(bucket.path(), Some(&public())).unwrap();
    assert_eq!(altered.files[0].state, FileState::Altered);
}

#[test]
fn a_cut_file_is_found_beside_the_session_or_in_the_data_directory() {
    let data = tempfile::tempdir().unwrap();
    let session = data.path().join("drive");
    std::fs::create_dir(&session).unwrap();
    let key = key();
    let mut chain = ChainWriter::open(&session, &key, None).unwrap();
    record(
        &mut chain,
        &key,
        &session,
        "drive_0000.mcap",
        Kind::Recorded,
    );
    // Written where recd keeps cuts (the data directory's incidents/), entered as the
    // bucket names it.
    let content = b"the cut";
    std::fs::create_dir(data.path().join("incidents")).unwrap();
    std::fs::write(data.path().join("incidents/x_drive_iceoryx2.mcap"), content).unwrap();
    chain
        .append(
            &key,
            NewEntry {
                kind: Kind::Cut,
                file: "incidents/x_drive_iceoryx2.mcap".into(),
                bytes: content.len() as u64,
                sha256: sha256(content),
                time_ns: 44,
            },
        )
        .unwrap();
    let report = verify(&session, Some(&public())).unwrap();
    assert!(report.is_good(), "{report:?}");
    // As downloaded from the bucket: the cut under the session's prefix.
    std::fs::create_dir(session.join("incidents")).unwrap();
    std::fs::rename(
        data.path().join("incidents/x_drive_iceoryx2.mcap"),
        session.join("incidents/x_drive_iceoryx2.mcap"),
    )
    .unwrap();
    let report = verify(&session, Some(&public())).unwrap();
    assert!(report.is_good(), "{report:?}");
    assert_eq!(report.files[1].kind, Some(Kind::Cut));
}

#[test]
fn a_forged_entry_fails_its_signature_and_an_edited_one_its_digest() {
    let dir = session();
    let lines = chain_lines(dir.path());
    // The last entry rewritten to match an altered file, its digest made anew and signed
    // with another key: links hold, the signature does not.
    let mut forged: Entry = serde_json::from_str(&lines[3]).unwrap();
    forged.sha256 = hex(&[5; 32]);
    let digest = forged.compute_digest();
    forged.digest = hex(&digest);
    let other = SigningKey::from_pem(OTHER, "other").unwrap();
    forged.signature = base64::engine::general_purpose::STANDARD.encode(other.sign(&digest));
    let mut edited = lines.clone();
    edited[3] = forged.to_line();
    write_lines(dir.path(), &edited);
    let report = verify(dir.path(), Some(&public())).unwrap();
    assert_eq!(report.problems, [ChainProblem::BadSignature { line: 4 }]);
    assert!(!report.is_good());
    // Without the key only the file's digest gives it away.
    let report = verify(dir.path(), None).unwrap();
    assert_eq!(report.signatures, Signatures::NotChecked);
    assert!(report.problems.is_empty());
    assert_eq!(report.files[0].state, FileState::Altered);

    // An entry edited without making its digest anew.
    let mut entry: Entry = serde_json::from_str(&lines[1]).unwrap();
    entry.bytes += 1;
    let mut edited = lines.clone();
    edited[1] = entry.to_line();
    write_lines(dir.path(), &edited);
    let report = verify(dir.path(), None).unwrap();
    assert_eq!(report.problems, [ChainProblem::AlteredEntry { line: 2 }]);
}

#[test]
fn a_digest_field_that_is_not_64_lowercase_hex_digits_is_named() {
    let dir = session();
    let lines = chain_lines(dir.path());
    // "replaces -" is how the encoding writes no value: `"replaces": "-"` added to an
    // entry that replaces nothing leaves its digest and signature as they were.
    let mut dashed: Entry = serde_json::from_str(&lines[1]).unwrap();
    dashed.replaces = Some("-".into());
    assert_eq!(hex(&dashed.compute_digest()), dashed.digest);
    // A file digest in capitals, digest and signature made anew with the key.
    let mut capitals: Entry = serde_json::from_str(&lines[2]).unwrap();
    capitals.sha256 = capitals.sha256.to_uppercase();
    let digest = capitals.compute_digest();
    capitals.digest = hex(&digest);
    capitals.signature = base64::engine::general_purpose::STANDARD.encode(key().sign(&digest));
    let mut edited = lines.clone();
    edited[1] = dashed.to_line();
    edited[2] = capitals.to_line();
    write_lines(dir.path(), &edited);
    let report = verify(dir.path(), Some(&public())).unwrap();
    let unreadable: Vec<(usize, &str)> = (report.problems.iter())
        .filter_map(|problem| match problem {
            ChainProblem::Unreadable { line, reason } => Some((*line, reason.as_str())),
            _ => None,
        })
        .collect();
    assert_eq!(unreadable.len(), 2, "{:?}", report.problems);
    assert_eq!(unreadable[0].0, 2);
    assert!(unreadable[0].1.contains("replaces"), "{:?}", unreadable[0]);
    assert_eq!(unreadable[1].0, 3);
    assert!(unreadable[1].1.contains("sha256"), "{:?}", unreadable[1]);
    assert!(
        unreadable[1].1.contains("64 lowercase hex"),
        "{:?}",
        unreadable[1]
    );
    assert!(!report.is_good());
}

#[test]
fn a_reordered_or_shortened_chain_is_broken() {
    let dir = session();
    let lines = chain_lines(dir.path());
    let mut reordered = lines.clone();
    reordered.swap(1, 2);
    write_lines(dir.path(), &reordered);
    let report = verify(dir.path(), Some(&public())).unwrap();
    assert_eq!(
        report.problems,
        [
            ChainProblem::OutOfPlace { line: 2, seq: 2 },
            ChainProblem::BrokenLink { line: 2 },
            ChainProblem::OutOfPlace { line: 3, seq: 1 },
            ChainProblem::BrokenLink { line: 3 },
            ChainProblem::BrokenLink { line: 4 },
        ]
    );
    let mut shortened = lines.clone();
    shortened.remove(0);
    write_lines(dir.path(), &shortened);
    let report = verify(dir.path(), None).unwrap();
    assert!(report
        .problems
        .contains(&ChainProblem::BrokenLink { line: 1 }));
    assert!(report
        .problems
        .contains(&ChainProblem::OutOfPlace { line: 1, seq: 1 }));
    assert!(!report.is_good());

    let mut garbage = lines;
    garbage[2] = "{not json".into();
    write_lines(dir.path(), &garbage);
    let report = verify(dir.path(), Some(&public())).unwrap();
    assert!(matches!(
        report.problems[0],
        ChainProblem::Unreadable { line: 3, .. }
    ));
}

#[test]
fn a_directory_without_a_chain_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let error = verify(dir.path(), None).unwrap_err();
    assert!(error.to_string().contains("holds no chain"), "{error}");
}

/// Writes every entry of `dir`'s chain as its object, as recd does when uploading.
fn write_objects(dir: &Path) {
    for line in chain_lines(dir) {
        let entry: Entry = serde_json::from_str(&line).unwrap();
        crate::objects::write_object(dir, &entry).unwrap();
    }
}

#[test]
fn a_chain_cut_by_two_entries_and_their_files_is_named_from_the_entry_objects() {
    let dir = session();
    write_objects(dir.path());
    assert!(verify(dir.path(), Some(&public())).unwrap().is_good());
    // Cut as a thief would: the last two entries and the files they name (the chain left
    // is whole), the objects as the bucket keeps them.
    let lines = chain_lines(dir.path());
    write_lines(dir.path(), &lines[..2]);
    std::fs::remove_file(dir.path().join("s_0002.mcap.age")).unwrap();
    std::fs::remove_file(dir.path().join("s_0000.mcap")).unwrap();
    let plain = verify(dir.path(), Some(&public()));
    let report = verify_expecting(dir.path(), Some(&public()), &Expected::default()).unwrap();
    assert_eq!(plain.unwrap(), report, "verify reads the objects too");
    let cut: Vec<(u64, &str)> = (report.problems.iter())
        .filter_map(|problem| match problem {
            ChainProblem::NotInChain { seq, file, .. } => Some((*seq, file.as_str())),
            _ => None,
        })
        .collect();
    assert_eq!(cut, [(2, "s_0002.mcap.age"), (3, "s_0000.mcap")]);
    assert_eq!(report.problems.len(), 2, "{:?}", report.problems);
    assert_eq!(
        states(&report),
        [
            ("s_0000.mcap", FileState::Missing),
            ("s_0001.mcap", FileState::Intact),
            ("s_0002.mcap.age", FileState::Missing),
        ]
    );
}

#[test]
fn an_entry_object_not_signed_by_the_key_is_named_and_not_believed() {
    let dir = session();
    write_objects(dir.path());
    let mut forged: Entry = serde_json::from_str(&chain_lines(dir.path())[3]).unwrap();
    forged.seq = 4;
    forged.file = "planted.mcap".into();
    forged.digest = hex(&forged.compute_digest());
    let other = SigningKey::from_pem(OTHER, "other").unwrap();
    forged.signature =
        base64::engine::general_purpose::STANDARD.encode(other.sign(&forged.compute_digest()));
    let name = crate::objects::object_name(&forged);
    crate::objects::write_object(dir.path(), &forged).unwrap();
    let report = verify(dir.path(), Some(&public())).unwrap();
    assert_eq!(
        report.problems,
        [ChainProblem::BadObject {
            object: name,
            reason: "it is not signed by the key (forged or another key's)".into()
        }]
    );
    assert!(report.files.iter().all(|f| f.file != "planted.mcap"));
}

#[test]
fn what_the_fleet_last_saw_is_checked_min_entries_and_head() {
    let dir = session();
    let lines = chain_lines(dir.path());
    let head: Entry = serde_json::from_str(&lines[3]).unwrap();
    let met = Expected {
        min_entries: Some(4),
        head: Some(head.digest.to_uppercase()),
    };
    assert!(verify_expecting(dir.path(), Some(&public()), &met)
        .unwrap()
        .is_good());
    write_lines(dir.path(), &lines[..3]);
    let report = verify_expecting(dir.path(), Some(&public()), &met).unwrap();
    assert_eq!(
        report.problems,
        [
            ChainProblem::TooFewEntries {
                found: 3,
                expected: 4
            },
            ChainProblem::HeadNotFound {
                digest: head.digest.clone()
            }
        ]
    );
}
