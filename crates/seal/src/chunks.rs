//! Opening the payload's chunks one at a time, in one buffer: each chunk is read from where
//! the layout puts it and authenticated in place, as not the last chunk or as the last.

use std::io::{self, Read, Seek, SeekFrom};

use recd_locked::Locked;
use ring::aead::{Aad, LessSafeKey, Nonce, Tag};

use crate::layout::{Layout, STORED_CHUNK};
use crate::stream::{chunk_nonce, CHUNK_SIZE, TAG_SIZE};

/// Why the payload cannot be read through (or past) a chunk. Chunks are numbered from 0;
/// chunk `i` is stored at byte `header + 16 + i × 65552`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ChunkError {
    /// The chunk's tag matches neither as a middle chunk nor as the last.
    #[error(
        "chunk {chunk} at byte {offset} failed authentication: the file was altered or damaged"
    )]
    Altered {
        /// The chunk's number, from 0.
        chunk: u64,
        /// Where it is stored.
        offset: u64,
    },
    /// The file ends after an authentic chunk that is not the last one.
    #[error(
        "the file ends after chunk {chunk} without its last chunk: it was cut short (a power \
         cut?); rec decrypt --recover keeps the authentic part"
    )]
    CutAfter {
        /// The last chunk in the file, from 0.
        chunk: u64,
    },
    /// The file ends inside a chunk that does not authenticate as the last one.
    #[error(
        "the file ends inside chunk {chunk} at byte {offset} ({stored} of {STORED_CHUNK} \
         bytes), which is not an authentic last chunk: it was cut short (a power cut?) or \
         altered; rec decrypt --recover keeps the authentic part"
    )]
    CutInside {
        /// The chunk's number, from 0.
        chunk: u64,
        /// Where it is stored.
        offset: u64,
        /// The bytes of it in the file.
        stored: usize,
    },
    /// The file ends right after its header and payload nonce.
    #[error(
        "the file ends after its header, before its first chunk: it was cut short (a power \
         cut?) and holds no plaintext"
    )]
    NoChunk,
    /// An authentic last chunk is followed by more bytes.
    #[error(
        "chunk {chunk} at byte {offset} is the last chunk, but {trailing} bytes follow it: \
         the file was altered"
    )]
    Trailing {
        /// The chunk's number, from 0.
        chunk: u64,
        /// Where it is stored.
        offset: u64,
        /// Bytes after it.
        trailing: u64,
    },
    /// An authentic last chunk is empty after other chunks, which age forbids.
    #[error(
        "chunk {chunk} at byte {offset} is an empty last chunk, which age allows only as a \
         file's only chunk: the file was altered"
    )]
    EmptyLast {
        /// The chunk's number, from 0.
        chunk: u64,
        /// Where it is stored.
        offset: u64,
    },
}

impl ChunkError {
    /// The error as an `io::Error` holding it: `UnexpectedEof` for a file cut short,
    /// `InvalidData` for one altered.
    pub(crate) fn into_io(self) -> io::Error {
        let kind = match self {
            Self::CutAfter { .. } | Self::CutInside { .. } | Self::NoChunk => {
                io::ErrorKind::UnexpectedEof
            }
            _ => io::ErrorKind::InvalidData,
        };
        io::Error::new(kind, self)
    }
}

/// An authentic chunk's plaintext bytes (now at the start of the buffer given, or of the
/// opener's), and whether the
/// payload goes on after it (`Ok(false)`), ends with it (`Ok(true)`), or cannot go on
/// (`Err`: the plaintext, if any, is authentic but nothing after it is).
pub(crate) struct Opening {
    pub(crate) plaintext: usize,
    pub(crate) verdict: Result<bool, ChunkError>,
}

/// Opens chunks into one buffer, allocated once, or straight into the caller's.
pub(crate) struct ChunkOpener {
    /// The payload key, in a locked page.
    key: Locked<LessSafeKey>,
    /// The plaintext of the chunk opened last into it.
    buf: Box<[u8]>,
    /// Where `inner` stands, when known: sequential chunks need no seek.
    position: Option<u64>,
}

impl ChunkOpener {
    /// An opener of chunks sealed under `key`.
    pub(crate) fn new(key: Locked<LessSafeKey>) -> Self {
        Self {
            key,
            buf: vec![0; CHUNK_SIZE].into_boxed_slice(),
            position: None,
        }
    }

