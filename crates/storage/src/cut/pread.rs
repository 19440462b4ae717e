//! A file read by positioned reads that counts every byte it reads, so that a cut can say
//! exactly what it read of each input.

use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};
use std::os::unix::fs::FileExt;

/// Reads `file` at a position of its own (a `pread` per read), counting the bytes.
pub(super) struct Pread<'f> {
    file: &'f File,
    position: u64,
    read: u64,
}

impl<'f> Pread<'f> {
    pub fn new(file: &'f File) -> Self {
        Self {
            file,
            position: 0,
            read: 0,
        }
    }

    /// Bytes read so far.
    pub fn bytes_read(&self) -> u64 {
        self.read
    }

    /// Exactly `len` bytes at `offset`, in one positioned read (a few where the kernel
    /// returns less).
    pub fn read_range(&mut self, offset: u64, len: u64) -> io::Result<Vec<u8>> {
        let len = usize::try_from(len).map_err(|_| io::Error::from(io::ErrorKind::OutOfMemory))?;
        let mut bytes = vec![0u8; len];
        self.file.read_exact_at(&mut bytes, offset)?;
        self.read += len as u64;
        Ok(bytes)
    }
}

impl Read for Pread<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.file.read_at(buf, self.position)?;
        self.position += n as u64;
        self.read += n as u64;
        Ok(n)
    }
}

impl Seek for Pread<'_> {
    fn seek(&mut self, to: SeekFrom) -> io::Result<u64> {
        self.position = match to {
            SeekFrom::Start(at) => at,
            SeekFrom::End(delta) => self
                .file
                .metadata()?
                .len()
                .checked_add_signed(delta)
                .ok_or(io::ErrorKind::InvalidInput)?,
            SeekFrom::Current(delta) => self
                .position
                .checked_add_signed(delta)
                .ok_or(io::ErrorKind::InvalidInput)?,
        };
        Ok(self.position)
    }
}
