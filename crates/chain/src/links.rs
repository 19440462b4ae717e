//! The chain's own checks, line by line: each entry in its place, linked to the one before
//! it, its digest its own and signed by the key, replacing only an entry of its file, made
//! where the entries before it were. A `segment` entry begins anew: it links to nothing,
//! and says why recd began it.

use base64::Engine;

use crate::entry::{hex, Entry, Kind, Origin, ZERO_DIGEST};
use crate::key::PublicKey;
use crate::problem::ChainProblem;

/// The entries that parsed, and what is wrong with the chain, from its lines (each parsed,
/// or why not); signatures are checked when `key` is given.
pub(crate) fn check_chain(
    lines: &[Result<Entry, String>],
    key: Option<&PublicKey>,
) -> (Vec<Entry>, Vec<ChainProblem>) {
    let mut problems = Vec::new();
    let mut entries: Vec<Entry> = Vec::new();
    let mut prev = Some(ZERO_DIGEST.to_string());
    let mut chain_origin: Option<Origin> = None;
    for (index, line) in lines.iter().enumerate() {
        let line_number = index + 1;
        let entry = match line {
            Ok(entry) => entry,
            Err(reason) => {
                problems.push(ChainProblem::Unreadable {
                    line: line_number,
                    reason: reason.clone(),
                });
                prev = None;
                continue;
            }
        };
        if entry.seq != index as u64 {
            problems.push(ChainProblem::OutOfPlace {
                line: line_number,
                seq: entry.seq,
            });
        }
        if entry.kind == Kind::Segment {
            problems.push(ChainProblem::NewSegment {
                line: line_number,
                found: segment_found(entry, &lines[..index]),
            });
            prev = Some(ZERO_DIGEST.to_string());
        }
        // After an unreadable line the link cannot be checked; the line said so already.
        if prev.as_ref().is_some_and(|prev| *prev != entry.prev) {
            problems.push(ChainProblem::BrokenLink { line: line_number });
        }
        if let Some(origin) = entry.origin() {
            match &chain_origin {
                None => chain_origin = Some(origin),
                Some(chain) if *chain != origin => problems.push(ChainProblem::OtherOrigin {
                    line: line_number,
                    origin,
                    chain: chain.clone(),
                }),
                Some(_) => {}
            }
        }
        problems.extend(check_entry(entry, key).map(|problem| problem.at(line_number)));
        if let Some(replaces) = &entry.replaces {
            let found = entries
                .iter()
                .any(|e| e.digest == *replaces && e.file == entry.file);
            if !found {
                problems.push(ChainProblem::BadReplaces { line: line_number });
            }
        }
        prev = Some(entry.digest.clone());
        entries.push(entry.clone());
    }
    (entries, problems)
}

/// What is wrong with one entry on its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum EntryFault {
    /// Its digest is not that of what it says.
    Altered,
    /// Its signature is not the key's.
    BadSignature,
}

impl EntryFault {
    /// The fault as a problem of the chain's line `line`.
    fn at(self, line: usize) -> ChainProblem {
        match self {
            Self::Altered => ChainProblem::AlteredEntry { line },
            Self::BadSignature => ChainProblem::BadSignature { line },
        }
    }

    /// The fault in words.
    pub(crate) fn describe(self) -> &'static str {
        match self {
            Self::Altered => "its digest does not match it (edited)",
            Self::BadSignature => "it is not signed by the key (forged or another key's)",
        }
    }
}

/// Whether `entry` is what its digest says, and signed by `key` when given.
pub(crate) fn check_entry(entry: &Entry, key: Option<&PublicKey>) -> Option<EntryFault> {
    let digest = entry.compute_digest();
    if hex(&digest) != entry.digest {
        return Some(EntryFault::Altered);
    }
    let key = key?;
    let signature = base64::engine::general_purpose::STANDARD
        .decode(&entry.signature)
        .unwrap_or_default();
    (!key.verifies(&digest, &signature)).then_some(EntryFault::BadSignature)
}

/// What recd found when it began the segment `entry`, whose lines before it are `before`:
/// the chain shorter than the entries it had written, the last of them not there, or the
/// chain broken (its problems are named above the segment).
fn segment_found(entry: &Entry, before: &[Result<Entry, String>]) -> String {
    let written = entry.bytes;
    let found = before.len() as u64;
    if written > found {
        return format!(
            "the chain held {found} entries where recd had written {written}: {} were cut",
            written - found
        );
    }
    let last = written
        .checked_sub(1)
        .and_then(|seq| before.get(seq as usize));
    match last {
        Some(Ok(last)) if last.digest != entry.sha256 => format!(
            "entry {} was not the one recd had written (digest {}): the chain was rewritten",
            written - 1,
            entry.sha256
        ),
        _ => "the chain was broken (see the problems before this line)".to_string(),
    }
}
