use super::*;
use crate::key::SigningKey;
use crate::verify::verify;

fn key() -> SigningKey {
    SigningKey::from_pem(crate::key::tests::PRIVATE, "test").unwrap()
}

fn new(kind: Kind, file: &str, content: &[u8]) -> NewEntry {
    NewEntry {
        kind,
        file: file.into(),
        bytes: content.len() as u64,
        sha256: crate::entry::sha256(content),
        time_ns: 1,
    }
}

/// Appends one entry of `kind` for `file`, which must not begin a segment.
fn append_one(chain: &mut ChainWriter, kind: Kind, file: &str, content: &[u8]) -> Entry {
    let mut appended = chain.append(&key(), new(kind, file, content)).unwrap();
    assert_eq!(appended.len(), 1, "{appended:?}");
    appended.remove(0)
}

/// What recd would keep of the chain: its entries and last digest.
fn head(chain: &ChainWriter) -> Head {
    let last = chain.entries().last().unwrap();
    Head {
        entries: last.seq + 1,
        digest: last.digest.clone(),
    }
}

/// A chain of `count` recorded files in `dir`, each written beside it; returns its head.
fn chain_of(dir: &Path, count: usize) -> Head {
    let mut chain = ChainWriter::open(dir, &key(), None).unwrap();
    for index in 0..count {
        let name = format!("s_{index:04}.mcap");
        std::fs::write(dir.join(&name), name.as_bytes()).unwrap();
        append_one(&mut chain, Kind::Recorded, &name, name.as_bytes());
    }
    head(&chain)
}

fn lines(dir: &Path) -> Vec<String> {
    std::fs::read_to_string(dir.join(CHAIN_FILE))
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect()
}

#[test]
fn entries_link_to_the_one_before_and_finished_replaces_recorded() {
    let dir = tempfile::tempdir().unwrap();
    let key = key();
    let mut chain = ChainWriter::open(dir.path(), &key, None).unwrap();
    let first = append_one(&mut chain, Kind::Recorded, "a.mcap", b"a");
    assert_eq!(first.seq, 0);
    assert_eq!(first.prev, ZERO_DIGEST);
    assert_eq!(first.replaces, None);
    let second = append_one(&mut chain, Kind::Finished, "a.mcap", b"aa");
    assert_eq!(second.seq, 1);
    assert_eq!(second.prev, first.digest);
    assert_eq!(second.replaces.as_ref(), Some(&first.digest));
    assert!(chain.is_current("a.mcap", 2, &crate::entry::sha256(b"aa")));
    assert!(!chain.is_current("a.mcap", 1, &crate::entry::sha256(b"a")));

    let again = ChainWriter::open(dir.path(), &key, Some(head(&chain))).unwrap();
    assert_eq!(again.entries(), &[first, second]);
    assert_eq!(again.damage(), None);
}

#[test]
fn an_unfinished_last_line_is_cut_off_and_any_other_damage_begins_a_new_segment() {
    let dir = tempfile::tempdir().unwrap();
    let key = key();
    let mut chain = ChainWriter::open(dir.path(), &key, None).unwrap();
    append_one(&mut chain, Kind::Recorded, "a.mcap", b"a");
    let path = chain.path().to_path_buf();
    let whole = std::fs::read(&path).unwrap();
    let mut torn = whole.clone();
    torn.extend_from_slice(b"{\"seq\":1,\"ki");
    std::fs::write(&path, &torn).unwrap();
    let chain = ChainWriter::open(dir.path(), &key, None).unwrap();
    assert_eq!(chain.entries().len(), 1);
    assert_eq!(chain.damage(), None);
    assert_eq!(std::fs::read(&path).unwrap(), whole);

    let mut damaged = whole.clone();
    damaged.extend_from_slice(b"not an entry\n");
    std::fs::write(&path, &damaged).unwrap();
    let mut chain = ChainWriter::open(dir.path(), &key, None).unwrap();
    assert!(
        matches!(
            chain.damage(),
            Some(Damage::Broken(ChainProblem::Unreadable { line: 2, .. }))
        ),
        "{:?}",
        chain.damage()
    );
    let appended = chain
        .append(&key, new(Kind::Recorded, "b.mcap", b"b"))
        .unwrap();
    assert_eq!(
        appended.iter().map(|e| (e.seq, e.kind)).collect::<Vec<_>>(),
        [(2, Kind::Segment), (3, Kind::Recorded)]
    );
    assert_eq!(appended[0].prev, ZERO_DIGEST, "a segment links to nothing");
    assert_eq!(appended[1].prev, appended[0].digest);
    // Once begun, the segment is not begun again: the damage before it is known.
    let again = ChainWriter::open(dir.path(), &key, Some(head(&chain))).unwrap();
    assert_eq!(again.damage(), None);
}

