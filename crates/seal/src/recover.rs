//! [`recover`]: the authentic part of a damaged or cut sealed file, every chunk in order up
//! to the first that fails.

use std::io::{self, Read, Seek, Write};

use crate::chunks::{ChunkError, ChunkOpener};
use crate::open::{open, OpenError, Unlock};

/// What [`recover`] wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Recovered {
    /// Plaintext bytes written.
    pub plaintext_bytes: u64,
    /// Authentic chunks whose plaintext was written.
    pub chunks: u64,
    /// The last chunk was reached and authentic, and nothing follows it: the file is
    /// whole.
    pub complete: bool,
    /// Why recovery stopped before the end, naming the chunk; `None` when complete.
    pub stopped: Option<String>,
    /// The same reason, as an error value.
    pub stop: Option<ChunkError>,
}

/// Why nothing could be recovered, or writing it failed.
#[derive(Debug, thiserror::Error)]
pub enum RecoverError {
    /// The file could not be opened (its header, or no key for it).
    #[error(transparent)]
    Open(#[from] OpenError),
    /// Reading the sealed file failed.
    #[error("reading the sealed file: {0}")]
    Read(#[source] io::Error),
    /// Writing the plaintext failed.
    #[error("writing the recovered plaintext: {0}")]
    Write(#[source] io::Error),
}

/// Writes to `out` the plaintext of every authentic chunk of `inner`, in order, until the
/// first chunk that fails authentication or the end of the file. A chunk that fails as a
/// middle chunk is also tried as the last one (so the last chunk is recognised wherever
/// the file ends). The header must be whole and open with `unlock`.
pub fn recover<'a, R: Read + Seek, W: Write + ?Sized>(
    mut inner: R,
    unlock: impl Into<Unlock<'a>>,
    out: &mut W,
) -> Result<Recovered, RecoverError> {
    let opened = open(&mut inner, unlock.into())?;
    let layout = opened.layout;
    let mut opener = ChunkOpener::new(opened.payload_key);
    let mut recovered = Recovered {
        plaintext_bytes: 0,
        chunks: 0,
        complete: false,
        stopped: None,
        stop: None,
    };
    let mut index = 0;
    loop {
        let opening = opener
            .open(&mut inner, &layout, index, None)
            .map_err(RecoverError::Read)?;
        if opening.plaintext > 0 || opening.verdict.is_ok() {
            out.write_all(opener.plaintext(opening.plaintext))
                .map_err(RecoverError::Write)?;
            recovered.plaintext_bytes += opening.plaintext as u64;
            recovered.chunks += 1;
        }
        match opening.verdict {
            Ok(false) => index += 1,
            Ok(true) => {
                recovered.complete = true;
                break;
            }
            Err(error) => {
                recovered.stopped = Some(error.to_string());
                recovered.stop = Some(error);
                break;
            }
        }
    }
    out.flush().map_err(RecoverError::Write)?;
    Ok(recovered)
}
