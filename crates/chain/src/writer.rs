//! Appending to a session's chain: one signed entry per line, written with `O_APPEND`
//! and made durable (fdatasync) before the append returns.

use std::io::Write;
use std::path::{Path, PathBuf};

use base64::Engine;

use crate::entry::{hex, Entry, Kind, ZERO_DIGEST};
use crate::key::SigningKey;
use crate::CHAIN_FILE;

/// Why a chain cannot be opened for appending.
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    /// The chain file cannot be read or its unfinished last line cut off.
    #[error("cannot read the chain {}: {source}", path.display())]
    Read {
        /// The chain file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A line of it is not an entry: appending would hide the damage.
    #[error("the chain {} is damaged at line {line}: {reason}", path.display())]
    Damaged {
        /// The chain file.
        path: PathBuf,
        /// The line, from 1.
        line: usize,
        /// What is wrong.
        reason: String,
    },
}

/// Why an entry could not be appended.
#[derive(Debug, thiserror::Error)]
pub enum AppendError {
    /// Writing or syncing the chain file failed; the entry may be missing from it.
    #[error("cannot append to the chain {}: {source}", path.display())]
    Write {
        /// The chain file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
}

/// What a new entry says of its file; the writer adds its place, links and signs it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewEntry {
    /// What the file is.
    pub kind: Kind,
    /// The file, relative to the session directory.
    pub file: String,
    /// Its size.
    pub bytes: u64,
    /// SHA-256 of its bytes.
    pub sha256: [u8; 32],
    /// Now, ns since the Unix epoch.
    pub time_ns: u64,
}

/// A session's chain, open for appending: the entries so far are kept to link and to
/// find what a new entry replaces.
#[derive(Debug)]
pub struct ChainWriter {
    path: PathBuf,
    entries: Vec<Entry>,
}

impl ChainWriter {
    /// Opens the chain of the session directory `dir`, made on the first append. An
    /// unfinished last line (a power cut during an append) is cut off: that entry never
    /// was; any other damage refuses the chain.
    pub fn open(dir: &Path) -> Result<Self, OpenError> {
        let path = dir.join(CHAIN_FILE);
        let read_error = |source| OpenError::Read {
            path: path.clone(),
            source,
        };
        let mut text = match std::fs::read(&path) {
            Ok(text) => text,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => Vec::new(),
            Err(error) => return Err(read_error(error)),
        };
        if !text.is_empty() && !text.ends_with(b"\n") {
            let kept = text
                .iter()
                .rposition(|&b| b == b'\n')
                .map_or(0, |at| at + 1);
            text.truncate(kept);
            let file = std::fs::OpenOptions::new()
                .write(true)
                .open(&path)
                .map_err(read_error)?;
            file.set_len(kept as u64).map_err(read_error)?;
            file.sync_data().map_err(read_error)?;
        }
        let mut entries = Vec::new();
        for (index, line) in text.split(|&b| b == b'\n').enumerate() {
            if line.is_empty() {
                continue;
            }
            let entry: Entry =
                serde_json::from_slice(line).map_err(|error| OpenError::Damaged {
                    path: path.clone(),
                    line: index + 1,
                    reason: error.to_string(),
                })?;
            entries.push(entry);
        }
        Ok(Self { path, entries })
    }

    /// The chain file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The entries so far.
    pub fn entries(&self) -> &[Entry] {
        &self.entries
    }

    /// The newest entry naming `file`.
    pub fn newest(&self, file: &str) -> Option<&Entry> {
        self.entries.iter().rev().find(|entry| entry.file == file)
    }

    /// Whether the newest entry of `file` already says it holds these bytes (it need not
    /// enter again).
    pub fn is_current(&self, file: &str, bytes: u64, sha256: &[u8; 32]) -> bool {
        self.newest(file).is_some_and(|entry| {
            !entry.kind.is_deletion() && entry.bytes == bytes && entry.sha256 == hex(sha256)
        })
    }

