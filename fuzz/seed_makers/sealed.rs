//! Writes the seeds of the `age_header`, `sealed` and `chain` targets under fuzz/seeds/:
//! files sealed by recd's writer and by Debian's `age` to the fixed test identity, some cut
//! short; headers of several stanza types; chains signed with the fixed test key over the
//! chain target's session files. Run once by fuzz/make-seeds-sealed; the result is
//! committed. It is a fuzz binary that writes the seeds as it starts and exits, so that it
//! is built with the targets (a plain binary would build every dependency once more).
#![no_main]
// The seeds are written in the fuzzer's init, which exits: the fuzz loop is never reached.
#![allow(unreachable_code)]

#[path = "../fuzz_targets/keys.rs"]
mod keys;

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

use base64::Engine;
use recd_chain::{hex, Entry, Kind, SigningKey, ZERO_DIGEST};
use recd_seal::{Recipients, SealedWriter, CHUNK_SIZE, MAX_STANZAS};

libfuzzer_sys::fuzz_target!(
    init: {
        make_seeds();
        std::process::exit(0);
    },
    |_data: &[u8]| {}
);

fn make_seeds() {
    let seeds = Path::new(env!("CARGO_MANIFEST_DIR")).join("seeds");
    sealed(&seeds.join("sealed"));
    headers(&seeds.join("age_header"));
    chains(&seeds.join("chain"));
}

/// Bytes that look like a recording, not all alike.
fn plaintext(len: usize) -> Vec<u8> {
    (0..len).map(|i| (i * 31 % 251) as u8).collect()
}

/// `plaintext` sealed by recd's writer to the test identity (and `others`).
fn recd_sealed(len: usize, others: usize) -> Vec<u8> {
    let mut keys = vec![keys::AGE_RECIPIENT.to_string()];
    keys.extend((0..others).map(|_| age_public()));
    let recipients = Recipients::parse(&keys).expect("recipients");
    let mut writer = SealedWriter::new(Vec::new(), &recipients).expect("writer");
    writer.write_all(&plaintext(len)).expect("written");
    writer.finish().expect("finished")
}

/// A fresh public key, from `age-keygen`.
fn age_public() -> String {
    let output = Command::new("age-keygen")
        .output()
        .expect("age-keygen (apt-get install age)");
    let text = String::from_utf8(output.stdout).expect("text");
    let secret = text
        .lines()
        .find(|l| l.starts_with("AGE-SECRET-KEY-"))
        .expect("a key");
    let output = Command::new("age-keygen")
        .arg("-y")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .and_then(|mut child| {
            child
                .stdin
                .take()
                .expect("stdin")
                .write_all(secret.as_bytes())?;
            child.wait_with_output()
        })
        .expect("age-keygen -y");
    String::from_utf8(output.stdout)
        .expect("text")
        .trim()
        .to_string()
}

/// `plaintext` sealed by Debian's `age` to the test identity.
fn age_sealed(len: usize) -> Vec<u8> {
    let mut child = Command::new("age")
        .args(["-e", "-r", keys::AGE_RECIPIENT])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("age (apt-get install age)");
    let mut stdin = child.stdin.take().expect("stdin");
    let input = plaintext(len);
    let feeder = std::thread::spawn(move || stdin.write_all(&input));
    let output = child.wait_with_output().expect("age -e");
    feeder.join().expect("fed").expect("fed");
    assert!(output.status.success(), "age -e: {output:?}");
    output.stdout
}

/// Bytes of the header, up to and including the MAC line.
fn header_len(file: &[u8]) -> usize {
    let mac = file
        .windows(4)
        .position(|w| w == b"\n---")
        .expect("a MAC line")
        + 1;
    mac + file[mac..]
        .iter()
        .position(|&b| b == b'\n')
        .expect("its end")
        + 1
}

fn write(dir: &Path, name: &str, bytes: &[u8]) {
    std::fs::create_dir_all(dir).expect("seed folder");
    std::fs::write(dir.join(name), bytes).expect("seed written");
}

