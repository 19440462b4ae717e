//! Where a sealed file's chunks lie: computed from the header's length and the file's
//! stored length alone, so that any chunk can be read without reading those before it.

use crate::stream::{CHUNK_SIZE, NONCE_SIZE, TAG_SIZE};

/// The stored bytes of a full chunk: its plaintext and its tag.
pub(crate) const STORED_CHUNK: u64 = (CHUNK_SIZE + TAG_SIZE) as u64;

/// The geometry of one sealed file as stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Layout {
    /// Bytes of the header, up to and including the MAC line.
    pub(crate) header_len: u64,
    /// Bytes of the whole file as stored.
    pub(crate) stored_len: u64,
}

impl Layout {
    /// Where the first chunk starts: after the header and the payload nonce.
    pub(crate) fn payload_start(&self) -> u64 {
        self.header_len + NONCE_SIZE as u64
    }

    /// Whether the file is long enough to hold the payload nonce.
    pub(crate) fn has_nonce(&self) -> bool {
        self.stored_len >= self.payload_start()
    }

    /// Bytes after the nonce.
    fn payload_len(&self) -> u64 {
        self.stored_len.saturating_sub(self.payload_start())
    }

    /// The chunks the stored bytes hold, the last possibly partial.
    pub(crate) fn chunks(&self) -> u64 {
        self.payload_len().div_ceil(STORED_CHUNK)
    }

    /// The chunks of full size (64 KiB and a tag).
    pub(crate) fn full_chunks(&self) -> u64 {
        self.payload_len() / STORED_CHUNK
    }

    /// Where chunk `index` starts in the file.
    pub(crate) fn chunk_offset(&self, index: u64) -> u64 {
        self.payload_start() + index * STORED_CHUNK
    }

    /// The stored bytes of chunk `index` (of [`Self::chunks`]).
    pub(crate) fn chunk_stored_len(&self, index: u64) -> usize {
        let rest = self.stored_len.saturating_sub(self.chunk_offset(index));
        rest.min(STORED_CHUNK) as usize
    }

    /// Whether the stored bytes end in a chunk that can be the last one: at least one
    /// chunk, the last one holding a tag, and holding plaintext too unless it is the only
    /// one (age allows an empty last chunk only for an empty payload).
    pub(crate) fn can_end_in_last_chunk(&self) -> bool {
        match self.chunks() {
            0 => false,
            n => {
                let last = self.chunk_stored_len(n - 1);
                last > TAG_SIZE || (n == 1 && last == TAG_SIZE)
            }
        }
    }

    /// The plaintext bytes the stored length implies: every chunk's bytes less its tag (a
    /// last chunk too short for its tag counts as none).
    pub(crate) fn plaintext_len(&self) -> u64 {
        match self.chunks() {
            0 => 0,
            n => {
                let last = self.chunk_stored_len(n - 1).saturating_sub(TAG_SIZE);
                (n - 1) * CHUNK_SIZE as u64 + last as u64
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stream::sealed_len;

    fn layout(plaintext: u64) -> Layout {
        Layout {
            header_len: 100,
            stored_len: 100 + sealed_len(plaintext),
        }
    }

    #[test]
    fn a_whole_file_gives_back_its_plaintext_length() {
        let c = CHUNK_SIZE as u64;
        for len in [0, 1, c - 1, c, c + 1, 3 * c + 5] {
            let layout = layout(len);
            assert_eq!(layout.plaintext_len(), len, "{len}");
            assert_eq!(layout.chunks(), len.div_ceil(c).max(1), "{len}");
            assert!(layout.can_end_in_last_chunk(), "{len}");
        }
    }

    #[test]
    fn chunks_lie_one_stored_chunk_apart_after_the_nonce() {
        let layout = layout(3 * CHUNK_SIZE as u64 + 5);
        assert_eq!(layout.chunk_offset(0), 116);
        assert_eq!(layout.chunk_offset(2), 116 + 2 * STORED_CHUNK);
        assert_eq!(layout.chunk_stored_len(2), STORED_CHUNK as usize);
        assert_eq!(layout.chunk_stored_len(3), 5 + TAG_SIZE);
        assert_eq!(layout.full_chunks(), 3);
    }

    #[test]
    fn a_cut_file_may_not_end_in_a_last_chunk() {
        let header_only = Layout {
            header_len: 100,
            stored_len: 116,
        };
        assert_eq!(header_only.chunks(), 0);
        assert!(!header_only.can_end_in_last_chunk());
        let in_a_tag = Layout {
            header_len: 100,
            stored_len: 116 + STORED_CHUNK + 10,
        };
        assert_eq!(in_a_tag.chunks(), 2);
        assert_eq!(in_a_tag.plaintext_len(), CHUNK_SIZE as u64);
        assert!(!in_a_tag.can_end_in_last_chunk());
        let no_nonce = Layout {
            header_len: 100,
            stored_len: 110,
        };
        assert!(!no_nonce.has_nonce());
        assert_eq!(no_nonce.chunks(), 0);
    }
}
