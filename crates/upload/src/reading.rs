//! Reading a file's parts one ahead of sending them: while a part is sent, the next is
//! read on a blocking thread at the uploader's low priority, past the page cache, which is
//! the recordings' (with `O_DIRECT`, or where the file system or the part size does not
//! allow it, dropped from the cache after). The parts [`Hashing`] names also have their
//! MD5 computed here. Parts are read into buffers the uploader keeps ([`PartBuffers`]).

use std::os::unix::fs::FileExt;
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use md5::{Digest, Md5};
use recd_storage::direct::{set_direct, AlignedBuffer, BLOCK};
use recd_storage::direct_read::read_exact_at;
use tokio::task::JoinHandle;

/// A part's bytes, and their MD5 where it was asked for.
pub(crate) type ReadPart = (Bytes, Option<[u8; 16]>);

/// The buffers parts are read into, each given back when the store is done with its
/// part, kept for the next parts and files (at most `keep` of them).
///
/// A part is 16 MiB or more, and a buffer freshly allocated for each is either a mapping
/// of its own, faulted in page by page, or (once glibc has seen one that size freed) a
/// piece of the arena of whichever blocking thread read it, kept resident there after it
/// is freed: recd's memory crept up by tens of MB as reads moved between threads.
#[derive(Clone)]
pub(crate) struct PartBuffers {
    free: Arc<Mutex<Vec<AlignedBuffer>>>,
    keep: usize,
}

impl PartBuffers {
    /// A pool that keeps up to `keep` buffers.
    pub(crate) fn new(keep: usize) -> Self {
        Self {
            free: Arc::default(),
            keep,
        }
    }

    /// A buffer of at least `len` bytes (its contents are whatever was read into it last).
    fn take(&self, len: usize) -> AlignedBuffer {
        let mut buffer = self.lock().pop().unwrap_or_default();
        buffer.grow_to(len);
        buffer
    }

