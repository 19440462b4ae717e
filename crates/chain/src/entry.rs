//! One entry of the chain: what it says, its canonical encoding (what its digest is over)
//! and the SHA-256 of a stored file.

use std::io::Read;
use std::path::Path;

use ring::digest::{Context, SHA256};
use serde::{Deserialize, Serialize};

/// The `prev` of the first entry: 32 zero bytes, in hex.
pub const ZERO_DIGEST: &str = "0000000000000000000000000000000000000000000000000000000000000000";

/// What a file is to its session: why it entered the chain.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    /// A file as the session recorded it, read back once closed.
    Recorded,
    /// The same file after finishing (reindexed, maybe compressed) replaced it in place;
    /// the entry's `replaces` is the digest of the entry it supersedes.
    Finished,
    /// An incident's cut file, named under `incidents/`.
    Cut,
    /// A file the session keeps rewriting beside its recordings (rosbag2's
    /// `metadata.yaml`): its newest entry is its current content.
    Metadata,
    /// The file was deleted by recd's retention; `replaces` is the entry of the file as
    /// it was, which is then no longer expected on disk (a copy elsewhere, uploaded
    /// before, is checked against that entry).
    Deleted,
    /// The file was deleted on the vehicle once its upload was verified
    /// (`delete_after_upload`); `replaces` is the entry of the file as it was, which the
    /// bucket holds.
    Offloaded,
    /// recd reopened the chain and found it broken, or shorter than it had written it: a
    /// new segment begins here, for recd never extends such a chain. `file` is the chain's
    /// own name, `prev` the zero digest (the entry vouches for nothing before it), `bytes`
    /// the entries recd had written and `sha256` the digest of the last of them (zeros
    /// when recd knew of none).
    Segment,
}

impl Kind {
    /// The kind as the chain spells it.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Recorded => "recorded",
            Kind::Finished => "finished",
            Kind::Cut => "cut",
            Kind::Metadata => "metadata",
            Kind::Deleted => "deleted",
            Kind::Offloaded => "offloaded",
            Kind::Segment => "segment",
        }
    }
}

impl Kind {
    /// Whether the entry says recd deleted the file from the vehicle (by retention or
    /// after its upload): it replaces the entry of the file as it was.
    pub fn is_deletion(self) -> bool {
        matches!(self, Kind::Deleted | Kind::Offloaded)
    }
}

impl std::fmt::Display for Kind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// One line of the chain file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Entry {
    /// Its place in the chain, from 0.
    pub seq: u64,
    /// What the file is.
    pub kind: Kind,
    /// The file, relative to the session directory (`/`-separated).
    pub file: String,
    /// Its size in bytes (0 for `deleted`).
    pub bytes: u64,
    /// SHA-256 of its stored bytes, hex (zeros for `deleted`).
    pub sha256: String,
    /// The previous entry's digest, hex; [`ZERO_DIGEST`] for the first.
    pub prev: String,
    /// When the entry was made, ns since the Unix epoch.
    pub time_ns: u64,
    /// The digest of the entry this one supersedes (`finished`, `deleted`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replaces: Option<String>,
    /// The session's directory name, where it was made (entry version 2, signed with the
    /// rest, with `host`); none in entries recd wrote before (version 1), which still
    /// verify.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
    /// The host recd ran on (version 2, with `session`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
    /// SHA-256 over [`Entry::canonical`], hex.
    pub digest: String,
    /// Ed25519 signature over the digest's 32 bytes, base64.
    pub signature: String,
}

/// Where an entry was made: bound into its signed bytes, so that a chain copied into
/// another session's folder, or another vehicle's, says whose it is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Origin {
    /// The session's directory name (unique under the data directory, where names repeat).
    pub session: String,
    /// The host recd ran on.
    pub host: String,
}

impl Entry {
    /// The bytes the entry's digest is over: a versioned line per field in a fixed order,
    /// text as JSON strings (so that no name can pass for another field). Version 2 adds
    /// the entry's [`Origin`] first; an entry without one is encoded as version 1.
    pub fn canonical(&self) -> Vec<u8> {
        let text = |value: &str| serde_json::to_string(value).expect("a string serializes");
        let file = text(&self.file);
        let version = match self.origin() {
            None => "recd-chain 1\n".to_string(),
            Some(origin) => format!(
                "recd-chain 2\nsession {}\nhost {}\n",
                text(&origin.session),
                text(&origin.host)
            ),
        };
        format!(
            "{version}seq {}\nkind {}\nfile {file}\nbytes {}\nsha256 {}\nprev {}\ntime_ns {}\nreplaces {}\n",
            self.seq,
            self.kind,
            self.bytes,
            self.sha256,
            self.prev,
            self.time_ns,
            self.replaces.as_deref().unwrap_or("-"),
        )
        .into_bytes()
    }

