//! Reading a file's parts one ahead of sending them: while a part is sent, the next is
//! read on a blocking thread at the uploader's low priority, then dropped from the page
//! cache, which is the recordings'. The parts [`Hashing`] names also have their MD5
//! computed here.

use std::os::unix::fs::FileExt;
use std::sync::Arc;

use md5::{Digest, Md5};
use tokio::task::JoinHandle;

/// A part's bytes, and their MD5 where it was asked for.
pub(crate) type ReadPart = (Vec<u8>, Option<[u8; 16]>);

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
    ahead: Option<(u64, JoinHandle<std::io::Result<ReadPart>>)>,
}

impl PartReader {
    /// Parts of `file`, `size` bytes long, those `hashing` names with their MD5.
    pub(crate) fn new(file: std::fs::File, size: u64, part_size: u64, hashing: Hashing) -> Self {
        Self {
            file: Arc::new(file),
            size,
            part_size,
            hashing,
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
        tokio::task::spawn_blocking(move || {
            // Blocking threads are the runtime's: lowered each time (cheap), whichever ran.
            let _ = crate::priority::lower_this_thread();
            let bytes = read_uncached(&file, offset, length)?;
            let md5 = hash.then(|| Md5::digest(&bytes).into());
            Ok((bytes, md5))
        })
    }
}

/// Reads `length` bytes at `offset`, then tells the kernel it need not cache them.
fn read_uncached(file: &std::fs::File, offset: u64, length: u64) -> std::io::Result<Vec<u8>> {
    use std::os::fd::AsRawFd;
    let mut bytes = vec![0; length as usize];
    file.read_exact_at(&mut bytes, offset)?;
    // SAFETY: posix_fadvise only reads its arguments; the descriptor is open.
    unsafe {
        libc::posix_fadvise(
            file.as_raw_fd(),
            offset as libc::off_t,
            length as libc::off_t,
            libc::POSIX_FADV_DONTNEED,
        );
    }
    Ok(bytes)
}
