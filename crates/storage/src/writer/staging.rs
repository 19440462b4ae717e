//! Handing encoded records on: to the kernel with as few `writev` calls as possible, or
//! to the direct-I/O staging, which writes whole blocks (large payloads in place); and
//! remembering the record boundaries that reached the file, where a failed file ends.

use std::fs::File;
use std::io::{self, IoSlice, Write};

use super::error::WriteError;
use super::StreamWriter;
use crate::direct;

/// How many payload parts go into one `writev` besides the batch.
const PARTS_PER_WRITEV: usize = 15;

impl StreamWriter {
    /// Remembers that everything handed on so far ends on a record boundary, with the
    /// counts as they are.
    pub(super) fn commit(&mut self) {
        if !self.pending.is_empty() {
            return;
        }
        let in_file = match (&self.direct, &self.sealed) {
            (Some(sink), _) => sink.in_file(),
            (None, Some(sink)) => sink.plaintext_in_file(),
            (None, None) => {
                self.commits.clear();
                self.written
            }
        };
        // Keep the newest commit the file holds and the ones still staged after it.
        while self.commits.len() >= 2 && self.commits[1].0 <= in_file {
            self.commits.pop_front();
        }
        self.commits.push_back((self.written, self.stats.clone()));
    }

    /// Writes the batch followed by `parts` with as few `writev` calls as possible; with
    /// direct I/O, large parts are written in place.
    pub(super) fn flush_with(&mut self, parts: &[&[u8]]) -> Result<(), WriteError> {
        self.checksum(parts);
        if self.direct.is_some() {
            return self.hand_to_direct(parts, true);
        }
        if self.sealed.is_some() {
            return self.hand_to_sealed(parts);
        }
        let record_boundary = self.written;
        let mut groups = parts.chunks(PARTS_PER_WRITEV);
        let mut result = write_all_vectored(
            &mut self.file,
            &self.pending,
            groups.next().unwrap_or(&[]),
            &mut self.written,
        );
        for group in groups {
            if result.is_err() {
                break;
            }
            result = write_all_vectored(&mut self.file, &[], group, &mut self.written);
        }
        self.pending.clear();
        if let Err(error) = result {
            return Err(self.fail(record_boundary, error));
        }
        self.write_back
            .after_write(&self.file, self.written)
            .map_err(|error| self.fail(self.written, error))
    }

    /// Whether the file's bytes are copied into a staging of the writer's own (direct I/O
    /// or sealing) before they leave, rather than handed to the kernel from the batch.
    pub(super) fn stages(&self) -> bool {
        self.direct.is_some() || self.sealed.is_some()
    }

    /// Copies the batch and then `parts` into the staging (see [`Self::stages`]), none
    /// written in place: a payload too small for a direct write of its own is then copied
    /// once, not into the batch first and the staging after.
    pub(super) fn stage_with(&mut self, parts: &[&[u8]]) -> Result<(), WriteError> {
        debug_assert!(self.stages());
        self.checksum(parts);
        if self.direct.is_some() {
            return self.hand_to_direct(parts, false);
        }
        self.hand_to_sealed(parts)
    }

    /// Adds the batch and `parts` to the data section's CRC and to the stored bytes'
    /// digest, when they are computed: an unsealed file stores them as they are, in this
    /// order.
    fn checksum(&mut self, parts: &[&[u8]]) {
        if let Some(crc) = &mut self.data_crc {
            crc.update(&self.pending);
            parts.iter().for_each(|part| crc.update(part));
        }
        if let Some(digest) = &mut self.stored_digest {
            digest.update(&self.pending);
            parts.iter().for_each(|part| digest.update(part));
        }
    }

    /// The direct-I/O half of `flush_with` and `stage_with`: stages the batch and the
    /// parts, but writes a large part in place where `in_place` allows it.
    fn hand_to_direct(&mut self, parts: &[&[u8]], in_place: bool) -> Result<(), WriteError> {
        let sink = self.direct.as_mut().expect("direct I/O is on");
        let mut result = sink.stage(&self.file, &self.pending);
        for part in parts {
            if result.is_err() {
                break;
            }
            result = if in_place && part.len() >= 2 * direct::BLOCK {
                sink.write_in_place(&self.file, part)
            } else {
                sink.stage(&self.file, part)
            };
        }
        self.pending.clear();
        self.written = sink.position();
        let in_file = sink.in_file();
        if let Err(error) = result {
            return Err(self.fail(in_file, error));
        }
        self.write_back
            .after_write(&self.file, in_file)
            .map_err(|error| self.fail(in_file, error))
    }

    /// Leaves the file ending on the last complete record and refuses further writes.
    /// A sealed file ends on its last whole chunk instead.
    pub(super) fn fail(&mut self, record_boundary: u64, error: io::Error) -> WriteError {
        self.failed = true;
        let end = match &self.sealed {
            Some(sink) => sink.stored_in_file(),
            None => record_boundary,
        };
        // Best effort: a file cut mid-record is still recoverable, just less tidy.
        let _ = self.file.set_len(end);
        self.io(error)
    }

    /// Hands `tail` (the end of a file: DataEnd, summary and Footer) on after everything
    /// batched; with direct I/O the staging is then written out, its last block included.
    /// A sealed file's last chunk is sealed with the tail in it.
    pub(super) fn write_tail(&mut self, tail: &[u8]) -> Result<(), WriteError> {
        let record_boundary = self.written;
        if let Some(digest) = &mut self.stored_digest {
            digest.update(tail);
        }
        if let Some(sink) = &mut self.sealed {
            let result = sink.write(tail).and_then(|()| sink.finish());
            self.written += tail.len() as u64;
            if let Err(error) = result {
                return Err(self.fail(0, error));
            }
        } else if let Some(sink) = &mut self.direct {
            let result = sink
                .stage(&self.file, tail)
                .and_then(|()| sink.finish(&self.file));
            self.written = sink.position();
            let in_file = sink.in_file();
            if let Err(error) = result {
                return Err(self.fail(in_file, error));
            }
        } else if let Err(error) = write_all_vectored(&mut self.file, tail, &[], &mut self.written)
        {
            return Err(self.fail(record_boundary, error));
        }
        Ok(())
    }
}

/// Writes `head` and then every part with `writev`, retrying short writes; `written`
/// counts the bytes that reached the kernel, also when an error cuts the write short.
fn write_all_vectored(
    file: &mut File,
    head: &[u8],
    parts: &[&[u8]],
    written: &mut u64,
) -> io::Result<()> {
    let mut storage = [IoSlice::new(&[]); PARTS_PER_WRITEV + 1];
    storage[0] = IoSlice::new(head);
    for (slot, part) in storage[1..].iter_mut().zip(parts) {
        *slot = IoSlice::new(part);
    }
    let mut slices = &mut storage[..parts.len() + 1];
    IoSlice::advance_slices(&mut slices, 0);
    while !slices.is_empty() {
        match file.write_vectored(slices) {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(n) => {
                *written += n as u64;
                IoSlice::advance_slices(&mut slices, n);
            }
            Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
            Err(error) => return Err(error),
        }
    }
    Ok(())
}