    /// Where the entry was made: version 2 entries say it, version 1 entries do not.
    pub fn origin(&self) -> Option<Origin> {
        Some(Origin {
            session: self.session.clone()?,
            host: self.host.clone()?,
        })
    }

    /// SHA-256 over the canonical encoding: what [`Entry::digest`] must be.
    pub fn compute_digest(&self) -> [u8; 32] {
        sha256(&self.canonical())
    }

    /// Why the entry cannot be one recd wrote: a session without a host or the reverse,
    /// or a digest field (`sha256`, `prev`, `replaces`, `digest`) that is not 64 lowercase
    /// hex digits. The canonical encoding
    /// writes no `replaces` as `-`, so only such a check tells `"-"` from none.
    pub fn malformed(&self) -> Option<String> {
        if self.session.is_some() != self.host.is_some() {
            return Some(
                "it names its session or its host without the other (a version 2 entry names both)"
                    .into(),
            );
        }
        let fields = [
            ("sha256", Some(&self.sha256)),
            ("prev", Some(&self.prev)),
            ("replaces", self.replaces.as_ref()),
            ("digest", Some(&self.digest)),
        ];
        let (name, value) = fields
            .into_iter()
            .find_map(|(name, value)| Some((name, value?)).filter(|(_, v)| !is_digest_hex(v)))?;
        Some(format!(
            "its {name} {value:?} is not a SHA-256 as recd writes it (64 lowercase hex digits)"
        ))
    }

    /// One line of a chain (without its newline) as an entry, or why it is not one recd
    /// wrote.
    pub fn from_line(line: &str) -> Result<Entry, String> {
        let entry = serde_json::from_str::<Entry>(line).map_err(|e| e.to_string())?;
        match entry.malformed() {
            Some(reason) => Err(reason),
            None => Ok(entry),
        }
    }

    /// The entry as one line of the chain file, without its newline.
    pub fn to_line(&self) -> String {
        serde_json::to_string(self).expect("an entry serializes")
    }
}

/// SHA-256 of `bytes`.
pub(crate) fn sha256(bytes: &[u8]) -> [u8; 32] {
    let digest = ring::digest::digest(&SHA256, bytes);
    digest.as_ref().try_into().expect("SHA-256 is 32 bytes")
}

