//! Opening a sealed file: its header read, its file key unwrapped by an identity (or
//! given), the header's MAC checked, and the payload key derived from the payload nonce.

use std::io::{self, Read, Seek, SeekFrom};

use age::Identity as _;
use age_core::format::{FileKey, FILE_KEY_BYTES};
use age_core::secrecy::ExposeSecret;
use recd_locked::{LockError, Locked};
use ring::aead::LessSafeKey;
use ring::hmac;

use crate::file_key::SealKey;
use crate::identities::Identities;
use crate::keys::{header_mac_key, payload_key};
use crate::layout::Layout;
use crate::parse::{self, HeaderReadError, ParsedHeader};
use crate::stream::NONCE_SIZE;

/// What opens a sealed file: identities that unwrap its file key from a stanza, or the
/// file key itself, kept in memory by the process that wrote the file.
#[derive(Debug, Clone, Copy)]
pub enum Unlock<'a> {
    /// Private keys, one of which the file must be sealed to.
    Identities(&'a Identities),
    /// The file's key.
    Key(&'a SealKey),
}

impl<'a> From<&'a Identities> for Unlock<'a> {
    fn from(identities: &'a Identities) -> Self {
        Self::Identities(identities)
    }
}

impl<'a> From<&'a SealKey> for Unlock<'a> {
    fn from(key: &'a SealKey) -> Self {
        Self::Key(key)
    }
}

/// Why a sealed file could not be opened.
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    /// The header could not be read.
    #[error(transparent)]
    Header(#[from] HeaderReadError),
    /// No identity unwraps the file key from any stanza.
    #[error(
        "none of the identities opens this file: it is sealed to {stanzas} recipient \
         stanza(s) ({types}), none of them for these keys (or a stanza was altered)"
    )]
    NoMatchingIdentity {
        /// The stanzas in the header.
        stanzas: usize,
        /// Their types, comma-separated.
        types: String,
    },
    /// An identity's stanza is malformed.
    #[error("unwrapping the file key: {0}")]
    Unwrap(String),
    /// The file key was unwrapped, but the header's MAC does not match.
    #[error("the header was altered: its MAC does not match its stanzas")]
    HeaderAltered,
    /// The header's MAC does not match the given key.
    #[error(
        "the header's MAC does not match this key: the key is another file's, or the \
         header was altered"
    )]
    WrongKey,
    /// The file ends before the payload nonce is whole.
    #[error("the file ends inside its payload nonce, right after its header: it was cut short")]
    NoNonce,
    /// Reading the file failed.
    #[error("reading the sealed file: {0}")]
    Io(#[source] io::Error),
    /// No locked page could be allocated for the payload key.
    #[error(transparent)]
    KeyMemory(#[from] LockError),
}

/// A file opened: where its chunks are and the key that opens them (in a locked page).
pub(crate) struct Opened {
    pub(crate) layout: Layout,
    pub(crate) payload_key: Locked<LessSafeKey>,
}

/// Opens `inner` (reading its header from its start) with `unlock`.
pub(crate) fn open<R: Read + Seek>(inner: &mut R, unlock: Unlock) -> Result<Opened, OpenError> {
    let header = parse::read(inner)?;
    match unlock {
        Unlock::Key(key) => finish(inner, &header, key.bytes(), OpenError::WrongKey),
        Unlock::Identities(identities) => {
            // age's FileKey (its own heap copy, wiped when dropped) lives only until the
            // payload key is derived.
            let file_key = unwrap(&header, identities)?;
            finish(
                inner,
                &header,
                file_key.expose_secret(),
                OpenError::HeaderAltered,
            )
        }
    }
}

/// The file key, from the first identity that unwraps a stanza.
fn unwrap(header: &ParsedHeader, identities: &Identities) -> Result<FileKey, OpenError> {
    for identity in identities.iter() {
        match identity.unwrap_stanzas(&header.stanzas) {
            Some(Ok(file_key)) => return Ok(file_key),
            Some(Err(error)) => return Err(OpenError::Unwrap(error.to_string())),
            None => {}
        }
    }
    let types: Vec<&str> = header.stanzas.iter().map(|s| s.tag.as_str()).collect();
    Err(OpenError::NoMatchingIdentity {
        stanzas: header.stanzas.len(),
        types: types.join(", "),
    })
}

/// Checks the header's MAC under `file_key` (`mismatch` when it does not match), then
/// reads the payload nonce and derives the payload key.
fn finish<R: Read + Seek>(
    inner: &mut R,
    header: &ParsedHeader,
    file_key: &[u8; FILE_KEY_BYTES],
    mismatch: OpenError,
) -> Result<Opened, OpenError> {
    hmac::verify(&header_mac_key(file_key), &header.mac_input, &header.mac)
        .map_err(|_| mismatch)?;
    let stored_len = inner.seek(SeekFrom::End(0)).map_err(OpenError::Io)?;
    let layout = Layout {
        header_len: header.len,
        stored_len,
    };
    if !layout.has_nonce() {
        return Err(OpenError::NoNonce);
    }
    let mut nonce = [0u8; NONCE_SIZE];
    inner
        .seek(SeekFrom::Start(header.len))
        .and_then(|_| inner.read_exact(&mut nonce))
        .map_err(OpenError::Io)?;
    Ok(Opened {
        layout,
        payload_key: payload_key(file_key, &nonce)?,
    })
}
