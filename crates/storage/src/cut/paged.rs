//! An input's bytes in file order for a scan that passes over most of them: read by
//! positioned reads through a small buffer, so that the header of a record whose body is
//! passed over costs a read of about a page, and the bodies passed over are not read.

use std::io;

use super::pread::Pread;
use crate::recover::Source;

/// Reads end on a page boundary where they may, so that a header's read touches one page.
const PAGE: u64 = 4096;
/// The least a read asks for past what is needed: after a record larger than the buffer
/// was passed over, the next is likely large too.
const MIN_READ: u64 = PAGE;
/// The most: while records are small, reads double up to this, so that their bodies come
/// with their headers in few reads.
const MAX_READ: u64 = 64 << 10;

/// The first `size` bytes of an input (a file still being recorded grows past them).
pub(super) struct Paged<'a, 'f> {
    input: &'a Pread<'f>,
    size: u64,
    /// Bytes of the file from `start`.
    buffer: Vec<u8>,
    start: u64,
    /// The next byte to hand out.
    position: u64,
    /// How far past the position the next read reaches.
    read_size: u64,
}

impl<'a, 'f> Paged<'a, 'f> {
    pub fn new(input: &'a Pread<'f>, size: u64) -> Self {
        Self {
            input,
            size,
            buffer: Vec::new(),
            start: 0,
            position: 0,
            // The first read, of the header, schemas and channels, asks for the most.
            read_size: MAX_READ / 2,
        }
    }

    fn buffered_end(&self) -> u64 {
        self.start + self.buffer.len() as u64
    }

    /// Reads so that the buffer holds the `len` bytes at the position (checked to lie in
    /// the file), keeping what it holds of them already.
    fn fill(&mut self, len: u64) -> io::Result<()> {
        let buffered_end = self.buffered_end();
        self.read_size = if self.position > buffered_end {
            MIN_READ
        } else {
            (self.read_size * 2).min(MAX_READ)
        };
        if (self.start..buffered_end).contains(&self.position) {
            self.buffer.drain(..(self.position - self.start) as usize);
        } else {
            self.buffer.clear();
        }
        self.start = self.position;
        let ahead = (self.position + self.read_size) / PAGE * PAGE;
        let end = (self.position + len).max(ahead).min(self.size);
        let from = self.buffer.len();
        self.buffer.resize((end - self.start) as usize, 0);
        let read_from = self.start + from as u64;
        self.input
            .read_exact_at(&mut self.buffer[from..], read_from)
    }
}

impl Source for Paged<'_, '_> {
    fn take(&mut self, len: usize) -> io::Result<&[u8]> {
        let end = self
            .position
            .checked_add(len as u64)
            .filter(|&end| end <= self.size)
            .ok_or_else(|| io::Error::from(io::ErrorKind::UnexpectedEof))?;
        if self.position < self.start || end > self.buffered_end() {
            if let Err(error) = self.fill(len as u64) {
                self.buffer.clear();
                return Err(error);
            }
        }
        let from = (self.position - self.start) as usize;
        self.position = end;
        Ok(&self.buffer[from..from + len])
    }

    fn skip(&mut self, len: usize) -> io::Result<()> {
        self.position = self
            .position
            .checked_add(len as u64)
            .filter(|&end| end <= self.size)
            .ok_or_else(|| io::Error::from(io::ErrorKind::UnexpectedEof))?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use super::*;

    #[test]
    fn bytes_passed_over_are_not_read() {
        let mut file = tempfile::tempfile().unwrap();
        let bytes: Vec<u8> = (0..1_000_000u32).map(|i| (i % 251) as u8).collect();
        file.write_all(&bytes).unwrap();
        let input = Pread::new(&file);
        let mut paged = Paged::new(&input, bytes.len() as u64);
        assert_eq!(paged.take(10).unwrap(), &bytes[..10]);
        assert_eq!(input.bytes_read(), MAX_READ);
        paged.skip(500_000).unwrap();
        assert_eq!(paged.take(20).unwrap(), &bytes[500_010..500_030]);
        // After a skip past the buffer, from 500,010 to the next page boundary.
        let page_end = 123 * PAGE;
        assert_eq!(input.bytes_read(), MAX_READ + (page_end - 500_010));
        // A large take reads what the buffer lacks of it, exactly.
        assert_eq!(paged.take(200_000).unwrap(), &bytes[500_030..700_030]);
        assert_eq!(
            input.bytes_read(),
            MAX_READ + (page_end - 500_010) + (700_030 - page_end)
        );
        paged.skip(299_960).unwrap();
        assert_eq!(paged.take(10).unwrap(), &bytes[999_990..], "up to the end");
        assert_eq!(input.bytes_read(), MAX_READ + (700_030 - 500_010) + 10);
        assert!(paged.take(1).is_err());
        assert!(paged.skip(1).is_err());
    }
}
