//! What can be wrong with a chain itself, as `rec verify` names it.

use serde::Serialize;

use crate::entry::Origin;

/// Something wrong with the chain itself: it was edited, cut or forged.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "problem", rename_all = "snake_case")]
pub enum ChainProblem {
    /// A line is not an entry.
    Unreadable {
        /// The line, from 1.
        line: usize,
        /// What is wrong.
        reason: String,
    },
    /// An entry is not where its number says: entries were removed, added or reordered.
    OutOfPlace {
        /// The line, from 1.
        line: usize,
        /// The entry's own number.
        seq: u64,
    },
    /// An entry's `prev` is not the digest of the entry before it.
    BrokenLink {
        /// The line, from 1.
        line: usize,
    },
    /// An entry's digest is not that of what it says: it was edited.
    AlteredEntry {
        /// The line, from 1.
        line: usize,
    },
    /// An entry's signature is not the key's: forged, or signed by another key.
    BadSignature {
        /// The line, from 1.
        line: usize,
    },
    /// An entry replaces no earlier entry of its file.
    BadReplaces {
        /// The line, from 1.
        line: usize,
    },
    /// An entry was made in another session or on another host than the entries before it
    /// (version 2 entries): entries of another chain.
    OtherOrigin {
        /// The line, from 1.
        line: usize,
        /// Where it says it was made.
        origin: Origin,
        /// Where the entries before it were made.
        chain: Origin,
    },
    /// recd reopened the chain, found it broken or shorter than it had written it, and
    /// began a new segment here rather than extend it.
    NewSegment {
        /// The line of the `segment` entry, from 1.
        line: usize,
        /// What recd found, as the entry records it.
        found: String,
    },
    /// The session's entry objects (`recd-chain.d/`, each uploaded once and never
    /// overwritten) hold an entry the chain does not: the chain was cut or rewritten.
    NotInChain {
        /// The entry's number.
        seq: u64,
        /// The file it names.
        file: String,
        /// Its digest.
        digest: String,
    },
    /// An entry object is not an entry recd signed.
    BadObject {
        /// The object's name under `recd-chain.d/`.
        object: String,
        /// What is wrong.
        reason: String,
    },
    /// The chain has fewer entries than the fleet last saw (`rec verify --min-entries`).
    TooFewEntries {
        /// Entries in the chain.
        found: usize,
        /// Entries expected at least.
        expected: usize,
    },
    /// The entry the fleet last saw as the chain's head is not in it (`rec verify --head`).
    HeadNotFound {
        /// The digest looked for.
        digest: String,
    },
}

impl ChainProblem {
    /// The chain's line it is at, when it is at one.
    pub fn line(&self) -> Option<usize> {
        match self {
            Self::Unreadable { line, .. }
            | Self::OutOfPlace { line, .. }
            | Self::BrokenLink { line }
            | Self::AlteredEntry { line }
            | Self::BadSignature { line }
            | Self::BadReplaces { line }
            | Self::OtherOrigin { line, .. }
            | Self::NewSegment { line, .. } => Some(*line),
            Self::NotInChain { .. }
            | Self::BadObject { .. }
            | Self::TooFewEntries { .. }
            | Self::HeadNotFound { .. } => None,
        }
    }
}

impl std::fmt::Display for ChainProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Unreadable { line, reason } => write!(f, "line {line} is not an entry: {reason}"),
            Self::OutOfPlace { line, seq } => write!(
                f,
                "line {line} holds entry {seq}: entries were removed, added or reordered"
            ),
            Self::BrokenLink { line } => write!(
                f,
                "line {line} does not link to the entry before it (broken link)"
            ),
            Self::AlteredEntry { line } => {
                write!(f, "line {line} was edited: its digest does not match it")
            }
            Self::BadSignature { line } => write!(
                f,
                "line {line} is not signed by the key: forged or signed by another key"
            ),
            Self::BadReplaces { line } => {
                write!(f, "line {line} replaces no earlier entry of its file")
            }
            Self::OtherOrigin {
                line,
                origin,
                chain,
            } => write!(
                f,
                "line {line} was made in session {} on host {}, not where the entries before it \
                 were (session {} on host {}): it is another chain's",
                origin.session, origin.host, chain.session, chain.host
            ),
            Self::NewSegment { line, found } => write!(
                f,
                "a new segment begins at line {line}: when recd reopened the chain, {found}; \
                 it did not extend it"
            ),
            Self::NotInChain { seq, file, digest } => write!(
                f,
                "entry {seq} ({file}, digest {digest}) is in the session's entry objects but not \
                 in the chain: the chain was cut or rewritten after it"
            ),
            Self::BadObject { object, reason } => {
                write!(f, "the entry object {object} is not an entry recd signed: {reason}")
            }
            Self::TooFewEntries { found, expected } => write!(
                f,
                "the chain has {found} entries, fewer than the {expected} expected (--min-entries): \
                 it was cut"
            ),
            Self::HeadNotFound { digest } => write!(
                f,
                "no entry has the digest {digest} (--head): the chain was cut or rewritten"
            ),
        }
    }
}
