//! [`SealedHeader`]: what a sealed file tells without a key: its recipient stanzas and,
//! from its stored length, its chunks.

use std::io::{Read, Seek, SeekFrom};

use crate::layout::Layout;
use crate::parse::{self, HeaderReadError};

/// A sealed file's header and stored geometry, read without any key (nothing in it is
/// authenticated: the header's MAC needs the file key).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SealedHeader {
    stanza_types: Vec<String>,
    layout: Layout,
}

impl SealedHeader {
    /// Reads the header of the age file `inner` (from its start) and its stored length.
    pub fn read<R: Read + Seek>(mut inner: R) -> Result<Self, HeaderReadError> {
        let header = parse::read(&mut inner)?;
        let stored_len = inner.seek(SeekFrom::End(0)).map_err(HeaderReadError::Io)?;
        Ok(Self {
            stanza_types: header.stanzas.into_iter().map(|s| s.tag).collect(),
            layout: Layout {
                header_len: header.len,
                stored_len,
            },
        })
    }

    /// The type of each recipient stanza, in order (`X25519` for every recipient recd
    /// seals to).
    pub fn stanza_types(&self) -> &[String] {
        &self.stanza_types
    }

    /// Bytes of the header, up to and including its MAC line.
    pub fn header_len(&self) -> u64 {
        self.layout.header_len
    }

    /// Bytes of the whole file as stored.
    pub fn stored_len(&self) -> u64 {
        self.layout.stored_len
    }

    /// The chunks whose stored bytes are whole: every full-size chunk (64 KiB and its
    /// tag), and a shorter last one that holds plaintext and its tag (which can only be a
    /// file's last chunk). Whether they are authentic needs the key.
    pub fn complete_chunks(&self) -> u64 {
        let full = self.layout.full_chunks();
        if self.layout.chunks() > full && self.layout.can_end_in_last_chunk() {
            full + 1
        } else {
            full
        }
    }

    /// Whether the stored length can end in a last chunk: false for a file cut inside a
    /// tag or right after its header. True does not mean that the file is whole: a file
    /// cut at a chunk boundary ends in a full chunk that only the key shows is not its
    /// last.
    pub fn can_end_in_last_chunk(&self) -> bool {
        self.layout.can_end_in_last_chunk()
    }

    /// Whether the stored length ends exactly at a chunk boundary, where a power cut after
    /// a sync point leaves a file (and where a whole file ends only when its plaintext is
    /// a multiple of 64 KiB).
    pub fn ends_at_chunk_boundary(&self) -> bool {
        self.layout.chunks() > 0 && self.layout.chunks() == self.layout.full_chunks()
    }

    /// The plaintext bytes the stored length implies, if the file is whole.
    pub fn plaintext_len(&self) -> u64 {
        self.layout.plaintext_len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stream::{sealed_len, CHUNK_SIZE};
    use std::io::Cursor;

    fn file(payload: u64) -> Vec<u8> {
        let mut file = format!(
            "age-encryption.org/v1\n-> X25519 abc\nAAAA\n-> future x\n\n--- {}\n",
            "A".repeat(43)
        )
        .into_bytes();
        file.resize(file.len() + payload as usize, 0);
        file
    }

    #[test]
    fn stanzas_and_chunks_are_told_without_a_key() {
        let c = CHUNK_SIZE as u64;
        let whole = SealedHeader::read(Cursor::new(file(sealed_len(2 * c + 5)))).unwrap();
        assert_eq!(whole.stanza_types(), ["X25519", "future"]);
        assert_eq!(whole.complete_chunks(), 3);
        assert!(whole.can_end_in_last_chunk());
        assert!(!whole.ends_at_chunk_boundary());
        assert_eq!(whole.plaintext_len(), 2 * c + 5);
        assert_eq!(
            whole.stored_len(),
            whole.header_len() + sealed_len(2 * c + 5)
        );

        let at_boundary = SealedHeader::read(Cursor::new(file(sealed_len(2 * c)))).unwrap();
        assert_eq!(at_boundary.complete_chunks(), 2);
        assert!(at_boundary.ends_at_chunk_boundary());

        let in_a_tag = SealedHeader::read(Cursor::new(file(sealed_len(c) + 10))).unwrap();
        assert_eq!(in_a_tag.complete_chunks(), 1);
        assert!(!in_a_tag.can_end_in_last_chunk());

        let header_only = SealedHeader::read(Cursor::new(file(0))).unwrap();
        assert_eq!(header_only.complete_chunks(), 0);
        assert!(!header_only.can_end_in_last_chunk());
    }
}