#[test]
fn a_chain_cut_short_of_what_recd_wrote_is_not_extended_and_verify_says_where_the_new_segment_began(
) {
    let dir = tempfile::tempdir().unwrap();
    let key = key();
    let known = chain_of(dir.path(), 4);
    // The last two entries and their files removed: what is left is a whole chain.
    let kept = lines(dir.path())[..2].join("\n") + "\n";
    std::fs::write(dir.path().join(CHAIN_FILE), kept).unwrap();
    for name in ["s_0002.mcap", "s_0003.mcap"] {
        std::fs::remove_file(dir.path().join(name)).unwrap();
    }
    assert!(verify(dir.path(), Some(&key.public_key()))
        .unwrap()
        .is_good());

    let mut chain = ChainWriter::open(dir.path(), &key, Some(known.clone())).unwrap();
    assert_eq!(
        chain.damage(),
        Some(&Damage::Shortened {
            written: 4,
            found: 2
        })
    );
    std::fs::write(dir.path().join("s_0004.mcap"), b"next").unwrap();
    let appended = chain
        .append(&key, new(Kind::Recorded, "s_0004.mcap", b"next"))
        .unwrap();
    let segment = &appended[0];
    assert_eq!((segment.seq, segment.kind), (2, Kind::Segment));
    assert_eq!(segment.bytes, 4, "the entries recd had written");
    assert_eq!(segment.sha256, known.digest, "the last of them");

    let report = verify(dir.path(), Some(&key.public_key())).unwrap();
    assert!(!report.is_good());
    let said: Vec<String> = report.problems.iter().map(|p| p.to_string()).collect();
    assert_eq!(
        said,
        [
            "a new segment begins at line 3: when recd reopened the chain, the chain held 2 \
          entries where recd had written 4: 2 were cut; it did not extend it"
        ]
    );
}

#[test]
fn a_chain_whose_last_entry_recd_wrote_was_replaced_is_not_extended() {
    let dir = tempfile::tempdir().unwrap();
    let key = key();
    let known = chain_of(dir.path(), 3);
    // The last entry cut and another, signed with the same key, made in its place.
    let kept = lines(dir.path())[..2].join("\n") + "\n";
    std::fs::write(dir.path().join(CHAIN_FILE), kept).unwrap();
    let mut forger = ChainWriter::open(dir.path(), &key, None).unwrap();
    append_one(&mut forger, Kind::Recorded, "s_0002.mcap", b"other bytes");
    std::fs::write(dir.path().join("s_0002.mcap"), b"other bytes").unwrap();

    let mut chain = ChainWriter::open(dir.path(), &key, Some(known.clone())).unwrap();
    assert_eq!(chain.damage(), Some(&Damage::Rewritten { seq: 2 }));
    chain
        .append(&key, new(Kind::Recorded, "s_0003.mcap", b"x"))
        .unwrap();
    let report = verify(dir.path(), Some(&key.public_key())).unwrap();
    let said: Vec<String> = report.problems.iter().map(|p| p.to_string()).collect();
    assert_eq!(
        said,
        [format!(
            "a new segment begins at line 4: when recd reopened the chain, entry 2 was not the \
             one recd had written (digest {}): the chain was rewritten; it did not extend it",
            known.digest
        )]
    );
}

#[test]
fn entries_say_where_they_were_made_and_an_entry_of_another_origin_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let key = key();
    let here = Origin {
        session: "drive_2".into(),
        host: "ecu-3".into(),
    };
    let mut chain = ChainWriter::open(dir.path(), &key, None).unwrap();
    chain.set_origin(here.clone());
    std::fs::write(dir.path().join("a.mcap"), b"a").unwrap();
    let entry = append_one(&mut chain, Kind::Recorded, "a.mcap", b"a");
    assert_eq!(entry.origin(), Some(here.clone()));
    let report = verify(dir.path(), Some(&key.public_key())).unwrap();
    assert!(report.is_good(), "{report:?}");
    assert_eq!(report.origin, Some(here.clone()));

    // An entry signed by the same key, made for another session, spliced in after it.
    let elsewhere = Origin {
        session: "drive".into(),
        host: "ecu-3".into(),
    };
    let mut other = ChainWriter::open(dir.path(), &key, None).unwrap();
    other.set_origin(elsewhere.clone());
    std::fs::write(dir.path().join("b.mcap"), b"b").unwrap();
    append_one(&mut other, Kind::Recorded, "b.mcap", b"b");
    let report = verify(dir.path(), Some(&key.public_key())).unwrap();
    assert_eq!(
        report.problems,
        [ChainProblem::OtherOrigin {
            line: 2,
            origin: elsewhere,
            chain: here,
        }]
    );
}