    /// Appends `new`, linked to the last entry and signed with `key`; a `finished`,
    /// `deleted` or `offloaded` entry replaces the newest entry of its file. Returns the
    /// entry once it is on disk.
    pub fn append(&mut self, key: &SigningKey, new: NewEntry) -> Result<&Entry, AppendError> {
        let replaces = match new.kind {
            Kind::Finished | Kind::Deleted | Kind::Offloaded => {
                self.newest(&new.file).map(|e| e.digest.clone())
            }
            _ => None,
        };
        let mut entry = Entry {
            seq: self.entries.len() as u64,
            kind: new.kind,
            file: new.file,
            bytes: new.bytes,
            sha256: hex(&new.sha256),
            prev: self
                .entries
                .last()
                .map_or_else(|| ZERO_DIGEST.to_string(), |last| last.digest.clone()),
            time_ns: new.time_ns,
            replaces,
            digest: String::new(),
            signature: String::new(),
        };
        let digest = entry.compute_digest();
        entry.digest = hex(&digest);
        entry.signature = base64::engine::general_purpose::STANDARD.encode(key.sign(&digest));
        self.write_line(&entry)
            .map_err(|source| AppendError::Write {
                path: self.path.clone(),
                source,
            })?;
        self.entries.push(entry);
        Ok(self.entries.last().expect("just pushed"))
    }

    fn write_line(&self, entry: &Entry) -> std::io::Result<()> {
        let created = !self.path.exists();
        let mut file = std::fs::OpenOptions::new()
            .append(true)
            .create(true)
            .open(&self.path)?;
        let mut line = entry.to_line();
        line.push('\n');
        file.write_all(line.as_bytes())?;
        file.sync_data()?;
        if created {
            if let Some(dir) = self.path.parent() {
                std::fs::File::open(dir)?.sync_all()?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::key::SigningKey;

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

    #[test]
    fn entries_link_to_the_one_before_and_finished_replaces_recorded() {
        let dir = tempfile::tempdir().unwrap();
        let key = key();
        let mut chain = ChainWriter::open(dir.path()).unwrap();
        let first = chain
            .append(&key, new(Kind::Recorded, "a.mcap", b"a"))
            .unwrap()
            .clone();
        assert_eq!(first.seq, 0);
        assert_eq!(first.prev, ZERO_DIGEST);
        assert_eq!(first.replaces, None);
        let second = chain
            .append(&key, new(Kind::Finished, "a.mcap", b"aa"))
            .unwrap()
            .clone();
        assert_eq!(second.seq, 1);
        assert_eq!(second.prev, first.digest);
        assert_eq!(second.replaces.as_ref(), Some(&first.digest));
        assert!(chain.is_current("a.mcap", 2, &crate::entry::sha256(b"aa")));
        assert!(!chain.is_current("a.mcap", 1, &crate::entry::sha256(b"a")));

        let again = ChainWriter::open(dir.path()).unwrap();
        assert_eq!(again.entries(), &[first, second]);
    }

    #[test]
    fn an_unfinished_last_line_is_cut_off_and_other_damage_refused() {
        let dir = tempfile::tempdir().unwrap();
        let key = key();
        let mut chain = ChainWriter::open(dir.path()).unwrap();
        chain
            .append(&key, new(Kind::Recorded, "a.mcap", b"a"))
            .unwrap();
        let path = chain.path().to_path_buf();
        let whole = std::fs::read(&path).unwrap();
        let mut torn = whole.clone();
        torn.extend_from_slice(b"{\"seq\":1,\"ki");
        std::fs::write(&path, &torn).unwrap();
        let chain = ChainWriter::open(dir.path()).unwrap();
        assert_eq!(chain.entries().len(), 1);
        assert_eq!(std::fs::read(&path).unwrap(), whole);

        let mut damaged = whole.clone();
        damaged.extend_from_slice(b"not an entry\n");
        std::fs::write(&path, &damaged).unwrap();
        let error = ChainWriter::open(dir.path()).unwrap_err();
        assert!(
            matches!(error, OpenError::Damaged { line: 2, .. }),
            "{error}"
        );
    }
}
