//! Reading with `O_DIRECT`, for background work (finishing, uploads) that reads what the
//! recording wrote: the bytes come from the disk into our memory without
//! passing through the page cache. On a 2-core VM, reading 64 MiB/s through the page
//! cache beside a recording cost its 2-deep queues 4–16× the losses of the same reads
//! with `O_DIRECT` (BENCHMARKS.md, issue 68 item 4).

use std::fs::File;
use std::io::{self, Read};
use std::os::unix::fs::FileExt;

use crate::direct::{set_direct, AlignedBuffer, BLOCK};

/// Bytes read from the disk at once.
const READ_BYTES: usize = 1 << 20;

/// Reads `file`, open for reading and not read from yet, from its first byte to its end:
/// with `O_DIRECT` where its file system takes it, through the page cache where not.
pub fn past_the_cache(file: &File) -> Box<dyn Read + '_> {
    match DirectReader::on(file) {
        Some(direct) => Box::new(direct),
        None => Box::new(file),
    }
}

/// A file read from its first byte to its end with `O_DIRECT`, a block-aligned megabyte at
/// a time.
struct DirectReader<'f> {
    file: &'f File,
    buffer: AlignedBuffer,
    /// The buffer's bytes not yet handed out: `start..end`.
    start: usize,
    end: usize,
    /// File offset of the next read (a multiple of [`BLOCK`] until the end).
    offset: u64,
    /// The last read came up short: the file ends there.
    at_end: bool,
}

impl<'f> DirectReader<'f> {
    /// Reads `file`, open for reading and not read from yet, with `O_DIRECT` from now on;
    /// `None` where its file system refuses it (tmpfs before Linux 6.6, some FUSE file
    /// systems): the caller reads it through the page cache.
    fn on(file: &'f File) -> Option<Self> {
        set_direct(file, true).ok()?;
        Some(Self {
            file,
            buffer: AlignedBuffer::with_len(READ_BYTES),
            start: 0,
            end: 0,
            offset: 0,
            at_end: false,
        })
    }

    /// Reads the next megabyte (or what is left of the file) into the buffer.
    fn refill(&mut self) -> io::Result<()> {
        let read = read_blocks_at(self.file, self.offset, self.buffer.as_bytes_mut())?;
        self.at_end = read < self.buffer.len();
        self.start = 0;
        self.end = read;
        self.offset += read as u64;
        Ok(())
    }
}

impl Read for DirectReader<'_> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        if self.start == self.end {
            if self.at_end {
                return Ok(0);
            }
            self.refill()?;
        }
        let n = out.len().min(self.end - self.start);
        let (start, end) = (self.start, self.start + n);
        out[..n].copy_from_slice(&self.buffer.as_bytes()[start..end]);
        self.start = end;
        Ok(n)
    }
}

/// Reads `len` bytes of `file` (open with `O_DIRECT`) from `offset`, a multiple of
/// [`BLOCK`], into the start of `buffer`, grown to hold them; `UnexpectedEof` where the
/// file ends first.
pub fn read_exact_at(
    file: &File,
    offset: u64,
    len: usize,
    buffer: &mut AlignedBuffer,
) -> io::Result<()> {
    if !offset.is_multiple_of(BLOCK as u64) {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("a direct read at offset {offset}, not a multiple of {BLOCK}"),
        ));
    }
    buffer.grow_to(len);
    // Whole blocks, as O_DIRECT asks: the file's end may lie inside the last one.
    let blocks = len.next_multiple_of(BLOCK);
    let got = read_blocks_at(file, offset, &mut buffer.as_bytes_mut()[..blocks])?;
    if got < len {
        return Err(io::Error::new(
            io::ErrorKind::UnexpectedEof,
            format!("the file ends {got} bytes after offset {offset}, before {len}"),
        ));
    }
    Ok(())
}

/// Fills `blocks` (whole blocks, at a block-aligned address) from `offset` (a multiple of
/// [`BLOCK`]) of `file`, open with `O_DIRECT`; how many bytes it read, fewer where the file
/// ends first.
fn read_blocks_at(file: &File, offset: u64, blocks: &mut [u8]) -> io::Result<usize> {
    let mut got = 0;
    while got < blocks.len() {
        let read = match file.read_at(&mut blocks[got..], offset + got as u64) {
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            other => other?,
        };
        got += read;
        // A regular file reads short of whole blocks only at its end; a whole number of
        // blocks short is read on from there.
        if read == 0 || !read.is_multiple_of(BLOCK) {
            break;
        }
    }
    Ok(got)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Bytes that tell their own offset apart.
    fn pattern(len: usize) -> Vec<u8> {
        (0..len).map(|i| (i * 7 + i / 4099) as u8).collect()
    }

    #[test]
    fn reads_every_byte_in_order_whatever_the_length() {
        // The build's own folder, on a disk's file system (tmpfs, as /tmp may be, refused
        // O_DIRECT before Linux 6.6).
        let dir =
            tempfile::tempdir_in(concat!(env!("CARGO_MANIFEST_DIR"), "/../../target")).unwrap();
        for len in [
            0,
            1,
            BLOCK - 1,
            BLOCK,
            READ_BYTES,
            READ_BYTES + 1,
            3 * READ_BYTES + 4097,
        ] {
            let path = dir.path().join(format!("{len}"));
            let bytes = pattern(len);
            std::fs::write(&path, &bytes).unwrap();
            let file = File::open(&path).unwrap();
            let mut reader = DirectReader::on(&file)
                .unwrap_or_else(|| panic!("{} refuses O_DIRECT", dir.path().display()));
            let mut read = Vec::new();
            // Odd-sized reads, so that they straddle the megabytes read from the disk.
            let mut piece = vec![0; 100_003];
            loop {
                let n = reader.read(&mut piece).unwrap();
                if n == 0 {
                    break;
                }
                read.extend_from_slice(&piece[..n]);
            }
            assert!(
                read == bytes,
                "{len} bytes read back as {} bytes",
                read.len()
            );
        }
    }

    #[test]
    fn reads_parts_at_block_offsets_and_tells_a_file_that_ends_first() {
        let dir =
            tempfile::tempdir_in(concat!(env!("CARGO_MANIFEST_DIR"), "/../../target")).unwrap();
        let path = dir.path().join("parts");
        let bytes = pattern(3 * READ_BYTES + 4097);
        std::fs::write(&path, &bytes).unwrap();
        let file = File::open(&path).unwrap();
        set_direct(&file, true).unwrap();
        let mut buffer = AlignedBuffer::default();
        for (offset, len) in [(0, 1), (BLOCK, READ_BYTES), (3 * READ_BYTES, 4097)] {
            read_exact_at(&file, offset as u64, len, &mut buffer).unwrap();
            assert!(
                buffer.as_bytes()[..len] == bytes[offset..offset + len],
                "{len} bytes at {offset}"
            );
        }
        let past_the_end = read_exact_at(&file, 3 * READ_BYTES as u64, 4098, &mut buffer);
        assert_eq!(
            past_the_end.unwrap_err().kind(),
            io::ErrorKind::UnexpectedEof
        );
        let unaligned = read_exact_at(&file, 100, 10, &mut buffer);
        assert_eq!(unaligned.unwrap_err().kind(), io::ErrorKind::InvalidInput);
    }
}
