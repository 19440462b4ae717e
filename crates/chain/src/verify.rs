//! Verifying a session directory against its chain: the chain's own links and
//! signatures first, then every file it names against its newest entry, then the files
//! on disk it does not name.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::entry::{file_digest, hex, Entry, Kind, Origin};
use crate::key::PublicKey;
use crate::links::check_chain;
use crate::objects::check_objects;
use crate::problem::ChainProblem;
use crate::{CHAIN_FILE, INCIDENTS_DIR};

/// Why there is no chain to verify.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    /// The directory holds no chain file.
    #[error("{} holds no chain ({CHAIN_FILE}): its files were not signed", dir.display())]
    NoChain {
        /// The directory.
        dir: PathBuf,
    },
    /// The chain file cannot be read.
    #[error("cannot read the chain {}: {source}", path.display())]
    Read {
        /// The chain file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
}

/// Whether the signatures were checked.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "signatures", rename_all = "snake_case")]
pub enum Signatures {
    /// Against the key with this fingerprint.
    Checked {
        /// [`PublicKey::fingerprint`].
        key: String,
    },
    /// No public key was given: links and digests only.
    NotChecked,
}

/// What a file is, as the chain tells it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum FileState {
    /// Its bytes are those of its newest entry (or, where the chain says recd deleted
    /// it from the vehicle, of the entry the deletion replaced: a copy from the bucket).
    Intact,
    /// It exists, but its bytes are not those of its newest entry (or, where the chain
    /// says recd deleted it, of the entry the deletion replaced).
    Altered,
    /// The chain names it, it is not on disk.
    Missing,
    /// recd's retention deleted it, as the chain records; not expected on disk.
    Deleted,
    /// recd deleted it on the vehicle once its upload was verified, as the chain records;
    /// expected in the bucket, not on the vehicle.
    Offloaded,
    /// On disk, but not in the chain.
    Unlisted,
}

impl FileState {
    /// The state as reports spell it.
    pub fn name(self) -> &'static str {
        match self {
            Self::Intact => "intact",
            Self::Altered => "altered",
            Self::Missing => "missing",
            Self::Deleted => "deleted",
            Self::Offloaded => "offloaded",
            Self::Unlisted => "unlisted",
        }
    }

    /// Whether the file is as the chain says it must be.
    pub fn is_good(self) -> bool {
        matches!(self, Self::Intact | Self::Deleted | Self::Offloaded)
    }
}

/// One file's verdict.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FileReport {
    /// The file, relative to the session directory, as the chain names it.
    pub file: String,
    /// Its verdict.
    pub state: FileState,
    /// The kind of its newest entry (none when unlisted).
    pub kind: Option<Kind>,
    /// The kinds of its older entries, oldest first: what the newest one replaced (a
    /// finished file replaces the recorded one; those bytes are gone on purpose).
    pub replaced: Vec<Kind>,
    /// Its size on disk, when it is there.
    pub bytes: Option<u64>,
}

/// What [`verify`] found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Report {
    /// The chain file.
    pub chain: PathBuf,
    /// Its entries.
    pub entries: usize,
    /// Whether signatures were checked.
    #[serde(flatten)]
    pub signatures: Signatures,
    /// Where its entries were made, as its first version 2 entry says (none for a chain
    /// of version 1 entries).
    pub origin: Option<Origin>,
    /// What is wrong with the chain itself.
    pub problems: Vec<ChainProblem>,
    /// Every file: those the chain names, in the order they entered, then the unlisted.
    pub files: Vec<FileReport>,
}

impl Report {
    /// Whether the chain is whole and every file as it says.
    pub fn is_good(&self) -> bool {
        self.problems.is_empty() && self.files.iter().all(|f| f.state.is_good())
    }
}

/// The chain of session directory `dir`: each line parsed, or why not.
pub fn read_chain(dir: &Path) -> Result<Vec<Result<Entry, String>>, ReadError> {
    let path = dir.join(CHAIN_FILE);
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
            return Err(ReadError::NoChain {
                dir: dir.to_path_buf(),
            })
        }
        Err(source) => return Err(ReadError::Read { path, source }),
    };
    Ok(text.lines().map(Entry::from_line).collect())
}

/// What the chain is checked against beyond itself: what the fleet last saw of it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Expected {
    /// It has at least this many entries (`rec verify --min-entries`).
    pub min_entries: Option<usize>,
    /// It holds an entry of this digest (`rec verify --head`).
    pub head: Option<String>,
}

impl Expected {
    /// What of it the chain's `lines` do not meet.
    fn unmet(&self, lines: &[Result<Entry, String>]) -> Vec<ChainProblem> {
        let mut problems = Vec::new();
        if let Some(expected) = self.min_entries.filter(|&n| lines.len() < n) {
            problems.push(ChainProblem::TooFewEntries {
                found: lines.len(),
                expected,
            });
        }
        if let Some(head) = &self.head {
            let head = head.to_ascii_lowercase();
            if !lines.iter().flatten().any(|entry| entry.digest == head) {
                problems.push(ChainProblem::HeadNotFound { digest: head });
            }
        }
        problems
    }
}

