//! age's STREAM: the payload in 64 KiB chunks, each sealed with ChaCha20-Poly1305 under a
//! nonce made of the chunk's number and whether it is the last.

use recd_locked::Locked;
use ring::aead::{Aad, LessSafeKey, Nonce};

/// Plaintext bytes in every chunk but the last.
pub const CHUNK_SIZE: usize = 64 * 1024;
/// Bytes of the Poly1305 tag after each chunk.
pub const TAG_SIZE: usize = 16;
/// Bytes of the random nonce between the header and the first chunk.
pub const NONCE_SIZE: usize = 16;

/// The 12-byte nonce of chunk `counter`: the counter as 11 big-endian bytes, then 0x01 for
/// the last chunk and 0x00 for any other.
pub fn chunk_nonce(counter: u64, last: bool) -> [u8; 12] {
    let mut nonce = [0u8; 12];
    nonce[3..11].copy_from_slice(&counter.to_be_bytes());
    nonce[11] = u8::from(last);
    nonce
}

/// The bytes a sealed file holds after its header for `plaintext_len` bytes of plaintext:
/// the payload nonce, the plaintext and one tag per chunk (at least one chunk, even for
/// no plaintext).
pub fn sealed_len(plaintext_len: u64) -> u64 {
    let chunks = plaintext_len.div_ceil(CHUNK_SIZE as u64).max(1);
    NONCE_SIZE as u64 + plaintext_len + chunks * TAG_SIZE as u64
}

/// Seals the chunks of one payload in order.
pub(crate) struct ChunkSealer {
    /// The payload key, in a locked page: reaching it costs one pointer.
    key: Locked<LessSafeKey>,
    counter: u64,
}

impl ChunkSealer {
    /// A sealer whose first chunk is number 0.
    pub(crate) fn new(key: Locked<LessSafeKey>) -> Self {
        Self { key, counter: 0 }
    }

    /// Seals `chunk` in place (at most [`CHUNK_SIZE`] bytes of plaintext) and appends its
    /// tag; `last` marks the final chunk of the payload.
    pub(crate) fn seal(&mut self, chunk: &mut Vec<u8>, last: bool) {
        debug_assert!(chunk.len() <= CHUNK_SIZE);
        debug_assert!(last || chunk.len() == CHUNK_SIZE);
        let nonce = Nonce::assume_unique_for_key(chunk_nonce(self.counter, last));
        let tag = self
            .key
            .seal_in_place_separate_tag(nonce, Aad::empty(), chunk)
            .expect("a 64 KiB chunk is within ChaCha20-Poly1305's limit");
        chunk.extend_from_slice(tag.as_ref());
        self.counter += 1;
    }

    /// The number of chunks sealed so far.
    #[cfg(test)]
    pub(crate) fn sealed(&self) -> u64 {
        self.counter
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ring::aead;

    #[test]
    fn the_nonce_is_an_11_byte_counter_and_a_last_flag() {
        assert_eq!(chunk_nonce(0, false), [0; 12]);
        assert_eq!(chunk_nonce(0, true), [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1]);
        assert_eq!(chunk_nonce(1, false), [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0]);
        assert_eq!(
            chunk_nonce(0x0102_0304_0506_0708, true),
            [0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 1]
        );
        assert_eq!(chunk_nonce(u64::MAX, false)[..3], [0, 0, 0]);
    }

    #[test]
    fn sealed_len_counts_one_tag_per_chunk_and_at_least_one_chunk() {
        let c = CHUNK_SIZE as u64;
        assert_eq!(sealed_len(0), 16 + 16);
        assert_eq!(sealed_len(1), 16 + 1 + 16);
        assert_eq!(sealed_len(c), 16 + c + 16);
        assert_eq!(sealed_len(c + 1), 16 + c + 1 + 32);
        assert_eq!(sealed_len(3 * c + 5), 16 + 3 * c + 5 + 64);
    }

    #[test]
    fn a_chunk_grows_by_its_tag_and_the_counter_advances() {
        let key =
            LessSafeKey::new(aead::UnboundKey::new(&aead::CHACHA20_POLY1305, &[9; 32]).unwrap());
        let mut sealer = ChunkSealer::new(Locked::new(key).unwrap());
        let mut chunk = vec![1; CHUNK_SIZE];
        sealer.seal(&mut chunk, false);
        assert_eq!(chunk.len(), CHUNK_SIZE + TAG_SIZE);
        let mut last = vec![2; 5];
        sealer.seal(&mut last, true);
        assert_eq!(last.len(), 5 + TAG_SIZE);
        assert_eq!(sealer.sealed(), 2);
    }
}
