//! [`SealedWriter`]: writes an age v1 file whose plaintext is everything written to it.

use std::io::{self, Write};

use recd_locked::LockError;
use ring::rand::{SecureRandom, SystemRandom};

use crate::file_key::SealKey;
use crate::header::{self, HeaderError};
use crate::keys::payload_key;
use crate::recipients::Recipients;
use crate::stream::{ChunkSealer, CHUNK_SIZE, NONCE_SIZE, TAG_SIZE};

/// Why a sealed file could not be started.
#[derive(Debug, thiserror::Error)]
pub enum SealError {
    /// The system's random number generator failed (for the file key or the nonce).
    #[error("the system's random number generator failed")]
    Random,
    /// The header could not be built.
    #[error(transparent)]
    Header(#[from] HeaderError),
    /// Writing the header and nonce failed.
    #[error("writing the age header: {0}")]
    Io(#[source] io::Error),
    /// No locked page could be allocated for the file key or the payload key.
    #[error(transparent)]
    KeyMemory(#[from] LockError),
}

/// Why a sealed file could not be finished.
#[derive(Debug, thiserror::Error)]
pub enum FinishError {
    /// An earlier write failed, so the file has a gap and cannot be finished.
    #[error("an earlier write of this sealed file failed; it cannot be finished")]
    Failed,
    /// The plaintext ends on a chunk that [`SealedWriter::seal_full_chunk`] sealed, so
    /// the last chunk would be empty, which age allows only for an empty payload.
    #[error("the sealed payload ends on a sealed chunk; write its last bytes before finishing")]
    EmptyLastChunk,
    /// Writing the last chunk or flushing failed.
    #[error("writing the last sealed chunk: {0}")]
    Io(#[source] io::Error),
}

/// Writes an age v1 file to `W`: the header and payload nonce at once, then each 64 KiB of
/// plaintext as a sealed chunk as soon as more plaintext follows it; [`Self::finish`] seals
/// the rest as the last chunk.
///
/// Dropped without [`Self::finish`], the file lacks its last chunk and every reader refuses
/// it as truncated (while the chunks before it stay authentic).
pub struct SealedWriter<W: Write> {
    inner: W,
    key: SealKey,
    sealer: ChunkSealer,
    /// The open chunk: its plaintext, then room for its tag.
    chunk: Vec<u8>,
    header_len: u64,
    plaintext_len: u64,
    /// Whether writing a chunk failed: the file has a gap and is refused from then on.
    failed: bool,
}

impl<W: Write> SealedWriter<W> {
    /// Starts a file sealed to `recipients` under a fresh random file key: writes the header
    /// and the payload nonce to `inner`.
    pub fn new(mut inner: W, recipients: &Recipients) -> Result<Self, SealError> {
        let random = SystemRandom::new();
        // Drawn straight into its locked page.
        let mut key = SealKey::zeroed()?;
        random
            .fill(key.bytes_mut())
            .map_err(|_| SealError::Random)?;
        let mut nonce = [0u8; NONCE_SIZE];
        random.fill(&mut nonce).map_err(|_| SealError::Random)?;
        // age's copy of the key, for wrapping, is dropped (and wiped) with this statement.
        let header = header::build(&key.to_age(), recipients)?;
        inner.write_all(&header).map_err(SealError::Io)?;
        inner.write_all(&nonce).map_err(SealError::Io)?;
        let sealer = ChunkSealer::new(payload_key(key.bytes(), &nonce)?);
        Ok(Self {
            inner,
            key,
            sealer,
            chunk: Vec::with_capacity(CHUNK_SIZE + TAG_SIZE),
            header_len: header.len() as u64,
            plaintext_len: 0,
            failed: false,
        })
    }

    /// The bytes of the header; the file's length is this plus
    /// [`sealed_len`](crate::sealed_len) of the plaintext's.
    pub fn header_len(&self) -> u64 {
        self.header_len
    }

    /// The plaintext bytes written so far.
    pub fn plaintext_len(&self) -> u64 {
        self.plaintext_len
    }

    /// Plaintext bytes in sealed chunks handed to the writer below: everything before
    /// the open chunk.
    pub fn plaintext_sealed(&self) -> u64 {
        self.plaintext_len - self.chunk.len() as u64
    }

    /// The bytes of the file handed to the writer below so far.
    pub fn sealed_bytes(&self) -> u64 {
        let chunks = self.plaintext_sealed() / CHUNK_SIZE as u64;
        self.header_len + NONCE_SIZE as u64 + self.plaintext_sealed() + chunks * TAG_SIZE as u64
    }

    /// The bytes the open chunk still takes before it is full.
    pub fn room_in_chunk(&self) -> usize {
        CHUNK_SIZE - self.chunk.len()
    }

    /// The file's key, for reading back what was written ([`crate::SealedReader`]).
    pub fn key(&self) -> &SealKey {
        &self.key
    }

    /// Seals the open chunk now if it is full, as not the last one, and writes it: at a
    /// sync point whose plaintext was padded to a chunk boundary, so that everything
    /// written so far is on its way to the disk as authentic chunks. Later plaintext, or
    /// [`Self::finish`], makes the last chunk.
    pub fn seal_full_chunk(&mut self) -> io::Result<()> {
        if self.failed {
            return Err(io::Error::other(
                "an earlier write of this sealed file failed",
            ));
        }
        if self.chunk.len() == CHUNK_SIZE {
            self.write_full_chunk()?;
        }
        Ok(())
    }

    /// The writer the file goes to.
    pub fn get_ref(&self) -> &W {
        &self.inner
    }

    /// The writer the file goes to, to act on it between writes.
    pub fn get_mut(&mut self) -> &mut W {
        &mut self.inner
    }

    /// Seals the open chunk as the last one, writes it and flushes; returns the writer.
    pub fn finish(mut self) -> Result<W, FinishError> {
        if self.failed {
            return Err(FinishError::Failed);
        }
        // age allows an empty last chunk only as the payload's one chunk.
        if self.chunk.is_empty() && self.plaintext_len > 0 {
            return Err(FinishError::EmptyLastChunk);
        }
        self.sealer.seal(&mut self.chunk, true);
        self.inner.write_all(&self.chunk).map_err(FinishError::Io)?;
        self.inner.flush().map_err(FinishError::Io)?;
        Ok(self.inner)
    }

    /// Seals the full open chunk as not the last one and writes it.
    fn write_full_chunk(&mut self) -> io::Result<()> {
        self.sealer.seal(&mut self.chunk, false);
        let written = self.inner.write_all(&self.chunk);
        // Cleared even on error: a chunk is never sealed twice under the same nonce.
        self.chunk.clear();
        self.failed = written.is_err();
        written
    }
}

impl<W: Write> Write for SealedWriter<W> {
    /// Takes all of `buf`: a full open chunk is sealed only once more plaintext follows
    /// it, so that the last chunk is known only at [`SealedWriter::finish`].
    fn write(&mut self, mut buf: &[u8]) -> io::Result<usize> {
        if self.failed {
            return Err(io::Error::other(
                "an earlier write of this sealed file failed",
            ));
        }
        let len = buf.len();
        while !buf.is_empty() {
            if self.chunk.len() == CHUNK_SIZE {
                self.write_full_chunk()?;
            }
            let take = buf.len().min(CHUNK_SIZE - self.chunk.len());
            self.chunk.extend_from_slice(&buf[..take]);
            self.plaintext_len += take as u64;
            buf = &buf[take..];
        }
        Ok(len)
    }

    /// Flushes the writer below; the open chunk stays open (age cannot seal part of a
    /// chunk).
    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

#[cfg(test)]
mod tests;
