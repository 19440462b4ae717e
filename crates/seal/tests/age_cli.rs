//! Debian's `age` CLI (the Go reference implementation) decrypts what `SealedWriter`
//! writes, with either recipient's identity, and refuses a tampered or truncated file.

mod common;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Output;

use common::{keygen, run};

use recd_seal::{sealed_len, Recipients, SealedWriter, CHUNK_SIZE};

/// `age -d -i identity file`.
fn age_decrypt(identity: &Path, file: &Path) -> Output {
    run(
        "age",
        &[
            "-d",
            "-i",
            identity.to_str().unwrap(),
            file.to_str().unwrap(),
        ],
        b"",
    )
}

/// Seals `plaintext` in writes of `write_size` bytes; returns the file and its header's
/// length.
fn seal(plaintext: &[u8], recipients: &Recipients, write_size: usize) -> (Vec<u8>, usize) {
    let mut writer = SealedWriter::new(Vec::new(), recipients).unwrap();
    for piece in plaintext.chunks(write_size) {
        writer.write_all(piece).unwrap();
    }
    let header_len = writer.header_len() as usize;
    let file = writer.finish().unwrap();
    assert_eq!(
        file.len() as u64,
        header_len as u64 + sealed_len(plaintext.len() as u64)
    );
    (file, header_len)
}

struct Fleet {
    dir: tempfile::TempDir,
    keys: [PathBuf; 2],
    recipients: Recipients,
}

fn fleet() -> Fleet {
    let dir = tempfile::tempdir().unwrap();
    let (a, a_public) = keygen(dir.path(), "a.key");
    let (b, b_public) = keygen(dir.path(), "b.key");
    let recipients = Recipients::parse(&[a_public, b_public]).unwrap();
    Fleet {
        dir,
        keys: [a, b],
        recipients,
    }
}

fn random_bytes(len: usize) -> Vec<u8> {
    let mut rng = fastrand::Rng::with_seed(len as u64);
    let mut bytes = vec![0; len];
    rng.fill(&mut bytes);
    bytes
}

#[test]
fn age_decrypts_every_size_with_either_identity() {
    let fleet = fleet();
    let c = CHUNK_SIZE;
    for len in [0, 1, c - 1, c, c + 1, 3 * c + 5] {
        let plaintext = random_bytes(len);
        for write_size in [4096, 1 << 20] {
            let (file, _) = seal(&plaintext, &fleet.recipients, write_size);
            let path = fleet
                .dir
                .path()
                .join(format!("{len}-{write_size}.mcap.age"));
            std::fs::write(&path, &file).unwrap();
            for key in &fleet.keys {
                let output = age_decrypt(key, &path);
                assert!(
                    output.status.success(),
                    "age -d of {len} bytes: {}",
                    String::from_utf8_lossy(&output.stderr)
                );
                assert!(
                    output.stdout == plaintext,
                    "{len} bytes came back different"
                );
            }
        }
    }
}

#[test]
fn age_refuses_a_wrong_identity() {
    let fleet = fleet();
    let (stranger, _) = keygen(fleet.dir.path(), "stranger.key");
    let (file, _) = seal(&random_bytes(100), &fleet.recipients, 100);
    let path = fleet.dir.path().join("file.age");
    std::fs::write(&path, file).unwrap();
    let output = age_decrypt(&stranger, &path);
    assert!(!output.status.success(), "{output:?}");
    assert!(output.stdout.is_empty());
}

/// Changes the byte of `file` at `at` and asks `age -d` to decrypt it: in the header, to
/// another base64 character (so that the header still parses and its MAC or key must catch
/// it); in the payload, by one flipped bit.
fn decrypt_tampered(fleet: &Fleet, file: &[u8], at: usize, name: &str) -> Output {
    let mut tampered = file.to_vec();
    tampered[at] = if !name.starts_with("header") {
        tampered[at] ^ 0x01
    } else if tampered[at] == b'A' {
        b'B'
    } else {
        b'A'
    };
    let path = fleet.dir.path().join(name);
    std::fs::write(&path, tampered).unwrap();
    age_decrypt(&fleet.keys[0], &path)
}

#[test]
fn age_refuses_a_changed_byte_anywhere() {
    let fleet = fleet();
    let c = CHUNK_SIZE;
    let (file, header_len) = seal(&random_bytes(3 * c + 5), &fleet.recipients, 1 << 20);
    let header = std::str::from_utf8(&file[..header_len]).unwrap();
    let mac_at = header.rfind("--- ").unwrap() + 10;
    let stanza_arg_at = header.find("-> X25519 ").unwrap() + 12;
    let payload = header_len + 16;
    let places = [
        ("header-mac", mac_at),
        ("header-stanza", stanza_arg_at),
        ("payload-nonce", header_len + 3),
        ("first-chunk", payload + 100),
        ("second-chunk-tag", payload + 2 * (c + 16) - 1),
        ("last-chunk", file.len() - 17),
    ];
    for (name, at) in places {
        let output = decrypt_tampered(&fleet, &file, at, name);
        assert!(
            !output.status.success(),
            "age accepted a changed byte in {name}"
        );
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(!stderr.contains("base64"), "{name} did not parse: {stderr}");
        if name == "header-mac" {
            assert!(stderr.contains("MAC"), "{name}: {stderr}");
        }
    }
}

#[test]
fn age_refuses_a_file_cut_at_a_chunk_boundary() {
    let fleet = fleet();
    let c = CHUNK_SIZE;
    let (file, header_len) = seal(&random_bytes(2 * c + 5), &fleet.recipients, 1 << 20);
    // Without its last chunk, the file ends after a chunk that is not marked last.
    let cut = header_len + 16 + 2 * (c + 16);
    let path = fleet.dir.path().join("cut.age");
    std::fs::write(&path, &file[..cut]).unwrap();
    let output = age_decrypt(&fleet.keys[0], &path);
    assert!(!output.status.success(), "age accepted a truncated file");
}