    fn give_back(&self, buffer: AlignedBuffer) {
        let mut free = self.lock();
        if free.len() < self.keep {
            free.push(buffer);
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Vec<AlignedBuffer>> {
        // A panic elsewhere with the lock held leaves a list of buffers, still whole.
        self.free
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// A buffer lent to a part's bytes; back to its pool once the last view of them is gone.
struct Lent {
    buffer: AlignedBuffer,
    pool: PartBuffers,
}

impl AsRef<[u8]> for Lent {
    fn as_ref(&self) -> &[u8] {
        self.buffer.as_bytes()
    }
}

impl Drop for Lent {
    fn drop(&mut self) {
        self.pool.give_back(std::mem::take(&mut self.buffer));
    }
}

/// Which parts' MD5s recd computes itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Hashing {
    /// This one, to check that the bucket's part ETags are MD5s of what it received.
    One(u64),
    /// Every part: the bucket does not show that it checks their CRC64-NVMEs.
    Every,
}

/// Reads parts of `part_size` bytes of one file, the next one ahead.
pub(crate) struct PartReader {
    file: Arc<std::fs::File>,
    size: u64,
    part_size: u64,
    hashing: Hashing,
    buffers: PartBuffers,
    /// The file is read with `O_DIRECT`.
    direct: bool,
    ahead: Option<(u64, JoinHandle<std::io::Result<ReadPart>>)>,
}

impl PartReader {
    /// Parts of `file`, `size` bytes long, read into `buffers`, those `hashing` names
    /// with their MD5; with `O_DIRECT` where parts start on whole blocks and the file
    /// system takes it.
    pub(crate) fn new(
        file: std::fs::File,
        size: u64,
        part_size: u64,
        hashing: Hashing,
        buffers: PartBuffers,
    ) -> Self {
        let direct = part_size.is_multiple_of(BLOCK as u64) && set_direct(&file, true).is_ok();
        Self {
            file: Arc::new(file),
            size,
            part_size,
            hashing,
            buffers,
            direct,
            ahead: None,
        }
    }

    /// Part `number`, and the read of part `next` started.
    pub(crate) async fn read(
        &mut self,
        number: u64,
        next: Option<u64>,
    ) -> std::io::Result<ReadPart> {
        let pending = match self.ahead.take() {
            Some((ahead, pending)) if ahead == number => pending,
            _ => self.spawn(number),
        };
        if let Some(next) = next {
            self.ahead = Some((next, self.spawn(next)));
        }
        pending.await.map_err(std::io::Error::other)?
    }

    fn spawn(&self, number: u64) -> JoinHandle<std::io::Result<ReadPart>> {
        let file = self.file.clone();
        let offset = number * self.part_size;
        let length = self.part_size.min(self.size.saturating_sub(offset));
        let hash = match self.hashing {
            Hashing::One(hashed) => hashed == number,
            Hashing::Every => true,
        };
        let buffers = self.buffers.clone();
        let direct = self.direct;
        tokio::task::spawn_blocking(move || {
            // Blocking threads are the runtime's: lowered each time (cheap), whichever ran.
            let _ = recd_priority::give_way();
            let length = length as usize;
            let mut buffer = buffers.take(length);
            let read = if direct {
                read_exact_at(&file, offset, length, &mut buffer)
            } else {
                read_uncached(&file, offset, &mut buffer.as_bytes_mut()[..length])
            };
            let lent = Lent {
                buffer,
                pool: buffers,
            };
            read?;
            let md5 = hash.then(|| Md5::digest(&lent.buffer.as_bytes()[..length]).into());
            Ok((Bytes::from_owner(lent).slice(..length), md5))
        })
    }
}

/// Reads `bytes.len()` bytes at `offset`, then tells the kernel it need not cache them.
fn read_uncached(file: &std::fs::File, offset: u64, bytes: &mut [u8]) -> std::io::Result<()> {
    use std::os::fd::AsRawFd;
    let length = bytes.len();
    file.read_exact_at(bytes, offset)?;
    // SAFETY: posix_fadvise only reads its arguments; the descriptor is open.
    unsafe {
        libc::posix_fadvise(
            file.as_raw_fd(),
            offset as libc::off_t,
            length as libc::off_t,
            libc::POSIX_FADV_DONTNEED,
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[tokio::test]
    async fn parts_are_read_into_the_buffers_of_parts_the_store_is_done_with() {
        let mut file = tempfile::tempfile().expect("a temporary file");
        let content: Vec<u8> = (0..2500u32).map(|i| (i % 251) as u8).collect();
        file.write_all(&content).expect("written");
        let buffers = PartBuffers::new(2);
        let mut reader = PartReader::new(file, 2500, 1000, Hashing::One(2), buffers.clone());

        let (first, md5) = reader.read(0, None).await.expect("part 0");
        assert_eq!(&first[..], &content[..1000]);
        assert!(md5.is_none(), "only part 2 is hashed");
        let first_at = first.as_ptr();
        drop(first);

        let (second, _) = reader.read(1, None).await.expect("part 1");
        assert_eq!(&second[..], &content[1000..2000]);
        assert_eq!(second.as_ptr(), first_at, "the first part's buffer again");

        // The last part is shorter than the buffer it gets: only its own bytes show.
        let (last, md5) = reader.read(2, None).await.expect("part 2");
        assert_eq!(&last[..], &content[2000..]);
        assert_eq!(md5, Some(Md5::digest(&content[2000..]).into()));
        drop((second, last));
        assert_eq!(
            buffers.lock().len(),
            2,
            "both buffers kept for the next parts"
        );
    }

    #[tokio::test]
    async fn parts_on_whole_blocks_are_read_with_direct_io_and_the_last_one_ends_short() {
        // /tmp is a disk's file system here, or tmpfs, which takes O_DIRECT from Linux 6.6.
        let mut file = tempfile::tempfile().expect("a temporary file");
        let part = 2 * BLOCK;
        let content: Vec<u8> = (0..2 * part + 1001).map(|i| (i % 251) as u8).collect();
        file.write_all(&content).expect("written");
        let size = content.len() as u64;
        let mut reader =
            PartReader::new(file, size, part as u64, Hashing::Every, PartBuffers::new(1));
        assert!(reader.direct, "the file was not opened with O_DIRECT");

        let mut read = Vec::new();
        for number in 0..3 {
            let next = (number < 2).then_some(number + 1);
            let (bytes, md5) = reader.read(number, next).await.expect("a part");
            assert_eq!(md5, Some(Md5::digest(&bytes).into()));
            read.extend_from_slice(&bytes);
        }
        assert!(read == content, "read back as {} bytes", read.len());

        // Parts that do not start on whole blocks are read through the page cache.
        let file = tempfile::tempfile().expect("a temporary file");
        let reader = PartReader::new(file, 0, 5_000_000, Hashing::Every, PartBuffers::new(1));
        assert!(!reader.direct);
    }
}