/// Verifies the session directory `dir` (or a folder the bucket's objects of one session
/// were downloaded to): the chain, with signatures against `key` when given, then each
/// file. A `cut` entry's file (`incidents/<name>`) is looked for in `dir`, then in the
/// data directory above it (where recd keeps incidents on the vehicle).
pub fn verify(dir: &Path, key: Option<&PublicKey>) -> Result<Report, ReadError> {
    verify_expecting(dir, key, &Expected::default())
}

/// [`verify`], and the chain checked against its entry objects ([`ENTRIES_DIR`]: entries
/// they hold that the chain lacks are named, and their files judged) and against
/// `expected`.
///
/// [`ENTRIES_DIR`]: crate::ENTRIES_DIR
pub fn verify_expecting(
    dir: &Path,
    key: Option<&PublicKey>,
    expected: &Expected,
) -> Result<Report, ReadError> {
    let lines = read_chain(dir)?;
    let (mut entries, mut problems) = check_chain(&lines, key);
    let (lost, object_problems) = check_objects(dir, &lines, key);
    problems.extend(object_problems);
    problems.extend(expected.unmet(&lines));
    entries.extend(lost);
    let mut by_file: BTreeMap<&str, Vec<&Entry>> = BTreeMap::new();
    let mut order = Vec::new();
    for entry in entries.iter().filter(|entry| entry.kind != Kind::Segment) {
        let seen = by_file.entry(entry.file.as_str()).or_default();
        if seen.is_empty() {
            order.push(entry.file.as_str());
        }
        seen.push(entry);
    }
    let mut files: Vec<FileReport> = order
        .iter()
        .map(|name| check_file(dir, name, &by_file[name]))
        .collect();
    for name in files_on_disk(dir) {
        if !by_file.contains_key(name.as_str()) {
            let bytes = std::fs::metadata(dir.join(&name)).ok().map(|m| m.len());
            files.push(FileReport {
                file: name,
                state: FileState::Unlisted,
                kind: None,
                replaced: Vec::new(),
                bytes,
            });
        }
    }
    Ok(Report {
        chain: dir.join(CHAIN_FILE),
        entries: lines.len(),
        signatures: key.map_or(Signatures::NotChecked, |key| Signatures::Checked {
            key: key.fingerprint(),
        }),
        origin: lines.iter().flatten().find_map(Entry::origin),
        problems,
        files,
    })
}

/// The verdict on the file `name`, whose entries are `entries` (oldest first).
fn check_file(dir: &Path, name: &str, entries: &[&Entry]) -> FileReport {
    let newest = entries.last().expect("a file has an entry");
    let replaced = entries[..entries.len() - 1]
        .iter()
        .map(|e| e.kind)
        .collect();
    let found = locate(dir, name);
    let bytes = found
        .as_ref()
        .and_then(|path| std::fs::metadata(path).ok())
        .map(|m| m.len());
    // A file recd deleted from the vehicle may be here all the same: downloaded from the
    // bucket, or put back. It must then hold the bytes of the entry its deletion replaced.
    let expected = match newest.kind {
        Kind::Deleted | Kind::Offloaded => (newest.replaces.as_ref())
            .and_then(|replaced| entries.iter().find(|e| e.digest == *replaced)),
        _ => Some(newest),
    };
    let state = match (&found, newest.kind) {
        (None, Kind::Deleted) => FileState::Deleted,
        (None, Kind::Offloaded) => FileState::Offloaded,
        (None, _) => FileState::Missing,
        (Some(path), _) => match (file_digest(path), expected) {
            (Ok((size, digest)), Some(expected))
                if size == expected.bytes && hex(&digest) == expected.sha256 =>
            {
                FileState::Intact
            }
            _ => FileState::Altered,
        },
    };
    FileReport {
        file: name.to_string(),
        state,
        kind: Some(newest.kind),
        replaced,
        bytes,
    }
}

/// Where the file the chain names `name` is: in `dir`, or, for an incident's cut, in the
/// data directory above it.
fn locate(dir: &Path, name: &str) -> Option<PathBuf> {
    if name.split('/').any(|part| part == ".." || part.is_empty()) {
        return None;
    }
    let mut candidates = vec![dir.join(name)];
    if name.starts_with(&format!("{INCIDENTS_DIR}/")) {
        if let Some(data_dir) = dir.parent() {
            candidates.push(data_dir.join(name));
        }
    }
    candidates.into_iter().find(|path| path.is_file())
}

/// The files of `dir` (and of its `incidents/` folder) a session may have written:
/// regular files, no dot files (finishing's staging copies), not the chain.
fn files_on_disk(dir: &Path) -> Vec<String> {
    let mut names = Vec::new();
    for (folder, prefix) in [
        (dir.to_path_buf(), String::new()),
        (dir.join(INCIDENTS_DIR), format!("{INCIDENTS_DIR}/")),
    ] {
        let Ok(listing) = std::fs::read_dir(&folder) else {
            continue;
        };
        for entry in listing.filter_map(Result::ok) {
            let name = entry.file_name().to_string_lossy().into_owned();
            let regular = entry.file_type().is_ok_and(|t| t.is_file());
            if regular && !name.starts_with('.') && name != CHAIN_FILE {
                names.push(format!("{prefix}{name}"));
            }
        }
    }
    names.sort();
    names
}

#[cfg(test)]
mod tests;
