//! Appending to a session's chain: one signed entry per line, written with `O_APPEND`
//! and made durable (fdatasync) before the append returns.

use std::io::Write;
use std::path::{Path, PathBuf};

use base64::Engine;

use crate::entry::{hex, Entry, Kind, Origin, ZERO_DIGEST};
use crate::key::SigningKey;
use crate::links::check_chain;
use crate::problem::ChainProblem;
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

/// What recd last appended to a chain, kept apart from it (recd keeps it in its catalog)
/// so that a chain cut short is known when recd reopens it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Head {
    /// Entries in the chain, the last one included.
    pub entries: u64,
    /// The last entry's digest.
    pub digest: String,
}

/// Why recd does not extend the chain it reopened: its next append begins a new segment
/// ([`Kind::Segment`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Damage {
    /// The chain fails its own checks since its last segment began (the first problem).
    Broken(ChainProblem),
    /// It holds fewer entries than recd had written.
    Shortened {
        /// Entries recd had written.
        written: u64,
        /// Entries found.
        found: u64,
    },
    /// The entry recd wrote last is not where it was: another holds its place.
    Rewritten {
        /// Its number.
        seq: u64,
    },
}

impl std::fmt::Display for Damage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Broken(problem) => write!(f, "it is broken: {problem}"),
            Self::Shortened { written, found } => write!(
                f,
                "it holds {found} entries where recd had written {written}: it was cut"
            ),
            Self::Rewritten { seq } => write!(
                f,
                "its entry {seq} is not the one recd wrote last: it was rewritten"
            ),
        }
    }
}

/// A session's chain, open for appending: the entries so far are kept to link and to
/// find what a new entry replaces.
#[derive(Debug)]
pub struct ChainWriter {
    path: PathBuf,
    entries: Vec<Entry>,
    /// Lines in the file, entries or not: the next entry's number.
    lines: u64,
    /// Why the next append begins a new segment.
    damage: Option<Damage>,
    /// What recd had written, as it was told on opening (the segment records it).
    known: Option<Head>,
    /// Where new entries are made (version 2 entries), if told.
    origin: Option<Origin>,
}

impl ChainWriter {
    /// Opens the chain of the session directory `dir`, made on the first append. An
    /// unfinished last line (a power cut during an append) is cut off: that entry never
    /// was. The chain is checked (links, digests, signatures against `key`'s public key,
    /// since its last segment) and against `known`, what recd last appended to it: where
    /// it is broken, shorter, or rewritten, [`ChainWriter::damage`] says so and the next
    /// append begins a new segment instead of extending it.
    pub fn open(dir: &Path, key: &SigningKey, known: Option<Head>) -> Result<Self, OpenError> {
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
        let lines: Vec<Result<Entry, String>> = String::from_utf8_lossy(&text)
            .lines()
            .map(Entry::from_line)
            .collect();
        let (entries, problems) = check_chain(&lines, Some(&key.public_key()));
        let damage = damage(&lines, problems, known.as_ref());
        Ok(Self {
            path,
            entries,
            lines: lines.len() as u64,
            damage,
            known,
            origin: None,
        })
    }

    /// Entries appended from now on say they were made in `origin` (version 2).
    pub fn set_origin(&mut self, origin: Origin) {
        self.origin = Some(origin);
    }

    /// The chain file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The entries so far.
    pub fn entries(&self) -> &[Entry] {
        &self.entries
    }

    /// Why the next append begins a new segment, if it does.
    pub fn damage(&self) -> Option<&Damage> {
        self.damage.as_ref()
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
    /// `deleted` or `offloaded` entry replaces the newest entry of its file. Where the
    /// chain was found damaged, a `segment` entry goes first. Returns the entries appended,
    /// once they are on disk.
    pub fn append(&mut self, key: &SigningKey, new: NewEntry) -> Result<Vec<Entry>, AppendError> {
        let mut appended = Vec::new();
        if self.damage.is_some() {
            let known = self.known.as_ref();
            let segment = NewEntry {
                kind: Kind::Segment,
                file: CHAIN_FILE.to_string(),
                bytes: known.map_or(0, |head| head.entries),
                sha256: known
                    .and_then(|head| unhex(&head.digest))
                    .unwrap_or([0; 32]),
                time_ns: new.time_ns,
            };
            appended.push(self.append_one(key, segment)?);
            self.damage = None;
        }
        appended.push(self.append_one(key, new)?);
        Ok(appended)
    }

    fn append_one(&mut self, key: &SigningKey, new: NewEntry) -> Result<Entry, AppendError> {
        let replaces = match new.kind {
            Kind::Finished | Kind::Deleted | Kind::Offloaded => {
                self.newest(&new.file).map(|e| e.digest.clone())
            }
            _ => None,
        };
        let prev = match (new.kind, self.entries.last()) {
            (Kind::Segment, _) | (_, None) => ZERO_DIGEST.to_string(),
            (_, Some(last)) => last.digest.clone(),
        };
        let mut entry = Entry {
            seq: self.lines,
            kind: new.kind,
            file: new.file,
            bytes: new.bytes,
            sha256: hex(&new.sha256),
            prev,
            time_ns: new.time_ns,
            replaces,
            session: self.origin.as_ref().map(|origin| origin.session.clone()),
            host: self.origin.as_ref().map(|origin| origin.host.clone()),
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
        self.entries.push(entry.clone());
        self.lines += 1;
        Ok(entry)
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

/// Why a chain of `lines`, with `problems` found in it, must not be extended, given what
/// recd `known` it had written last.
fn damage(
    lines: &[Result<Entry, String>],
    problems: Vec<ChainProblem>,
    known: Option<&Head>,
) -> Option<Damage> {
    // Problems before the last segment were found when it began; it is not begun again.
    let segment_line = problems
        .iter()
        .filter_map(|problem| match problem {
            ChainProblem::NewSegment { line, .. } => Some(*line),
            _ => None,
        })
        .max()
        .unwrap_or(0);
    let broken = problems.into_iter().find(|problem| {
        !matches!(problem, ChainProblem::NewSegment { .. })
            && problem.line().is_some_and(|line| line >= segment_line)
    });
    if let Some(problem) = broken {
        return Some(Damage::Broken(problem));
    }
    let known = known.filter(|head| head.entries > 0)?;
    let found = lines.len() as u64;
    if found < known.entries {
        return Some(Damage::Shortened {
            written: known.entries,
            found,
        });
    }
    let seq = known.entries - 1;
    let last = lines.get(seq as usize).and_then(|line| line.as_ref().ok());
    match last {
        Some(entry) if entry.digest == known.digest => None,
        _ => Some(Damage::Rewritten { seq }),
    }
}

/// The 32 bytes a digest's hex spells, if it is one.
fn unhex(text: &str) -> Option<[u8; 32]> {
    let mut bytes = [0u8; 32];
    hex::decode_to_slice(text, &mut bytes).ok()?;
    Some(bytes)
}

#[cfg(test)]
mod tests;
