//! Where a sealed file's chunks go: through the page cache, or with direct I/O through
//! the aligned staging (a sealed chunk is 16 bytes longer than a block multiple, so its
//! bytes are staged; the disk then reads whole blocks from the staging, without the page
//! cache's copy and write-back).

use std::fs::File;
use std::io::{self, Write};
use std::path::Path;

use super::stored_digest::StoredDigest;
use crate::direct::DirectSink;

/// The staging of a sealed file written with direct I/O.
struct Direct {
    sink: DirectSink,
    /// The same file opened without `O_DIRECT`, for the partial block at a seal point.
    buffered: File,
    /// The end of the partial block written through `buffered` last.
    tail_end: u64,
}

/// A descriptor of the file being sealed, counting what reached the kernel.
pub(super) struct SealedOutput {
    file: File,
    direct: Option<Direct>,
    /// Without direct I/O: bytes handed to the kernel.
    written: u64,
    /// The digest of the stored bytes (header, nonce, sealed chunks), when asked for.
    digest: Option<StoredDigest>,
}

impl SealedOutput {
    /// A second descriptor of `file` (at `path`); with `direct`, staged in blocks of at
    /// most `staging` bytes; with `digest`, hashing what it stores.
    pub(super) fn new(
        file: &File,
        path: &Path,
        direct: bool,
        staging: usize,
        digest: bool,
    ) -> io::Result<Self> {
        let direct = match direct {
            true => Some(Direct {
                sink: DirectSink::new(staging),
                buffered: std::fs::OpenOptions::new().write(true).open(path)?,
                tail_end: 0,
            }),
            false => None,
        };
        Ok(Self {
            file: file.try_clone()?,
            direct,
            written: 0,
            digest: digest.then(StoredDigest::new),
        })
    }

    /// The digest of every byte stored, when asked for.
    pub(super) fn stored_sha256(self) -> Option<[u8; 32]> {
        self.digest.map(StoredDigest::finish)
    }

    /// The bytes of the file handed to the kernel, from its start.
    pub(super) fn in_file(&self) -> u64 {
        match &self.direct {
            Some(direct) => direct.sink.in_file().max(direct.tail_end),
            None => self.written,
        }
    }

    /// At a seal point: with direct I/O, the whole staged blocks go to the disk and the
    /// partial last one through the page cache, so that every sealed chunk is in the file.
    pub(super) fn write_out(&mut self) -> io::Result<()> {
        let Some(direct) = &mut self.direct else {
            return Ok(());
        };
        direct.sink.write_full_blocks(&self.file)?;
        direct.tail_end = direct.sink.write_partial_through(&direct.buffered)?;
        Ok(())
    }

    /// At the end: everything staged goes to the file.
    pub(super) fn finish(&mut self) -> io::Result<()> {
        match &mut self.direct {
            Some(direct) => direct.sink.finish(&self.file),
            None => Ok(()),
        }
    }
}

impl Write for SealedOutput {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match &mut self.direct {
            Some(direct) => {
                direct.sink.stage(&self.file, buf)?;
                if let Some(digest) = &mut self.digest {
                    digest.update(buf);
                }
                Ok(buf.len())
            }
            None => {
                let n = self.file.write(buf)?;
                self.written += n as u64;
                if let Some(digest) = &mut self.digest {
                    digest.update(&buf[..n]);
                }
                Ok(n)
            }
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}
