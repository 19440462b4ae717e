//! [`SealedReader`]: reads a sealed file's plaintext, anywhere in it, decrypting one chunk
//! at a time.

use std::io::{self, Read, Seek, SeekFrom};

use crate::chunks::{ChunkError, ChunkOpener};
use crate::file_key::SealKey;
use crate::identities::Identities;
use crate::layout::Layout;
use crate::open::{open, OpenError, Unlock};
use crate::stream::{CHUNK_SIZE, TAG_SIZE};

/// Reads the plaintext of an age v1 file, with [`Read`] and [`Seek`] over the plaintext:
/// chunk `i` is read from where the stored length puts it, so that a seek costs one chunk.
/// The chunk read last stays decrypted, in one buffer allocated at opening.
///
/// A chunk that fails authentication, or a file that ends without its last chunk, is an
/// `io::Error` whose message names the chunk and where it is stored, and whose inner error
/// is a [`ChunkError`]. The end of the plaintext is reported (a read of 0 bytes) only
/// once the last chunk has been authenticated as the last.
pub struct SealedReader<R: Read + Seek> {
    inner: R,
    layout: Layout,
    opener: ChunkOpener,
    /// The chunk in the buffer and its plaintext length.
    cached: Option<(u64, usize)>,
    /// The plaintext position.
    pos: u64,
    /// The last chunk was authenticated as the last.
    end_checked: bool,
    /// A file still being written: its whole chunks are read, the last of them not the
    /// payload's last, and their end is the plaintext's end.
    growing: bool,
}

impl<R: Read + Seek> SealedReader<R> {
    /// Opens `inner` with identities, one of which the file must be sealed to.
    pub fn open(inner: R, identities: &Identities) -> Result<Self, OpenError> {
        Self::unlock(inner, Unlock::Identities(identities))
    }

    /// Opens `inner` with its key, kept in memory since it was written.
    pub fn open_with_key(inner: R, key: &SealKey) -> Result<Self, OpenError> {
        Self::unlock(inner, Unlock::Key(key))
    }

    /// Opens `inner` with identities or a key.
    pub fn unlock(mut inner: R, unlock: Unlock) -> Result<Self, OpenError> {
        let opened = open(&mut inner, unlock)?;
        Ok(Self {
            inner,
            layout: opened.layout,
            opener: ChunkOpener::new(opened.payload_key),
            cached: None,
            pos: 0,
            end_checked: false,
            growing: false,
        })
    }

    /// Opens with its key a file that may still be being written (by this process, which
    /// kept the key): a finished file reads as with [`Self::open_with_key`]; otherwise
    /// its whole chunks are its plaintext so far, and their end reads as the end (a chunk
    /// being written after them is left out).
    pub fn open_growing_with_key(inner: R, key: &SealKey) -> Result<Self, OpenError> {
        let mut reader = Self::open_with_key(inner, key)?;
        if reader.check_end().is_err() {
            reader.cached = None;
            reader.growing = true;
            let whole = reader.layout.full_chunks();
            reader.layout.stored_len = reader.layout.chunk_offset(whole);
        }
        Ok(reader)
    }

    /// The plaintext bytes the stored length implies (for a whole file, its plaintext's
    /// length).
    pub fn plaintext_len(&self) -> u64 {
        self.layout.plaintext_len()
    }

    /// Bytes of the header, up to and including its MAC line.
    pub fn header_len(&self) -> u64 {
        self.layout.header_len
    }

    /// Bytes of the file as stored.
    pub fn stored_len(&self) -> u64 {
        self.layout.stored_len
    }

    /// The reader of the stored file.
    pub fn get_ref(&self) -> &R {
        &self.inner
    }

    /// The reader of the stored file, giving up the plaintext position.
    pub fn into_inner(self) -> R {
        self.inner
    }

    /// Makes chunk `index` the one in the buffer; its plaintext length.
    fn load(&mut self, index: u64) -> io::Result<usize> {
        if let Some((cached, len)) = self.cached {
            if cached == index {
                return Ok(len);
            }
        }
        self.cached = None;
        let len = self.open_chunk(index, None)?;
        self.cached = Some((index, len));
        Ok(len)
    }

    /// Opens chunk `index` into `out`, or the buffer; its plaintext length.
    fn open_chunk(&mut self, index: u64, out: Option<&mut [u8]>) -> io::Result<usize> {
        let opening = self
            .opener
            .open(&mut self.inner, &self.layout, index, out)?;
        match opening.verdict {
            Ok(last) => {
                self.end_checked |= last;
                Ok(opening.plaintext)
            }
            // A growing file's last whole chunk is authentic, not the payload's last.
            Err(ChunkError::CutAfter { .. }) if self.growing => Ok(opening.plaintext),
            Err(error) => Err(error.into_io()),
        }
    }

    /// At or past the end of the plaintext: checks that the file ends in an authentic
    /// last chunk.
    fn check_end(&mut self) -> io::Result<()> {
        match self.layout.chunks() {
            _ if self.end_checked || self.growing => Ok(()),
            0 => Err(ChunkError::NoChunk.into_io()),
            n => self.load(n - 1).map(|_| ()),
        }
    }
}

impl<R: Read + Seek> Read for SealedReader<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        if self.pos >= self.plaintext_len() {
            self.check_end()?;
            return Ok(0);
        }
        let index = self.pos / CHUNK_SIZE as u64;
        let at = (self.pos % CHUNK_SIZE as u64) as usize;
        // A whole chunk that fits: opened straight into `buf`, without a copy.
        let whole = self.layout.chunk_stored_len(index).saturating_sub(TAG_SIZE);
        if at == 0 && whole > 0 && buf.len() >= whole && self.cached.is_none_or(|c| c.0 != index) {
            let len = self.open_chunk(index, Some(buf))?;
            self.pos += len as u64;
            return Ok(len);
        }
        let len = self.load(index)?;
        let take = buf.len().min(len - at);
        buf[..take].copy_from_slice(&self.opener.plaintext(len)[at..at + take]);
        self.pos += take as u64;
        Ok(take)
    }
}

impl<R: Read + Seek> Seek for SealedReader<R> {
    /// Moves in the plaintext; a position past its end reads as its end.
    fn seek(&mut self, to: SeekFrom) -> io::Result<u64> {
        let (base, delta) = match to {
            SeekFrom::Start(at) => {
                self.pos = at;
                return Ok(at);
            }
            SeekFrom::End(delta) => (self.plaintext_len(), delta),
            SeekFrom::Current(delta) => (self.pos, delta),
        };
        match base.checked_add_signed(delta) {
            Some(at) => {
                self.pos = at;
                Ok(at)
            }
            None => Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "seek to a negative or overflowing position of the plaintext",
            )),
        }
    }
}

impl<R: Read + Seek> std::fmt::Debug for SealedReader<R> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SealedReader")
            .field("layout", &self.layout)
            .field("pos", &self.pos)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests;