/// Whether `text` is a SHA-256 in the chain's spelling: 64 lowercase hex digits.
fn is_digest_hex(text: &str) -> bool {
    text.len() == 64 && text.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

/// `bytes` in lowercase hex.
pub fn hex(bytes: &[u8]) -> String {
    ::hex::encode(bytes)
}

/// The size and SHA-256 of the file at `path`, read to its end in 1 MiB reads.
pub fn file_digest(path: &Path) -> std::io::Result<(u64, [u8; 32])> {
    digest_of(std::fs::File::open(path)?)
}

/// The size and SHA-256 of what `file` reads to its end, in 1 MiB reads: for a caller that
/// chooses how the file is read (past the page cache, say).
pub fn digest_of(mut file: impl Read) -> std::io::Result<(u64, [u8; 32])> {
    let mut context = Context::new(&SHA256);
    let mut buffer = vec![0; 1 << 20];
    let mut bytes = 0u64;
    loop {
        let read = match file.read(&mut buffer) {
            Ok(0) => break,
            Ok(read) => read,
            Err(error) if error.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(error) => return Err(error),
        };
        context.update(&buffer[..read]);
        bytes += read as u64;
    }
    let digest = context.finish();
    Ok((bytes, digest.as_ref().try_into().expect("32 bytes")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry() -> Entry {
        Entry {
            seq: 3,
            kind: Kind::Finished,
            file: "drive_0001.mcap".into(),
            bytes: 1234,
            sha256: hex(&[7; 32]),
            prev: hex(&[1; 32]),
            time_ns: 1_700_000_000_000_000_000,
            replaces: Some(hex(&[2; 32])),
            session: None,
            host: None,
            digest: String::new(),
            signature: String::new(),
        }
    }

    /// [`entry`] as version 2: made in session `drive_2` on host `ecu-3`.
    fn entry_v2() -> Entry {
        Entry {
            session: Some("drive_2".into()),
            host: Some("ecu-3".into()),
            ..entry()
        }
    }

    #[test]
    fn a_version_2_entry_binds_its_session_and_host_into_its_digest() {
        let text = String::from_utf8(entry_v2().canonical()).unwrap();
        assert!(
            text.starts_with("recd-chain 2\nsession \"drive_2\"\nhost \"ecu-3\"\nseq 3\n"),
            "{text}"
        );
        let v1 = String::from_utf8(entry().canonical()).unwrap();
        assert_eq!(
            text.split_once("seq ").unwrap().1,
            v1.split_once("seq ").unwrap().1
        );
        let base = entry_v2().compute_digest();
        assert_ne!(entry().compute_digest(), base);
        let changes: [fn(&mut Entry); 2] = [
            |e| e.session = Some("drive".into()),
            |e| e.host = Some("ecu-4".into()),
        ];
        for change in changes {
            let mut changed = entry_v2();
            change(&mut changed);
            assert_ne!(changed.compute_digest(), base, "{changed:?}");
        }
        let line = entry_v2().to_line();
        assert!(
            line.contains("\"session\":\"drive_2\",\"host\":\"ecu-3\""),
            "{line}"
        );
        assert!(!entry().to_line().contains("session"));
    }

    #[test]
    fn a_session_without_a_host_is_not_an_entry_recd_wrote() {
        let mut half = entry_v2();
        half.host = None;
        half.digest = hex(&[3; 32]);
        assert!(half.malformed().unwrap().contains("without the other"));
    }

    #[test]
    fn the_canonical_encoding_is_fixed_and_leaves_out_digest_and_signature() {
        let mut one = entry();
        let text = String::from_utf8(one.canonical()).unwrap();
        assert_eq!(
            text,
            format!(
                "recd-chain 1\nseq 3\nkind finished\nfile \"drive_0001.mcap\"\nbytes 1234\nsha256 {}\nprev {}\ntime_ns 1700000000000000000\nreplaces {}\n",
                "07".repeat(32),
                "01".repeat(32),
                "02".repeat(32)
            )
        );
        let digest = one.compute_digest();
        one.digest = hex(&digest);
        one.signature = "x".into();
        assert_eq!(one.compute_digest(), digest);
    }

    #[test]
    fn every_field_changes_the_digest() {
        let base = entry().compute_digest();
        let changes: [fn(&mut Entry); 8] = [
            |e| e.seq += 1,
            |e| e.kind = Kind::Recorded,
            |e| e.file.push('x'),
            |e| e.bytes += 1,
            |e| e.sha256 = hex(&[8; 32]),
            |e| e.prev = hex(&[9; 32]),
            |e| e.time_ns += 1,
            |e| e.replaces = None,
        ];
        for change in changes {
            let mut changed = entry();
            change(&mut changed);
            assert_ne!(changed.compute_digest(), base, "{changed:?}");
        }
    }

    #[test]
    fn a_name_cannot_pass_for_another_field() {
        let mut sly = entry();
        sly.file = "a\"\nbytes 5".into();
        let text = String::from_utf8(sly.canonical()).unwrap();
        assert!(text.contains("file \"a\\\"\\nbytes 5\"\n"), "{text}");
    }

    #[test]
    fn an_entry_reads_back_from_its_line() {
        let one = entry();
        let line = one.to_line();
        assert!(!line.contains('\n'));
        assert_eq!(serde_json::from_str::<Entry>(&line).unwrap(), one);
    }

    #[test]
    fn a_file_digest_is_the_sha256_of_its_bytes() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f");
        let content: Vec<u8> = (0..3_000_000u32).map(|i| i as u8).collect();
        std::fs::write(&path, &content).unwrap();
        assert_eq!(
            file_digest(&path).unwrap(),
            (content.len() as u64, sha256(&content))
        );
        // The empty file's SHA-256, as sha256sum knows it.
        std::fs::write(&path, b"").unwrap();
        assert_eq!(
            hex(&file_digest(&path).unwrap().1),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
    }
}
