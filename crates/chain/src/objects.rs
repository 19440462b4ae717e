//! The chain's entries, each also kept as an object of its own beside the chain
//! ([`ENTRIES_DIR`]): uploaded once and never overwritten, so that the bucket's history of
//! a session's chain cannot shrink when the vehicle's chain is cut. `rec verify` checks
//! the chain against them.

use std::io::Write;
use std::path::{Path, PathBuf};

use crate::entry::Entry;
use crate::key::PublicKey;
use crate::links::check_entry;
use crate::problem::ChainProblem;

/// The folder beside the chain that holds one object per entry.
pub const ENTRIES_DIR: &str = "recd-chain.d";

/// The name of `entry`'s object: its number and digest, so that an entry made under the
/// same number after the chain was cut gets a name of its own.
pub fn object_name(entry: &Entry) -> String {
    format!("{:010}-{}.json", entry.seq, entry.digest)
}

/// Writes `entry` as its object (one line) in the session directory `dir`, durably, and
/// returns its path. An object already there is left as it is.
pub fn write_object(dir: &Path, entry: &Entry) -> std::io::Result<PathBuf> {
    let folder = dir.join(ENTRIES_DIR);
    let created = !folder.exists();
    std::fs::create_dir_all(&folder)?;
    let path = folder.join(object_name(entry));
    let mut file = match std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&path)
    {
        Ok(file) => file,
        Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists => return Ok(path),
        Err(error) => return Err(error),
    };
    let mut line = entry.to_line();
    line.push('\n');
    file.write_all(line.as_bytes())?;
    file.sync_data()?;
    std::fs::File::open(&folder)?.sync_all()?;
    if created {
        std::fs::File::open(dir)?.sync_all()?;
    }
    Ok(path)
}

/// What the entry objects of `dir` say of its chain, whose lines are `lines`: the entries
/// the chain lacks (valid, signed by `key` when given), and the problems.
pub(crate) fn check_objects(
    dir: &Path,
    lines: &[Result<Entry, String>],
    key: Option<&PublicKey>,
) -> (Vec<Entry>, Vec<ChainProblem>) {
    let mut lost = Vec::new();
    let mut problems = Vec::new();
    for (name, entry) in read_objects(dir) {
        let bad = |reason: String| ChainProblem::BadObject {
            object: name.clone(),
            reason,
        };
        let entry = match entry {
            Ok(entry) => entry,
            Err(reason) => {
                problems.push(bad(reason));
                continue;
            }
        };
        if let Some(fault) = check_entry(&entry, key) {
            problems.push(bad(fault.describe().to_string()));
            continue;
        }
        if name != object_name(&entry) {
            problems.push(bad(format!(
                "its name is not its entry's ({})",
                object_name(&entry)
            )));
            continue;
        }
        let in_chain = usize::try_from(entry.seq)
            .ok()
            .and_then(|seq| lines.get(seq))
            .is_some_and(|line| line.as_ref().is_ok_and(|e| e.digest == entry.digest));
        if !in_chain {
            problems.push(ChainProblem::NotInChain {
                seq: entry.seq,
                file: entry.file.clone(),
                digest: entry.digest.clone(),
            });
            lost.push(entry);
        }
    }
    lost.sort_by_key(|entry| entry.seq);
    (lost, problems)
}

/// The objects in `dir`'s [`ENTRIES_DIR`], by name: each parsed, or why not.
fn read_objects(dir: &Path) -> Vec<(String, Result<Entry, String>)> {
    let Ok(listing) = std::fs::read_dir(dir.join(ENTRIES_DIR)) else {
        return Vec::new();
    };
    let mut objects: Vec<(String, Result<Entry, String>)> = listing
        .filter_map(Result::ok)
        .filter(|found| found.file_type().is_ok_and(|t| t.is_file()))
        .map(|found| {
            let name = found.file_name().to_string_lossy().into_owned();
            let entry = std::fs::read_to_string(found.path())
                .map_err(|error| format!("cannot read it: {error}"))
                .and_then(|text| Entry::from_line(text.trim_end_matches('\n')));
            (name, entry)
        })
        .collect();
    objects.sort_by(|a, b| a.0.cmp(&b.0));
    objects
}
