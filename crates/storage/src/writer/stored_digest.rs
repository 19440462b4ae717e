//! The SHA-256 of a file's bytes as the writer stores them, taken as they leave (the
//! ciphertext of a sealed file): what a hash chain enters when the file closes, without
//! reading it back, so that bytes changed on the disk after they were written are found
//! altered rather than chained as they are then.
//!
//! Hashing costs about four times what storing the bytes in memory does (SHA-256 with the
//! CPU's SHA extensions, ~1.3 GB/s on the 2-core VM), too much for the writer's thread
//! at camera rates: the writer copies the bytes into buffers of its own and a thread
//! beside it hashes them in order. At most [`BUFFERS`] of them are in flight; when the
//! hashing thread falls that far behind, the writer waits for it.

use std::sync::mpsc::{self, Receiver, SyncSender};
use std::thread::JoinHandle;

use ring::digest::{Context, SHA256};

/// Bytes copied before they go to the hashing thread at once.
const BUFFER_BYTES: usize = 4 << 20;
/// Buffers at most, filled or in flight: the most the writer copies ahead of the hashing.
const BUFFERS: usize = 4;

/// Hashes the bytes a file stores, in the order they take in it.
pub(super) struct StoredDigest {
    /// The bytes not yet handed to the hashing thread.
    filling: Vec<u8>,
    /// Buffers made so far (at most [`BUFFERS`]).
    made: usize,
    hashing: Hashing,
}

/// Where the bytes are hashed.
enum Hashing {
    /// On a thread of its own.
    Beside {
        work: SyncSender<Vec<u8>>,
        /// Buffers the thread has hashed, to fill again.
        free: Receiver<Vec<u8>>,
        /// The digest, once `work` was dropped and the thread saw the end.
        digest: Receiver<[u8; 32]>,
        thread: JoinHandle<()>,
    },
    /// Here, where no thread could be started.
    Inline(Context),
}

impl StoredDigest {
    /// A digest of no bytes yet, hashed beside the caller where a thread can be started.
    pub(super) fn new() -> Self {
        let (work, work_in) = mpsc::sync_channel::<Vec<u8>>(BUFFERS);
        let (free_out, free) = mpsc::channel();
        let (digest_out, digest) = mpsc::sync_channel(1);
        let started = std::thread::Builder::new()
            .name("recd-digest".into())
            .spawn(move || {
                let mut context = Context::new(&SHA256);
                for mut buffer in work_in {
                    context.update(&buffer);
                    buffer.clear();
                    // The writer may have finished; a buffer it no longer wants is freed.
                    let _ = free_out.send(buffer);
                }
                let _ = digest_out.send(finish(context));
            });
        let hashing = match started {
            Ok(thread) => Hashing::Beside {
                work,
                free,
                digest,
                thread,
            },
            Err(_) => Hashing::Inline(Context::new(&SHA256)),
        };
        Self {
            filling: Vec::new(),
            made: 0,
            hashing,
        }
    }

    /// Adds `bytes`, the next ones the file stores.
    pub(super) fn update(&mut self, mut bytes: &[u8]) {
        if let Hashing::Inline(context) = &mut self.hashing {
            context.update(bytes);
            return;
        }
        while !bytes.is_empty() {
            if self.filling.capacity() == 0 {
                self.filling = self.next_buffer();
            }
            let room = self.filling.capacity() - self.filling.len();
            let n = room.min(bytes.len());
            self.filling.extend_from_slice(&bytes[..n]);
            bytes = &bytes[n..];
            if self.filling.len() == self.filling.capacity() {
                self.hand_on();
            }
        }
    }

    /// The SHA-256 of every byte added.
    pub(super) fn finish(mut self) -> [u8; 32] {
        if !self.filling.is_empty() {
            self.hand_on();
        }
        match self.hashing {
            Hashing::Inline(context) => finish(context),
            Hashing::Beside {
                work,
                digest,
                thread,
                ..
            } => {
                drop(work);
                let digest = digest.recv().expect("the hashing thread sends its digest");
                let _ = thread.join();
                digest
            }
        }
    }

    /// A buffer to fill: a hashed one, a new one while fewer than [`BUFFERS`] were made,
    /// or else the next one the hashing thread is done with.
    fn next_buffer(&mut self) -> Vec<u8> {
        let Hashing::Beside { free, .. } = &self.hashing else {
            unreachable!("buffers are filled only for the hashing thread");
        };
        if let Ok(buffer) = free.try_recv() {
            return buffer;
        }
        if self.made < BUFFERS {
            self.made += 1;
            return Vec::with_capacity(BUFFER_BYTES);
        }
        free.recv()
            .expect("the hashing thread lives while the writer holds its channel")
    }

    /// Sends the filled buffer to the hashing thread.
    fn hand_on(&mut self) {
        let Hashing::Beside { work, .. } = &self.hashing else {
            unreachable!("buffers are filled only for the hashing thread");
        };
        let buffer = std::mem::take(&mut self.filling);
        work.send(buffer)
            .expect("the hashing thread lives while the writer holds its channel");
    }
}

/// The 32 bytes of `context`'s digest.
fn finish(context: Context) -> [u8; 32] {
    (context.finish().as_ref())
        .try_into()
        .expect("a SHA-256 digest is 32 bytes")
}

impl std::fmt::Debug for StoredDigest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("StoredDigest(SHA-256)")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_digest_is_sha256_of_the_bytes_in_order_however_they_are_split() {
        let bytes: Vec<u8> = (0..3 * BUFFER_BYTES * BUFFERS + 12_345)
            .map(|i| (i * 7 % 251) as u8)
            .collect();
        let expected: [u8; 32] = (ring::digest::digest(&SHA256, &bytes).as_ref())
            .try_into()
            .unwrap();
        for piece in [1, 4096, BUFFER_BYTES - 1, BUFFER_BYTES + 3] {
            let mut digest = StoredDigest::new();
            bytes.chunks(piece).for_each(|chunk| digest.update(chunk));
            assert_eq!(digest.finish(), expected, "pieces of {piece}");
        }
        assert_eq!(
            StoredDigest::new().finish(),
            finish(Context::new(&SHA256)),
            "no bytes"
        );
    }
}