    /// The plaintext of the chunk opened last, `len` bytes of it.
    pub(crate) fn plaintext(&self, len: usize) -> &[u8] {
        &self.buf[..len]
    }

    /// Reads chunk `index` (one of `layout.chunks()`) and authenticates it: as not the
    /// last chunk first, unless it is the file's last stored chunk, where it is tried as
    /// the last first. A chunk that fails one way is read again (a failed open wipes the
    /// buffer) and tried the other. The plaintext goes to `out` when given (which must
    /// hold the chunk's plaintext), else to the opener's buffer.
    pub(crate) fn open<R: Read + Seek>(
        &mut self,
        inner: &mut R,
        layout: &Layout,
        index: u64,
        mut out: Option<&mut [u8]>,
    ) -> io::Result<Opening> {
        let chunks = layout.chunks();
        if chunks == 0 {
            return Ok(refused(ChunkError::NoChunk));
        }
        let offset = layout.chunk_offset(index);
        let stored = layout.chunk_stored_len(index);
        let stored_last = index + 1 == chunks;
        let cut_inside = ChunkError::CutInside {
            chunk: index,
            offset,
            stored,
        };
        if stored < TAG_SIZE {
            return Ok(refused(cut_inside));
        }
        let first_as_last = stored_last;
        let at = (offset, stored, index);
        if let Some(plaintext) = self.try_open(inner, at, first_as_last, out.as_deref_mut())? {
            return Ok(self.judge(layout, index, plaintext, first_as_last));
        }
        // A middle chunk is always full; only a full chunk can be tried as not the last.
        if !stored_last || stored as u64 == STORED_CHUNK {
            if let Some(plaintext) = self.try_open(inner, at, !first_as_last, out)? {
                return Ok(self.judge(layout, index, plaintext, !first_as_last));
            }
        }
        Ok(refused(if stored_last && (stored as u64) < STORED_CHUNK {
            cut_inside
        } else {
            ChunkError::Altered {
                chunk: index,
                offset,
            }
        }))
    }

    /// What an authentic chunk means where it stands.
    fn judge(&self, layout: &Layout, index: u64, plaintext: usize, last: bool) -> Opening {
        let chunks = layout.chunks();
        let offset = layout.chunk_offset(index);
        let verdict = match (last, index + 1 == chunks) {
            (false, false) => Ok(false),
            (false, true) => Err(ChunkError::CutAfter { chunk: index }),
            (true, _) if plaintext == 0 && index > 0 => Err(ChunkError::EmptyLast {
                chunk: index,
                offset,
            }),
            (true, true) => Ok(true),
            (true, false) => Err(ChunkError::Trailing {
                chunk: index,
                offset,
                trailing: layout.stored_len - offset - STORED_CHUNK,
            }),
        };
        Opening { plaintext, verdict }
    }

    /// Reads the chunk stored at `offset` (`stored` bytes, chunk number `index`) and opens
    /// it in place, into `out` or the opener's buffer, with the nonce of chunk `index`
    /// (`last` or not); its plaintext length when it is authentic.
    fn try_open<R: Read + Seek>(
        &mut self,
        inner: &mut R,
        (offset, stored, index): (u64, usize, u64),
        last: bool,
        out: Option<&mut [u8]>,
    ) -> io::Result<Option<usize>> {
        if self.position != Some(offset) {
            inner.seek(SeekFrom::Start(offset))?;
        }
        self.position = None;
        let target = match out {
            Some(out) => &mut out[..stored - TAG_SIZE],
            None => &mut self.buf[..stored - TAG_SIZE],
        };
        let mut tag = [0u8; TAG_SIZE];
        inner.read_exact(target)?;
        inner.read_exact(&mut tag)?;
        self.position = Some(offset + stored as u64);
        let nonce = Nonce::assume_unique_for_key(chunk_nonce(index, last));
        let opened =
            self.key
                .open_in_place_separate_tag(nonce, Aad::empty(), Tag::from(tag), target, 0..);
        Ok(opened.ok().map(|plaintext| plaintext.len()))
    }
}

/// No plaintext, and why.
fn refused(error: ChunkError) -> Opening {
    Opening {
        plaintext: 0,
        verdict: Err(error),
    }
}
