//! Tamper evidence for recordings. Each file a session writes enters, once closed, a
//! per-session hash chain: one JSON line per entry naming the file (relative to the
//! session directory), its size and SHA-256, the previous entry's digest, the time and
//! what the file is (recorded, finished, cut, …); the entry's digest is SHA-256 over its
//! canonical encoding and is signed with the ECU's Ed25519 key. The chain is one
//! append-only file beside the recordings ([`CHAIN_FILE`]). [`verify()`] checks the
//! chain's links and signatures, then every file against its newest entry.
//!
//! Plain data and functions: [`SigningKey`] / [`PublicKey`] read the keys as openssl
//! writes them, [`ChainWriter`] appends, [`verify()`] reads.

#![warn(missing_docs)]

mod entry;
mod key;
mod links;
mod objects;
mod problem;
mod verify;
mod writer;

pub use entry::{digest_of, file_digest, hex, Entry, Kind, Origin, ZERO_DIGEST};
pub use key::{KeyError, PublicKey, SigningKey};
pub use objects::{object_name, write_object, ENTRIES_DIR};
pub use problem::ChainProblem;
pub use verify::{
    read_chain, verify, verify_expecting, Expected, FileReport, FileState, ReadError, Report,
    Signatures,
};
pub use writer::{AppendError, ChainWriter, Damage, Head, NewEntry, OpenError};

/// The chain's file name in the session directory.
pub const CHAIN_FILE: &str = "recd-chain.jsonl";

/// The folder, beside the session's files in the bucket (and in the data directory on the
/// vehicle), that holds incidents' cut files: a `cut` entry names its file under it.
pub const INCIDENTS_DIR: &str = "incidents";
