//! The sealed path: every record goes through a [`SealedWriter`] into 64 KiB chunks sealed
//! to the fleet's keys, which leave through the page cache or direct I/O's staging
//! ([`SealedOutput`]). At a sync point the
//! plaintext is padded to a chunk boundary with a padding record, so that everything
//! written so far is in the file as authentic chunks: a power cut then leaves the header
//! and whole chunks, whose plaintext `rec decrypt --recover` reindexes.

use std::fs::File;
use std::io::{self, Write};
use std::path::Path;

use recd_seal::{SealedWriter, CHUNK_SIZE, NONCE_SIZE, TAG_SIZE};

use super::error::WriteError;
use super::sealed_output::SealedOutput;
use super::{EndedFile, FileSummary, StreamWriter};
use crate::direct::MIN_PADDING;
use crate::sealing::Sealing;

/// A sealed chunk as stored: its plaintext and its tag.
const STORED_CHUNK: u64 = (CHUNK_SIZE + TAG_SIZE) as u64;

/// One sealed file being written.
pub(super) struct SealedSink {
    /// `None` once the last chunk was sealed.
    writer: Option<SealedWriter<SealedOutput>>,
    header_len: u64,
    /// Bytes that reached the kernel before the writer was given up (at the end).
    last_len: u64,
    /// The last chunk was sealed and written.
    finished: bool,
    /// The digest of every stored byte, once the last chunk was written (when asked for).
    stored_sha256: Option<[u8; 32]>,
}

impl std::fmt::Debug for SealedSink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SealedSink({} bytes stored)", self.stored_len())
    }
}

impl SealedSink {
    /// Writes the age header of a new file to `file` (a second descriptor of it is kept;
    /// with `direct` its bytes are staged for direct I/O in blocks of at most `staging`
    /// bytes) and keeps the file's key in `sealing.keys` under `path`; with `digest`, every
    /// byte stored is hashed as it leaves.
    pub(super) fn start(
        file: &File,
        path: &Path,
        sealing: &Sealing,
        direct: bool,
        staging: usize,
        digest: bool,
    ) -> Result<Self, WriteError> {
        let seal_error = |source| WriteError::Seal {
            path: path.to_path_buf(),
            source,
        };
        let output = SealedOutput::new(file, path, direct, staging, digest).map_err(|source| {
            WriteError::Create {
                path: path.to_path_buf(),
                source,
            }
        })?;
        let writer = SealedWriter::new(output, &sealing.recipients).map_err(seal_error)?;
        sealing.keys.insert(path, writer.key().clone());
        Ok(Self {
            header_len: writer.header_len(),
            writer: Some(writer),
            last_len: 0,
            finished: false,
            stored_sha256: None,
        })
    }

    fn writer(&mut self) -> io::Result<&mut SealedWriter<SealedOutput>> {
        self.writer
            .as_mut()
            .ok_or_else(|| io::Error::other("the sealed file was already finished"))
    }

    /// Takes `bytes` of plaintext; full chunks leave sealed as more plaintext follows.
    pub(super) fn write(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.writer()?.write_all(bytes)
    }

    /// Seals the open chunk if the plaintext filled it, and hands every sealed chunk to
    /// the kernel.
    pub(super) fn seal_full_chunk(&mut self) -> io::Result<()> {
        let writer = self.writer()?;
        writer.seal_full_chunk()?;
        writer.get_mut().write_out()
    }

    /// Seals the open chunk as the last one.
    pub(super) fn finish(&mut self) -> io::Result<()> {
        let writer = self
            .writer
            .take()
            .ok_or_else(|| io::Error::other("the sealed file was already finished"))?;
        self.last_len = writer.get_ref().in_file();
        let mut output = writer.finish().map_err(io::Error::other)?;
        output.finish()?;
        self.last_len = output.in_file();
        self.stored_sha256 = output.stored_sha256();
        self.finished = true;
        Ok(())
    }

    /// The digest of the whole file as stored, once its last chunk was written (taken:
    /// `None` the second time).
    pub(super) fn take_stored_sha256(&mut self) -> Option<[u8; 32]> {
        self.stored_sha256.take()
    }

    /// Bytes that reached the kernel.
    fn stored_len(&self) -> u64 {
        match &self.writer {
            Some(writer) => writer.get_ref().in_file(),
            None => self.last_len,
        }
    }

    /// Whole sealed chunks in the file: everything after them is a chunk cut short by an
    /// error.
    fn chunks_in_file(&self) -> u64 {
        let payload_start = self.header_len + NONCE_SIZE as u64;
        self.stored_len().saturating_sub(payload_start) / STORED_CHUNK
    }

