//! What Debian's `age` CLI (the Go reference implementation) encrypts, `SealedReader` reads
//! with an identity file made by `age-keygen`; and `recover` keeps the authentic part of
//! such a file cut short.

mod common;

use std::io::{Cursor, Read, Seek, SeekFrom};

use common::{keygen, run};

use recd_seal::{
    recover, ChunkError, Identities, OpenError, SealedHeader, SealedReader, CHUNK_SIZE,
};

/// `age -e -r public…` of `plaintext`.
fn age_encrypt(recipients: &[&str], plaintext: &[u8]) -> Vec<u8> {
    let mut args = vec!["-e"];
    for recipient in recipients {
        args.extend(["-r", recipient]);
    }
    let output = run("age", &args, plaintext);
    assert!(output.status.success(), "age -e: {output:?}");
    output.stdout
}

fn random_bytes(len: usize) -> Vec<u8> {
    let mut rng = fastrand::Rng::with_seed(len as u64 + 3);
    let mut bytes = vec![0; len];
    rng.fill(&mut bytes);
    bytes
}

#[test]
fn files_from_the_age_cli_read_back_with_a_keygen_identity_file() {
    let dir = tempfile::tempdir().unwrap();
    let (a, a_public) = keygen(dir.path(), "a.key");
    let (b, b_public) = keygen(dir.path(), "b.key");
    let c = CHUNK_SIZE;
    for len in [0, 1, c - 1, c, c + 1, 3 * c + 5] {
        let plaintext = random_bytes(len);
        let file = age_encrypt(&[&a_public, &b_public], &plaintext);
        let header = SealedHeader::read(Cursor::new(&file)).unwrap();
        assert_eq!(header.stanza_types(), ["X25519", "X25519"]);
        assert_eq!(header.plaintext_len(), len as u64);
        assert!(header.can_end_in_last_chunk());
        for key in [&a, &b] {
            let identities = Identities::read_file(key).unwrap();
            let mut reader = SealedReader::open(Cursor::new(&file), &identities).unwrap();
            let mut back = Vec::new();
            reader.read_to_end(&mut back).unwrap();
            assert!(back == plaintext, "{len} bytes came back different");
            if len > 10 {
                reader.seek(SeekFrom::Start(len as u64 - 10)).unwrap();
                let mut tail = Vec::new();
                reader.read_to_end(&mut tail).unwrap();
                assert_eq!(tail, plaintext[len - 10..]);
            }
        }
    }
}

#[test]
fn a_cli_file_cut_short_is_refused_and_its_authentic_part_recovered() {
    let dir = tempfile::tempdir().unwrap();
    let (key, public) = keygen(dir.path(), "a.key");
    let identities = Identities::read_file(&key).unwrap();
    let plaintext = random_bytes(3 * CHUNK_SIZE + 100);
    let file = age_encrypt(&[&public], &plaintext);
    let header = SealedHeader::read(Cursor::new(&file)).unwrap();
    let cut = header.header_len() as usize + 16 + 2 * (CHUNK_SIZE + 16) + 30;

    let mut reader = SealedReader::open(Cursor::new(&file[..cut]), &identities).unwrap();
    let error = reader.read_to_end(&mut Vec::new()).unwrap_err();
    assert!(error.to_string().contains("ends inside chunk 2"), "{error}");

    let mut out = Vec::new();
    let recovered = recover(Cursor::new(&file[..cut]), &identities, &mut out).unwrap();
    assert!(!recovered.complete);
    assert_eq!(recovered.chunks, 2);
    assert!(out == plaintext[..2 * CHUNK_SIZE]);
    assert!(matches!(
        recovered.stop,
        Some(ChunkError::CutInside { chunk: 2, .. })
    ));
}

#[test]
fn a_stranger_identity_is_refused_naming_the_stanzas() {
    let dir = tempfile::tempdir().unwrap();
    let (_, public) = keygen(dir.path(), "a.key");
    let (stranger, _) = keygen(dir.path(), "stranger.key");
    let file = age_encrypt(&[&public], b"secret");
    let identities = Identities::read_file(&stranger).unwrap();
    let error = SealedReader::open(Cursor::new(&file), &identities).unwrap_err();
    assert!(
        matches!(error, OpenError::NoMatchingIdentity { stanzas: 1, .. }),
        "{error}"
    );
    assert!(
        error.to_string().contains("1 recipient stanza(s) (X25519)"),
        "{error}"
    );
}