fn sealed(dir: &Path) {
    let c = CHUNK_SIZE;
    for len in [0, 1, 100, c, c + 10] {
        write(dir, &format!("recd_{len}.age"), &recd_sealed(len, 0));
    }
    write(dir, "recd_two_recipients.age", &recd_sealed(50, 1));
    let two_chunks = recd_sealed(c + 10, 0);
    let header = header_len(&two_chunks);
    write(
        dir,
        "recd_cut_in_chunk_1.age",
        &two_chunks[..two_chunks.len() - 5],
    );
    write(
        dir,
        "recd_cut_after_chunk_0.age",
        &two_chunks[..header + 16 + c + 16],
    );
    write(dir, "recd_cut_after_nonce.age", &two_chunks[..header + 16]);
    for len in [0, 5, c + 3] {
        write(dir, &format!("age_cli_{len}.age"), &age_sealed(len));
    }
}

fn headers(dir: &Path) {
    let file = recd_sealed(20, 0);
    write(dir, "recd_one_x25519.age", &file);
    write(dir, "recd_three_x25519.age", &recd_sealed(20, 2));
    write(dir, "age_cli.age", &age_sealed(20));
    // Stanzas of other types, as a future or plugin recipient writes them; the MAC line of
    // a real file (it is not checked without a key).
    let mac_line = &file[file.windows(4).position(|w| w == b"\n---").expect("MAC") + 1..];
    let mut mixed = b"age-encryption.org/v1\n".to_vec();
    let body = base64::engine::general_purpose::STANDARD_NO_PAD.encode([7u8; 48]);
    mixed.extend_from_slice(
        format!("-> X25519 {}\n{}\n", "A".repeat(43), "A".repeat(43)).as_bytes(),
    );
    mixed.extend_from_slice(format!("-> piv-p256 abc {}\n{body}\n\n", "B".repeat(43)).as_bytes());
    mixed.extend_from_slice(b"-> some-future-type\n\n");
    mixed.extend_from_slice(mac_line);
    write(dir, "other_types.age", &mixed);
    let mut scrypt = b"age-encryption.org/v1\n".to_vec();
    scrypt.extend_from_slice(
        format!("-> scrypt {} 18\n{}\n", "A".repeat(22), "A".repeat(43)).as_bytes(),
    );
    scrypt.extend_from_slice(mac_line);
    write(dir, "scrypt_alone.age", &scrypt);
    let mut at_cap = b"age-encryption.org/v1\n".to_vec();
    for _ in 0..MAX_STANZAS {
        at_cap.extend_from_slice(
            format!("-> X25519 {}\n{}\n", "A".repeat(43), "A".repeat(43)).as_bytes(),
        );
    }
    at_cap.extend_from_slice(mac_line);
    write(dir, "at_the_stanza_cap.age", &at_cap);
}

/// Signs entries into chain lines, linking each to the one before.
struct Chain {
    key: SigningKey,
    entries: Vec<Entry>,
    /// The session and host version 2 entries name; none for version 1 entries.
    origin: Option<(&'static str, &'static str)>,
}

impl Chain {
    fn add(&mut self, kind: Kind, file: &str, content: Option<&str>, replaces: Option<usize>) {
        let (bytes, sha256) = match content {
            Some(content) => (content.len() as u64, hex(&sha256(content.as_bytes()))),
            None => (0, ZERO_DIGEST.to_string()),
        };
        let mut entry = Entry {
            seq: self.entries.len() as u64,
            kind,
            file: file.to_string(),
            bytes,
            sha256,
            prev: self
                .entries
                .last()
                .map_or(ZERO_DIGEST.to_string(), |e| e.digest.clone()),
            time_ns: 1_795_000_000_000_000_000 + self.entries.len() as u64,
            replaces: replaces.map(|i| self.entries[i].digest.clone()),
            session: self.origin.map(|(session, _)| session.to_string()),
            host: self.origin.map(|(_, host)| host.to_string()),
            digest: String::new(),
            signature: String::new(),
        };
        let digest = entry.compute_digest();
        entry.digest = hex(&digest);
        entry.signature = base64::engine::general_purpose::STANDARD.encode(self.key.sign(&digest));
        self.entries.push(entry);
    }

