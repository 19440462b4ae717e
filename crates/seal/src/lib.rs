//! Sealed recordings: files written as age v1 files (C2SP's age specification) at
//! recording speed.
//!
//! The plaintext of a sealed file is exactly the bytes given to [`SealedWriter`]; the file
//! is encrypted to the fleet's X25519 public keys (`age1…`, [`Recipients`]), so the machine
//! that writes it holds no key that could read it back. Anyone with a matching identity
//! reads it with `age -d -i IDENTITY`.
//!
//! The header and the wrapping of the file key to each recipient are the `age` crate's
//! (its X25519 recipients); the header's MAC and the payload (age's STREAM of 64 KiB
//! ChaCha20-Poly1305 chunks) are sealed here with `ring`, because the `age` crate's own
//! streaming writer is too slow for the recording path.
//!
//! Reading is here too: [`SealedReader`] reads the plaintext anywhere in a file (with the
//! fleet's [`Identities`], or the [`SealKey`] kept by the writer), [`recover`] keeps the
//! authentic part of a file cut short, and [`SealedHeader`] tells what a file is without a
//! key.
#![warn(missing_docs)]

mod chunks;
mod file_key;
mod header;
mod identities;
mod keys;
mod layout;
mod limits;
mod open;
mod parse;
mod reader;
mod recipients;
mod recover;
mod sealed_header;
mod stream;
mod writer;

pub use chunks::ChunkError;
pub use file_key::SealKey;
pub use header::{HeaderError, VERSION_LINE};
pub use identities::{Identities, IdentitiesError, IdentitiesFileError};
pub use limits::MAX_STANZAS;
pub use open::{OpenError, Unlock};
pub use parse::HeaderReadError;
pub use reader::SealedReader;
pub use recipients::{Recipients, RecipientsError, RecipientsFileError, Shown};
pub use recover::{recover, RecoverError, Recovered};
pub use sealed_header::SealedHeader;
pub use stream::{chunk_nonce, sealed_len, CHUNK_SIZE, NONCE_SIZE, TAG_SIZE};
pub use writer::{FinishError, SealError, SealedWriter};