    /// Plaintext bytes in the file's whole sealed chunks.
    pub(super) fn plaintext_in_file(&self) -> u64 {
        self.chunks_in_file() * CHUNK_SIZE as u64
    }

    /// The file's length up to the end of its last whole chunk (all of it once the last
    /// chunk was sealed).
    pub(super) fn stored_in_file(&self) -> u64 {
        if self.finished {
            return self.last_len;
        }
        let payload_start = self.header_len + NONCE_SIZE as u64;
        if self.stored_len() < payload_start {
            return 0;
        }
        payload_start + self.chunks_in_file() * STORED_CHUNK
    }
}

/// The padding record that brings the plaintext at `position` to a chunk boundary, if it
/// is not on one.
pub(super) fn padding_to_chunk(position: u64) -> Option<usize> {
    let into_chunk = (position % CHUNK_SIZE as u64) as usize;
    if into_chunk == 0 {
        return None;
    }
    let padding = CHUNK_SIZE - into_chunk;
    Some(if padding < MIN_PADDING {
        padding + CHUNK_SIZE
    } else {
        padding
    })
}

impl StreamWriter {
    /// The sealed half of `flush_with` and `stage_with`: the batch and `parts` go into the
    /// open chunk.
    pub(super) fn hand_to_sealed(&mut self, parts: &[&[u8]]) -> Result<(), WriteError> {
        let sink = self.sealed.as_mut().expect("sealing is on");
        let mut result = sink.write(&self.pending);
        self.written += self.pending.len() as u64;
        for part in parts {
            if result.is_err() {
                break;
            }
            result = sink.write(part);
            self.written += part.len() as u64;
        }
        self.pending.clear();
        let stored = sink.stored_in_file();
        if let Err(error) = result {
            return Err(self.fail(0, error));
        }
        self.write_back
            .after_write(&self.file, stored)
            .map_err(|error| self.fail(0, error))
    }

    /// The sealed `flush`: pads the plaintext to a chunk boundary and seals the chunk, so
    /// that everything written so far is in the file; nothing when nothing was written
    /// since the last time.
    pub(super) fn seal_to_here(&mut self) -> Result<(), WriteError> {
        let end = self.bytes_written();
        let sink = self.sealed.as_ref().expect("sealing is on");
        if self.pending.is_empty() && end == sink.plaintext_in_file() {
            return Ok(());
        }
        if let Some(padding) = padding_to_chunk(end) {
            crate::direct::append_padding(&mut self.pending, padding);
        }
        self.flush_with(&[])?;
        let sink = self.sealed.as_mut().expect("sealing is on");
        if let Err(error) = sink.seal_full_chunk() {
            return Err(self.fail(0, error));
        }
        let stored = sink.stored_in_file();
        self.write_back
            .after_write(&self.file, stored)
            .map_err(|error| self.fail(0, error))?;
        self.commit();
        Ok(())
    }

    /// After a write error or a failed close: the file keeps its whole sealed chunks and
    /// nothing after them. It has no last chunk, so age refuses it as cut short, and `rec
    /// decrypt --recover` keeps its records; the counts are those of the last record
    /// boundary in those chunks.
    pub(super) fn end_sealed(self, error: Option<WriteError>) -> EndedFile {
        let sink = self.sealed.as_ref().expect("sealing is on");
        let (in_file, stored) = (sink.plaintext_in_file(), sink.stored_in_file());
        let (_, kept) = self.last_commit_within(in_file);
        let unwritten = self.unwritten_since(&kept);
        let _ = self.file.set_len(stored);
        let _ = self.file.sync_data();
        EndedFile {
            summary: FileSummary {
                path: self.path.clone(),
                bytes: stored,
                message_count: kept.message_count,
                channel_message_counts: super::layout::channel_message_counts(&kept),
                time_range: kept.time_range,
                data_crc: None,
                indexed: false,
                stored_sha256: None,
            },
            unwritten,
            error,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn padding_reaches_the_next_chunk_boundary_with_room_for_a_record() {
        let chunk = CHUNK_SIZE as u64;
        assert_eq!(padding_to_chunk(0), None);
        assert_eq!(padding_to_chunk(chunk), None);
        assert_eq!(padding_to_chunk(1), Some(CHUNK_SIZE - 1));
        assert_eq!(padding_to_chunk(chunk + 100), Some(CHUNK_SIZE - 100));
        // Too little room for a record's opcode and length: one chunk more.
        assert_eq!(padding_to_chunk(chunk - 3), Some(3 + CHUNK_SIZE));
        for position in [5u64, chunk - 9, chunk - 8, 3 * chunk + 77] {
            let padding = padding_to_chunk(position).unwrap();
            assert!(padding >= MIN_PADDING);
            assert_eq!((position + padding as u64) % chunk, 0);
        }
    }
}