    fn text(&self) -> String {
        self.entries.iter().map(|e| e.to_line() + "\n").collect()
    }
}

/// SHA-256 of `bytes`, through recd-chain's own file digest.
fn sha256(bytes: &[u8]) -> [u8; 32] {
    let dir = std::env::temp_dir().join(format!("recd-seeds-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp folder");
    let path = dir.join("file");
    std::fs::write(&path, bytes).expect("temp file");
    let (_, digest) = recd_chain::file_digest(&path).expect("digest");
    std::fs::remove_dir_all(&dir).expect("temp folder removed");
    digest
}

fn chains(dir: &Path) {
    let key = || SigningKey::from_pem(keys::CHAIN_PRIVATE, "test key").expect("test key");
    let [s0, s1, metadata, cut] = keys::SESSION_FILES;
    let mut chain = Chain {
        key: key(),
        entries: Vec::new(),
        origin: None,
    };
    chain.add(
        Kind::Recorded,
        s0.0,
        Some("s_0000.mcap before finishing"),
        None,
    );
    chain.add(Kind::Recorded, s1.0, Some(s1.1), None);
    chain.add(
        Kind::Metadata,
        metadata.0,
        Some("rosbag2_bagfile_information: {old}"),
        None,
    );
    chain.add(Kind::Metadata, metadata.0, Some(metadata.1), None);
    chain.add(Kind::Finished, s0.0, Some(s0.1), Some(0));
    chain.add(Kind::Cut, cut.0, Some(cut.1), None);
    let whole = chain.text();
    write(dir, "intact.jsonl", whole.as_bytes());
    write(
        dir,
        "cut_in_a_line.jsonl",
        &whole.as_bytes()[..whole.len() - 40],
    );

    // Version 2 entries: made in the chain target's session folder (`session`), and in
    // another one.
    for (name, origin) in [
        ("intact_v2.jsonl", ("session", "ecu-1")),
        ("made_elsewhere_v2.jsonl", ("drive_2", "ecu-2")),
    ] {
        let mut chain = Chain {
            key: key(),
            entries: Vec::new(),
            origin: Some(origin),
        };
        chain.add(Kind::Recorded, s0.0, Some(s0.1), None);
        chain.add(Kind::Recorded, s1.0, Some(s1.1), None);
        chain.add(Kind::Cut, cut.0, Some(cut.1), None);
        write(dir, name, chain.text().as_bytes());
    }

    let mut chain = Chain {
        key: key(),
        entries: Vec::new(),
        origin: None,
    };
    chain.add(Kind::Recorded, "s_0002.mcap", Some("gone since"), None);
    chain.add(
        Kind::Recorded,
        "s_0003.mcap",
        Some("uploaded, then deleted"),
        None,
    );
    chain.add(Kind::Deleted, "s_0002.mcap", None, Some(0));
    chain.add(Kind::Offloaded, "s_0003.mcap", None, Some(1));
    chain.add(Kind::Recorded, s0.0, Some(s0.1), None);
    write(dir, "deleted_and_offloaded.jsonl", chain.text().as_bytes());

    // Signed with another key, and one entry altered after signing.
    let other = "-----BEGIN PRIVATE KEY-----\nMC4CAQAwBQYDK2VwBCIEIKYOOxlFEl5qWLwLtvF4DTj37pkJscSTGjWikQiRxqzN\n-----END PRIVATE KEY-----\n";
    let mut chain = Chain {
        key: SigningKey::from_pem(other, "other key").expect("other key"),
        entries: Vec::new(),
        origin: None,
    };
    chain.add(Kind::Recorded, s0.0, Some(s0.1), None);
    chain.add(Kind::Recorded, s1.0, Some(s1.1), None);
    chain.entries[1].bytes += 1;
    write(dir, "forged.jsonl", chain.text().as_bytes());
}
