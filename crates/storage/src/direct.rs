//! Direct I/O: the disk reads large payloads straight from the caller's memory, with no
//! copy into the page cache.
//!
//! A file opened with `O_DIRECT` takes only writes whose file offset, length and memory
//! address are all multiples of the block size. [`StreamWriter`](crate::StreamWriter)
//! arranges that for a large payload by putting a padding record (opcode
//! [`PADDING_OPCODE`], private, so readers skip it) before its message, sized so that the
//! payload's file offset and its memory address are congruent modulo [`BLOCK`]. Then the
//! part of the payload between its first and last block boundary goes to the disk in
//! place; everything else (record headers, small messages, the unaligned head and tail of
//! large payloads) is copied into an aligned staging buffer that leaves in whole blocks.

use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::fs::FileExt;

/// The alignment of direct writes: file offsets, lengths and memory addresses. 4 KiB
/// satisfies every common disk (logical blocks of 512 B or 4 KiB).
pub const BLOCK: usize = 4096;

/// The private opcode of recd's padding records. Its content is zeros; readers skip it,
/// as the MCAP specification asks of every opcode from 0x80 on.
pub const PADDING_OPCODE: u8 = 0xF0;

/// The smallest padding record: opcode and length field.
pub(crate) const MIN_PADDING: usize = 9;

/// Appends a padding record of exactly `len` (at least [`MIN_PADDING`]) bytes.
pub(crate) fn append_padding(out: &mut Vec<u8>, len: usize) {
    debug_assert!(len >= MIN_PADDING);
    out.push(PADDING_OPCODE);
    out.extend_from_slice(&((len - MIN_PADDING) as u64).to_le_bytes());
    out.resize(out.len() + len - MIN_PADDING, 0);
}

/// The length of the padding record to write at file offset `at` so that the byte
/// `distance` bytes after it lands on an offset congruent to `address` modulo [`BLOCK`].
pub(crate) fn padding_for(at: u64, distance: usize, address: usize) -> usize {
    let landing = (at as usize).wrapping_add(distance) % BLOCK;
    let padding = (address % BLOCK + BLOCK - landing) % BLOCK;
    if padding < MIN_PADDING {
        padding + BLOCK
    } else {
        padding
    }
}

/// Stages bytes in whole blocks for a file opened with `O_DIRECT` and writes large
/// payloads in place.
#[derive(Debug)]
pub(crate) struct DirectSink {
    staging: AlignedBuffer,
    /// Bytes staged.
    len: usize,
    /// File offset of the first staged byte: everything before it is in the file.
    offset: u64,
}

impl DirectSink {
    /// A sink that stages up to `capacity` bytes (rounded up to whole blocks, at least two).
    pub fn new(capacity: usize) -> Self {
        Self {
            staging: AlignedBuffer::with_len(capacity.max(2 * BLOCK)),
            len: 0,
            offset: 0,
        }
    }

    /// The file offset of the next byte given to the sink.
    pub fn position(&self) -> u64 {
        self.offset + self.len as u64
    }

    /// Bytes that reached the file; the rest is staged.
    pub fn in_file(&self) -> u64 {
        self.offset
    }

    /// Copies `bytes` into the staging buffer, writing it out whenever it is full.
    pub fn stage(&mut self, file: &File, mut bytes: &[u8]) -> io::Result<()> {
        while !bytes.is_empty() {
            let capacity = self.staging.len();
            if self.len == capacity {
                self.write_full_blocks(file)?;
            }
            let n = (capacity - self.len).min(bytes.len());
            let start = self.len;
            self.staging.as_bytes_mut()[start..start + n].copy_from_slice(&bytes[..n]);
            self.len += n;
            bytes = &bytes[n..];
        }
        Ok(())
    }

    /// Writes `bytes`, its block-aligned middle straight from its memory when the stream
    /// position and the address agree modulo [`BLOCK`]; stages it otherwise.
    pub fn write_in_place(&mut self, file: &File, bytes: &[u8]) -> io::Result<()> {
        let address = bytes.as_ptr() as usize;
        let head = (BLOCK - address % BLOCK) % BLOCK;
        let congruent = self.position() as usize % BLOCK == address % BLOCK;
        if !congruent || bytes.len() < head + BLOCK {
            return self.stage(file, bytes);
        }
        let middle = (bytes.len() - head) / BLOCK * BLOCK;
        self.stage(file, &bytes[..head])?;
        // The head brought the position to a block boundary, so every staged byte is in
        // whole blocks and leaves now.
        self.write_full_blocks(file)?;
        debug_assert_eq!(self.len, 0);
        file.write_all_at(&bytes[head..head + middle], self.offset)?;
        self.offset += middle as u64;
        self.stage(file, &bytes[head + middle..])
    }

    /// Writes every complete staged block; a partial last block stays staged.
    pub fn write_full_blocks(&mut self, file: &File) -> io::Result<()> {
        let full = self.len / BLOCK * BLOCK;
        if full == 0 {
            return Ok(());
        }
        file.write_all_at(&self.staging.as_bytes()[..full], self.offset)?;
        self.offset += full as u64;
        let rest = self.len - full;
        self.staging
            .as_bytes_mut()
            .copy_within(full..full + rest, 0);
        self.len = rest;
        Ok(())
    }

