use std::io::{self, Read, Write};

use age::x25519::Identity;

use super::*;
use crate::sealed_len;

fn identity_and_recipients() -> (Identity, Recipients) {
    let identity = Identity::generate();
    let other = Identity::generate();
    let recipients = Recipients::parse(&[
        other.to_public().to_string(),
        identity.to_public().to_string(),
    ])
    .unwrap();
    (identity, recipients)
}

fn seal(plaintext: &[u8], recipients: &Recipients, write_size: usize) -> (Vec<u8>, u64) {
    let mut writer = SealedWriter::new(Vec::new(), recipients).unwrap();
    for piece in plaintext.chunks(write_size.max(1)) {
        writer.write_all(piece).unwrap();
    }
    let header_len = writer.header_len();
    assert_eq!(writer.plaintext_len(), plaintext.len() as u64);
    (writer.finish().unwrap(), header_len)
}

fn open(file: &[u8], identity: &Identity) -> Result<Vec<u8>, String> {
    let decryptor = age::Decryptor::new(file).map_err(|e| e.to_string())?;
    let mut reader = decryptor
        .decrypt(std::iter::once(identity as &dyn age::Identity))
        .map_err(|e| e.to_string())?;
    let mut plaintext = Vec::new();
    reader
        .read_to_end(&mut plaintext)
        .map_err(|e| e.to_string())?;
    Ok(plaintext)
}

#[test]
fn the_age_crate_reads_what_it_writes_at_every_chunk_boundary() {
    let (identity, recipients) = identity_and_recipients();
    for len in [
        0,
        1,
        CHUNK_SIZE - 1,
        CHUNK_SIZE,
        CHUNK_SIZE + 1,
        2 * CHUNK_SIZE + 7,
    ] {
        let plaintext: Vec<u8> = (0..len).map(|i| (i * 31 % 251) as u8).collect();
        for write_size in [1000, CHUNK_SIZE, 3 * CHUNK_SIZE] {
            let (file, header_len) = seal(&plaintext, &recipients, write_size);
            assert_eq!(file.len() as u64, header_len + sealed_len(len as u64));
            assert_eq!(open(&file, &identity).unwrap(), plaintext, "len {len}");
        }
    }
}

#[test]
fn the_header_is_age_v1_with_one_x25519_stanza_per_recipient() {
    let (_identity, recipients) = identity_and_recipients();
    let (file, header_len) = seal(b"hello", &recipients, 5);
    let header = std::str::from_utf8(&file[..header_len as usize]).unwrap();
    assert!(
        header.starts_with("age-encryption.org/v1\n-> X25519 "),
        "{header}"
    );
    assert_eq!(header.matches("\n-> X25519 ").count(), 2, "{header}");
    let mac_line = header.lines().last().unwrap();
    assert!(mac_line.starts_with("--- "), "{header}");
    assert_eq!(mac_line.len(), 4 + 43, "{header}");
}

#[test]
fn a_wrong_identity_is_refused() {
    let (_identity, recipients) = identity_and_recipients();
    let (file, _) = seal(b"secret", &recipients, 6);
    assert!(open(&file, &Identity::generate()).is_err());
}

#[test]
fn a_file_dropped_unfinished_is_refused_as_truncated() {
    let (identity, recipients) = identity_and_recipients();
    let mut file = Vec::new();
    {
        let mut writer = SealedWriter::new(&mut file, &recipients).unwrap();
        writer.write_all(&vec![5; 2 * CHUNK_SIZE + 1]).unwrap();
    }
    assert!(open(&file, &identity).is_err());
}

#[test]
fn each_file_has_its_own_key_and_nonce() {
    let (_identity, recipients) = identity_and_recipients();
    let (a, header_len) = seal(&[0; 100], &recipients, 100);
    let (b, _) = seal(&[0; 100], &recipients, 100);
    let h = header_len as usize;
    assert_ne!(a[h..], b[h..]);
}

/// A writer that fails once it has taken `room` bytes.
struct Full {
    room: usize,
}

impl Write for Full {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.room == 0 {
            return Err(io::Error::other("disk full"));
        }
        let n = buf.len().min(self.room);
        self.room -= n;
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[test]
fn after_a_failed_write_the_file_is_refused() {
    let (_identity, recipients) = identity_and_recipients();
    let mut writer = SealedWriter::new(Full { room: 1000 }, &recipients).unwrap();
    writer.write_all(&vec![1; CHUNK_SIZE]).unwrap();
    assert!(writer.write_all(&[2]).is_err());
    assert!(writer.write_all(&[3]).is_err());
    assert!(matches!(writer.finish(), Err(FinishError::Failed)));
}

#[test]
fn a_full_chunk_sealed_at_a_sync_point_is_on_its_way_and_the_file_still_reads() {
    let (identity, recipients) = identity_and_recipients();
    let plaintext: Vec<u8> = (0..3 * CHUNK_SIZE + 7).map(|i| (i % 251) as u8).collect();
    let mut writer = SealedWriter::new(Vec::new(), &recipients).unwrap();
    writer.write_all(&plaintext[..CHUNK_SIZE]).unwrap();
    // Full but not sealed: it might be the last chunk.
    assert_eq!(writer.plaintext_sealed(), 0);
    assert_eq!(writer.room_in_chunk(), 0);
    writer.seal_full_chunk().unwrap();
    assert_eq!(writer.plaintext_sealed(), CHUNK_SIZE as u64);
    assert_eq!(writer.sealed_bytes(), writer.get_ref().len() as u64);
    assert_eq!(writer.room_in_chunk(), CHUNK_SIZE);
    // Not full: nothing to seal.
    writer
        .write_all(&plaintext[CHUNK_SIZE..CHUNK_SIZE + 5])
        .unwrap();
    writer.seal_full_chunk().unwrap();
    assert_eq!(writer.plaintext_sealed(), CHUNK_SIZE as u64);
    writer.write_all(&plaintext[CHUNK_SIZE + 5..]).unwrap();
    let file = writer.finish().unwrap();
    assert_eq!(open(&file, &identity).unwrap(), plaintext);
}

#[test]
fn a_payload_ending_on_a_sealed_chunk_cannot_be_finished_with_an_empty_last_chunk() {
    let (_, recipients) = identity_and_recipients();
    let mut writer = SealedWriter::new(Vec::new(), &recipients).unwrap();
    writer.write_all(&[1; CHUNK_SIZE]).unwrap();
    writer.seal_full_chunk().unwrap();
    assert!(matches!(writer.finish(), Err(FinishError::EmptyLastChunk)));
}

#[test]
fn the_key_reads_back_what_the_writer_wrote() {
    let (_, recipients) = identity_and_recipients();
    let writer = SealedWriter::new(Vec::new(), &recipients).unwrap();
    let copy = writer.key().clone();
    assert_eq!(copy.bytes(), writer.key().bytes());
    assert_ne!(copy.bytes().as_ptr(), writer.key().bytes().as_ptr());
    assert!(writer.key().is_locked() && copy.is_locked());
    assert_ne!(copy.bytes(), &[0; 16], "the key was drawn into its page");
    assert_eq!(format!("{copy:?}"), "SealKey(…)");
}
