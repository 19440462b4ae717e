//! What Debian's `age` CLI (the Go reference implementation) encrypts, `SealedReader` reads
//! with an identity file made by `age-keygen`; and `recover` keeps the authentic part of
//! such a file cut short. A header past recd's stanza cap (which age reads) and an scrypt
//! stanza beside another (which age's passphrase path refuses too) are refused naming why.

mod common;

use std::io::{Cursor, Read, Seek, SeekFrom};

use common::{keygen, run};

use recd_seal::{
    recover, ChunkError, HeaderReadError, Identities, OpenError, SealedHeader, SealedReader,
    CHUNK_SIZE, MAX_STANZAS,
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

/// `n` public keys, `first` among them, first.
fn public_keys(first: &str, n: usize) -> Vec<String> {
    let mut keys = vec![first.to_owned()];
    keys.extend((1..n).map(|_| age::x25519::Identity::generate().to_public().to_string()));
    keys
}

#[test]
fn a_file_age_seals_to_more_keys_than_the_cap_is_refused_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let (key, public) = keygen(dir.path(), "a.key");
    let identities = Identities::read_file(&key).unwrap();

    let keys = public_keys(&public, MAX_STANZAS);
    let keys: Vec<&str> = keys.iter().map(String::as_str).collect();
    let at_cap = age_encrypt(&keys, b"at the cap");
    let header = SealedHeader::read(Cursor::new(&at_cap)).unwrap();
    assert_eq!(header.stanza_types().len(), MAX_STANZAS);
    let mut back = Vec::new();
    SealedReader::open(Cursor::new(&at_cap), &identities)
        .unwrap()
        .read_to_end(&mut back)
        .unwrap();
    assert_eq!(back, b"at the cap");

    let keys = public_keys(&public, MAX_STANZAS + 1);
    let keys: Vec<&str> = keys.iter().map(String::as_str).collect();
    let over = age_encrypt(&keys, b"over the cap");
    // age reads it: the file is sound, recd's cap refuses it.
    let path = dir.path().join("over.age");
    std::fs::write(&path, &over).unwrap();
    let output = run(
        "age",
        &["-d", "-i", key.to_str().unwrap(), path.to_str().unwrap()],
        b"",
    );
    assert!(output.status.success(), "age -d: {output:?}");
    assert_eq!(output.stdout, b"over the cap");

    let error = SealedHeader::read(Cursor::new(&over)).unwrap_err();
    assert!(
        matches!(
            error,
            HeaderReadError::TooManyStanzas {
                stanzas: 65,
                cap: 64
            }
        ),
        "{error:?}"
    );
    let error = SealedReader::open(Cursor::new(&over), &identities).unwrap_err();
    let message = error.to_string();
    assert!(
        message.contains("has 65 recipient stanzas, more than the 64 recd reads"),
        "{message}"
    );
    let error = recover(Cursor::new(&over), &identities, &mut Vec::new()).unwrap_err();
    assert!(error.to_string().contains("more than the 64"), "{error}");
}

#[test]
fn an_scrypt_stanza_beside_an_x25519_one_is_refused_as_the_age_spec_requires() {
    let dir = tempfile::tempdir().unwrap();
    let (key, public) = keygen(dir.path(), "a.key");
    let identities = Identities::read_file(&key).unwrap();
    // age does not write such a header: -p and -r exclude each other.
    let output = run("age", &["-e", "-p", "-r", &public], b"secret");
    assert!(!output.status.success(), "age -p -r: {output:?}");
    // So an scrypt stanza as age writes one (salt, work factor, the wrapped key) goes in
    // before the X25519 one of a file age wrote.
    let file = age_encrypt(&[&public], b"secret");
    let version = b"age-encryption.org/v1\n";
    assert!(file.starts_with(version));
    let scrypt = format!("-> scrypt {} 18\n{}\n", "A".repeat(22), "A".repeat(43));
    let mut mixed = version.to_vec();
    mixed.extend_from_slice(scrypt.as_bytes());
    mixed.extend_from_slice(&file[version.len()..]);
    let path = dir.path().join("mixed.age");
    std::fs::write(&path, &mixed).unwrap();

    // age's passphrase path (`age -d` without -i) refuses it before asking for one. (With
    // -i and a header MAC made with the file key, age 1.1.1 reads such a file through its
    // X25519 stanza; recd follows the spec and refuses it whatever opens it.)
    let output = run("age", &["-d", path.to_str().unwrap()], b"");
    assert!(!output.status.success(), "age -d read it: {output:?}");
    let said = String::from_utf8_lossy(&output.stderr);
    assert!(
        said.contains("an scrypt recipient must be the only one"),
        "age -d said: {said}"
    );

    let error = SealedHeader::read(Cursor::new(&mixed)).unwrap_err();
    assert!(
        matches!(error, HeaderReadError::ScryptNotAlone { stanzas: 2 }),
        "{error:?}"
    );
    let error = SealedReader::open(Cursor::new(&mixed), &identities).unwrap_err();
    let message = error.to_string();
    assert!(
        message.contains("an scrypt (passphrase) stanza among 2 stanzas"),
        "{message}"
    );
}