    /// Writes everything staged, the partial last block through the page cache (the file
    /// leaves direct I/O for it): for the end of a file, whose length is what it is.
    pub fn finish(&mut self, file: &File) -> io::Result<()> {
        self.write_full_blocks(file)?;
        if self.len > 0 {
            set_direct(file, false)?;
            file.write_all_at(&self.staging.as_bytes()[..self.len], self.offset)?;
            self.offset += self.len as u64;
            self.len = 0;
        }
        Ok(())
    }

    /// Writes the staged partial block (if any) through `file`, a descriptor of the same
    /// file without `O_DIRECT`, and keeps it staged: the block leaves whole by direct I/O
    /// once full. Returns where the file's bytes end now.
    pub fn write_partial_through(&self, file: &File) -> io::Result<u64> {
        if self.len > 0 {
            file.write_all_at(&self.staging.as_bytes()[..self.len], self.offset)?;
        }
        Ok(self.position())
    }

    /// Starts over for a new file.
    pub fn reset(&mut self) {
        self.len = 0;
        self.offset = 0;
    }
}

/// Memory aligned as direct I/O needs it (its address a multiple of [`BLOCK`]), a whole
/// number of blocks long: to stage direct writes in and to read into with `O_DIRECT`.
#[derive(Default)]
pub struct AlignedBuffer {
    blocks: Vec<Block>,
}

/// One block of memory, aligned.
#[derive(Clone, Copy)]
#[repr(C, align(4096))]
struct Block([u8; BLOCK]);

impl AlignedBuffer {
    /// A buffer of at least `len` bytes (rounded up to whole blocks), zeroed.
    pub fn with_len(len: usize) -> Self {
        let mut buffer = Self::default();
        buffer.grow_to(len);
        buffer
    }

    /// Its length in bytes, a multiple of [`BLOCK`].
    pub fn len(&self) -> usize {
        self.blocks.len() * BLOCK
    }

    /// Whether it has no bytes.
    pub fn is_empty(&self) -> bool {
        self.blocks.is_empty()
    }

    /// Grows it to at least `len` bytes (rounded up to whole blocks); a longer buffer
    /// stays as it is.
    pub fn grow_to(&mut self, len: usize) {
        let blocks = len.div_ceil(BLOCK);
        if blocks > self.blocks.len() {
            self.blocks.resize(blocks, Block([0; BLOCK]));
        }
    }

    /// Its bytes.
    pub fn as_bytes(&self) -> &[u8] {
        // SAFETY: `Block` is a plain byte array without padding, so the blocks are
        // `len * BLOCK` initialized, contiguous bytes, borrowed as they are.
        unsafe {
            std::slice::from_raw_parts(
                self.blocks.as_ptr().cast(),
                std::mem::size_of_val(&self.blocks[..]),
            )
        }
    }

    /// Its bytes, to fill.
    pub fn as_bytes_mut(&mut self) -> &mut [u8] {
        // SAFETY: as in `as_bytes`, and the borrow is exclusive.
        unsafe {
            std::slice::from_raw_parts_mut(
                self.blocks.as_mut_ptr().cast(),
                std::mem::size_of_val(&self.blocks[..]),
            )
        }
    }
}

impl std::fmt::Debug for AlignedBuffer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "AlignedBuffer({} bytes)", self.len())
    }
}

/// Switches `O_DIRECT` on or off for an open file; an error where its file system
/// refuses it.
pub fn set_direct(file: &File, on: bool) -> io::Result<()> {
    let fd = file.as_raw_fd();
    // SAFETY: fcntl on a valid, open descriptor; no memory is passed.
    let flags = unsafe { libc::fcntl(fd, libc::F_GETFL) };
    if flags < 0 {
        return Err(io::Error::last_os_error());
    }
    let flags = if on {
        flags | libc::O_DIRECT
    } else {
        flags & !libc::O_DIRECT
    };
    // SAFETY: as above.
    if unsafe { libc::fcntl(fd, libc::F_SETFL, flags) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn padding_lands_the_byte_on_the_address_modulo_the_block() {
        for at in [0u64, 1, 4095, 4096, 123_457] {
            for distance in [0usize, 31, 47, 5000] {
                for address in [0usize, 1, 17, 4095, 4096 * 3 + 100] {
                    let padding = padding_for(at, distance, address);
                    assert!((MIN_PADDING..MIN_PADDING + BLOCK).contains(&padding));
                    let landing = at as usize + padding + distance;
                    assert_eq!(landing % BLOCK, address % BLOCK);
                }
            }
        }
    }

    #[test]
    fn padding_record_is_opcode_length_and_zeros() {
        let mut out = vec![7];
        append_padding(&mut out, 12);
        assert_eq!(out, [7, PADDING_OPCODE, 3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
    }
}
