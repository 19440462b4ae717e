use std::io::{Cursor, Read, Seek, SeekFrom, Write};

use age::secrecy::ExposeSecret;
use age::x25519::Identity;

use crate::chunks::ChunkError;
use crate::layout::STORED_CHUNK;
use crate::open::OpenError;
use crate::{recover, Identities, Recipients, SealKey, SealedReader, SealedWriter, CHUNK_SIZE};

const C: usize = CHUNK_SIZE;

struct Keys {
    identities: Identities,
    recipients: Recipients,
}

fn keys() -> Keys {
    let identity = Identity::generate();
    let secret = identity.to_string().expose_secret().to_owned();
    Keys {
        identities: Identities::parse(&[secret]).unwrap(),
        recipients: Recipients::parse(&[identity.to_public().to_string()]).unwrap(),
    }
}

fn random_bytes(len: usize) -> Vec<u8> {
    let mut rng = fastrand::Rng::with_seed(len as u64 + 7);
    let mut bytes = vec![0; len];
    rng.fill(&mut bytes);
    bytes
}

/// A whole sealed file of `plaintext`, its header's length and its key.
fn seal(keys: &Keys, plaintext: &[u8]) -> (Vec<u8>, usize, SealKey) {
    let mut writer = SealedWriter::new(Vec::new(), &keys.recipients).unwrap();
    writer.write_all(plaintext).unwrap();
    let header_len = writer.header_len() as usize;
    let key = writer.key().clone();
    (writer.finish().unwrap(), header_len, key)
}

fn read_all(file: &[u8], identities: &Identities) -> std::io::Result<Vec<u8>> {
    let mut reader = SealedReader::open(Cursor::new(file), identities).unwrap();
    let mut plaintext = Vec::new();
    reader.read_to_end(&mut plaintext).map(|_| plaintext)
}

/// The `ChunkError` inside a read error.
fn chunk_error(error: &std::io::Error) -> ChunkError {
    error
        .get_ref()
        .and_then(|e| e.downcast_ref::<ChunkError>())
        .unwrap_or_else(|| panic!("not a chunk error: {error}"))
        .clone()
}

#[test]
fn every_size_reads_back_with_identities_and_with_the_key() {
    let keys = keys();
    for len in [0, 1, C - 1, C, C + 1, 3 * C + 5] {
        let plaintext = random_bytes(len);
        let (file, header_len, key) = seal(&keys, &plaintext);
        let mut reader = SealedReader::open(Cursor::new(&file), &keys.identities).unwrap();
        assert_eq!(reader.plaintext_len(), len as u64);
        assert_eq!(reader.header_len(), header_len as u64);
        let mut back = Vec::new();
        reader.read_to_end(&mut back).unwrap();
        assert!(back == plaintext, "{len} bytes came back different");

        let mut reader = SealedReader::open_with_key(Cursor::new(&file), &key).unwrap();
        let mut back = Vec::new();
        reader.read_to_end(&mut back).unwrap();
        assert!(back == plaintext, "{len} bytes came back different by key");
    }
}

#[test]
fn seeks_read_the_right_bytes_anywhere() {
    let keys = keys();
    let plaintext = random_bytes(3 * C + 5);
    let (file, _, key) = seal(&keys, &plaintext);
    let mut reader = SealedReader::open_with_key(Cursor::new(&file), &key).unwrap();
    let mut rng = fastrand::Rng::with_seed(1);
    let mut offsets = vec![0, C - 1, C, C + 1, 2 * C + 17, 3 * C + 4, 3 * C + 5];
    offsets.extend((0..50).map(|_| rng.usize(..plaintext.len())));
    for at in offsets {
        let want = rng.usize(1..3 * C);
        assert_eq!(reader.seek(SeekFrom::Start(at as u64)).unwrap(), at as u64);
        let mut got = vec![0; want];
        let mut filled = 0;
        while filled < want {
            match reader.read(&mut got[filled..]).unwrap() {
                0 => break,
                n => filled += n,
            }
        }
        let end = (at + want).min(plaintext.len());
        assert_eq!(filled, end - at, "at {at}");
        assert!(got[..filled] == plaintext[at..end], "at {at}");
    }
    let end = reader.seek(SeekFrom::End(-3)).unwrap();
    assert_eq!(end, plaintext.len() as u64 - 3);
    let mut tail = Vec::new();
    reader.read_to_end(&mut tail).unwrap();
    assert_eq!(tail, plaintext[plaintext.len() - 3..]);
    reader.seek(SeekFrom::Start(C as u64)).unwrap();
    assert_eq!(reader.seek(SeekFrom::Current(-1)).unwrap(), C as u64 - 1);
    assert!(reader.seek(SeekFrom::Current(-(C as i64))).is_err());
    reader.seek(SeekFrom::Start(10 * C as u64)).unwrap();
    assert_eq!(reader.read(&mut [0; 8]).unwrap(), 0, "past the end");
}

/// Changes one base64 character of the header at `at` to another.
fn change_header_char(file: &mut [u8], at: usize) {
    file[at] = if file[at] == b'A' { b'B' } else { b'A' };
}

#[test]
fn an_altered_header_or_wrong_key_is_refused_by_name() {
    let keys = keys();
    let (file, header_len, key) = seal(&keys, &random_bytes(100));
    let header = std::str::from_utf8(&file[..header_len]).unwrap().to_owned();

    let mut altered = file.clone();
    change_header_char(&mut altered, header.rfind("--- ").unwrap() + 10);
    let error = SealedReader::open(Cursor::new(&altered), &keys.identities).unwrap_err();
    assert!(matches!(error, OpenError::HeaderAltered), "{error}");
    assert!(
        error.to_string().contains("the header was altered"),
        "{error}"
    );

    let mut altered = file.clone();
    change_header_char(&mut altered, header.find("-> X25519 ").unwrap() + 12);
    let error = SealedReader::open(Cursor::new(&altered), &keys.identities).unwrap_err();
    assert!(
        matches!(error, OpenError::NoMatchingIdentity { .. }),
        "{error}"
    );

    let error = SealedReader::open(Cursor::new(&file), &self::keys().identities).unwrap_err();
    assert!(
        matches!(error, OpenError::NoMatchingIdentity { stanzas: 1, .. }),
        "{error}"
    );
    assert!(error.to_string().contains("X25519"), "{error}");

    let (_, _, other_key) = seal(&keys, b"other");
    let error = SealedReader::open_with_key(Cursor::new(&file), &other_key).unwrap_err();
    assert!(matches!(error, OpenError::WrongKey), "{error}");
    assert!(SealedReader::open_with_key(Cursor::new(&file), &key).is_ok());

    let error = SealedReader::open(Cursor::new(&file[..header_len + 5]), &keys.identities);
    assert!(matches!(error, Err(OpenError::NoNonce)), "{error:?}");
}

#[test]
fn an_altered_chunk_is_named_with_its_offset() {
    let keys = keys();
    let (mut file, header_len, _) = seal(&keys, &random_bytes(3 * C + 5));
    let chunk_1 = header_len + 16 + STORED_CHUNK as usize;
    file[chunk_1 + 100] ^= 1;
    let error = read_all(&file, &keys.identities).unwrap_err();
    assert_eq!(
        chunk_error(&error),
        ChunkError::Altered {
            chunk: 1,
            offset: chunk_1 as u64
        }
    );
    assert_eq!(
        error.to_string(),
        format!("chunk 1 at byte {chunk_1} failed authentication: the file was altered or damaged")
    );
    // The chunk before it still reads.
    let mut reader = SealedReader::open(Cursor::new(&file), &keys.identities).unwrap();
    let mut first = vec![0; C];
    reader.read_exact(&mut first).unwrap();
}

#[test]
fn a_cut_file_is_refused_at_its_end() {
    let keys = keys();
    let plaintext = random_bytes(2 * C + 5);
    let (file, header_len, _) = seal(&keys, &plaintext);
    let boundary = header_len + 16 + 2 * STORED_CHUNK as usize;
    let error = read_all(&file[..boundary], &keys.identities).unwrap_err();
    assert_eq!(chunk_error(&error), ChunkError::CutAfter { chunk: 1 });
    assert!(
        error
            .to_string()
            .starts_with("the file ends after chunk 1 without its last chunk: it was cut short"),
        "{error}"
    );
    assert!(
        error.to_string().contains("rec decrypt --recover"),
        "{error}"
    );

    let inside = boundary - 1000;
    let error = read_all(&file[..inside], &keys.identities).unwrap_err();
    assert!(
        matches!(chunk_error(&error), ChunkError::CutInside { chunk: 1, .. }),
        "{error}"
    );
    let error = read_all(&file[..header_len + 16], &keys.identities).unwrap_err();
    assert_eq!(chunk_error(&error), ChunkError::NoChunk);
    let mut longer = file.clone();
    longer.extend_from_slice(&[0; 40]);
    let error = read_all(&longer, &keys.identities).unwrap_err();
    assert!(
        matches!(chunk_error(&error), ChunkError::CutInside { chunk: 2, .. }),
        "{error}"
    );
}

/// The file a writer leaves when its process dies after `len` bytes of plaintext and a
/// sync point padded to a chunk boundary (`len` is a multiple of 64 KiB).
fn crashed_at_boundary(keys: &Keys, plaintext: &[u8]) -> (Vec<u8>, SealKey) {
    assert_eq!(plaintext.len() % C, 0);
    let mut writer = SealedWriter::new(Vec::new(), &keys.recipients).unwrap();
    writer.write_all(plaintext).unwrap();
    writer.seal_full_chunk().unwrap();
    (writer.get_ref().clone(), writer.key().clone())
}

#[test]
fn recover_keeps_the_authentic_prefix_of_a_cut_file() {
    let keys = keys();
    let plaintext = random_bytes(3 * C + 5);
    let (file, header_len, key) = seal(&keys, &plaintext);

    let mut out = Vec::new();
    let whole = recover(Cursor::new(&file), &keys.identities, &mut out).unwrap();
    assert!(whole.complete && whole.stopped.is_none(), "{whole:?}");
    assert_eq!(
        (whole.chunks, whole.plaintext_bytes),
        (4, plaintext.len() as u64)
    );
    assert!(out == plaintext);

    // Cut in the middle of chunk 2: chunks 0 and 1 are kept.
    let cut = header_len + 16 + 2 * STORED_CHUNK as usize + 500;
    let mut out = Vec::new();
    let cut_file = recover(Cursor::new(&file[..cut]), &key, &mut out).unwrap();
    assert!(!cut_file.complete);
    assert_eq!(
        (cut_file.chunks, cut_file.plaintext_bytes),
        (2, 2 * C as u64)
    );
    assert!(out == plaintext[..2 * C]);
    let stopped = cut_file.stopped.unwrap();
    assert!(stopped.contains("ends inside chunk 2"), "{stopped}");

    // A crash after a sync point at a chunk boundary.
    let (crashed, key) = crashed_at_boundary(&keys, &plaintext[..3 * C]);
    let mut out = Vec::new();
    let recovered = recover(Cursor::new(&crashed), &key, &mut out).unwrap();
    assert!(!recovered.complete);
    assert_eq!(recovered.chunks, 3);
    assert!(out == plaintext[..3 * C]);
    assert_eq!(recovered.stop, Some(ChunkError::CutAfter { chunk: 2 }));
    let error = read_all(&crashed, &keys.identities).unwrap_err();
    assert_eq!(chunk_error(&error), ChunkError::CutAfter { chunk: 2 });
}

#[test]
fn recover_stops_at_an_altered_chunk_and_at_bytes_after_the_last() {
    let keys = keys();
    let plaintext = random_bytes(3 * C + 5);
    let (file, header_len, key) = seal(&keys, &plaintext);
    let mut altered = file.clone();
    altered[header_len + 16 + STORED_CHUNK as usize + 7] ^= 0x80;
    let mut out = Vec::new();
    let recovered = recover(Cursor::new(&altered), &key, &mut out).unwrap();
    assert_eq!(recovered.chunks, 1);
    assert!(out == plaintext[..C]);
    assert!(
        matches!(recovered.stop, Some(ChunkError::Altered { chunk: 1, .. })),
        "{recovered:?}"
    );

    // A whole file of one full chunk with bytes after it: the chunk is authentic as the
    // last one, and kept.
    let (mut longer, _, key) = seal(&keys, &plaintext[..C]);
    longer.extend_from_slice(&[0; 40]);
    let mut out = Vec::new();
    let recovered = recover(Cursor::new(&longer), &key, &mut out).unwrap();
    assert!(out == plaintext[..C]);
    assert!(!recovered.complete);
    assert!(
        matches!(recovered.stop, Some(ChunkError::Trailing { chunk: 0, .. })),
        "{recovered:?}"
    );
}

/// Reads `file` to its end in reads of `size` bytes.
fn read_in(file: &[u8], key: &SealKey, size: usize) -> std::io::Result<Vec<u8>> {
    let mut reader = SealedReader::open_with_key(Cursor::new(file), key).unwrap();
    let mut buf = vec![0; size];
    let mut plaintext = Vec::new();
    loop {
        match reader.read(&mut buf)? {
            0 => return Ok(plaintext),
            n => plaintext.extend_from_slice(&buf[..n]),
        }
    }
}

#[test]
fn whole_chunks_opened_straight_into_large_reads_agree_with_small_reads() {
    let keys = keys();
    let plaintext = random_bytes(3 * C + 5);
    let (file, header_len, key) = seal(&keys, &plaintext);
    for size in [1000, C - 1, C, C + 16, 1 << 20] {
        assert!(
            read_in(&file, &key, size).unwrap() == plaintext,
            "reads of {size}"
        );
    }
    let mut altered = file.clone();
    let chunk_2 = header_len + 16 + 2 * STORED_CHUNK as usize;
    altered[chunk_2 + 5] ^= 4;
    for size in [1000, 1 << 20] {
        let error = read_in(&altered, &key, size).unwrap_err();
        assert!(
            matches!(chunk_error(&error), ChunkError::Altered { chunk: 2, .. }),
            "reads of {size}: {error}"
        );
    }
    let (crashed, key) = crashed_at_boundary(&keys, &plaintext[..2 * C]);
    for size in [1000, 1 << 20] {
        let error = read_in(&crashed, &key, size).unwrap_err();
        assert_eq!(
            chunk_error(&error),
            ChunkError::CutAfter { chunk: 1 },
            "{size}"
        );
    }
}

#[test]
fn a_growing_file_reads_its_whole_chunks_and_a_finished_one_reads_whole() {
    let keys = keys();
    let plaintext = random_bytes(3 * C + 100);
    let mut writer = SealedWriter::new(Vec::new(), &keys.recipients).unwrap();
    writer.write_all(&plaintext[..2 * C]).unwrap();
    writer.seal_full_chunk().unwrap();
    writer.write_all(&plaintext[2 * C..]).unwrap();
    let key = writer.key().clone();
    // While written: three sealed chunks (the third once more bytes followed it), and a
    // fourth half on its way to the file.
    let mut growing = writer.get_ref().clone();
    growing.extend_from_slice(&[0xAB; 1000]);
    let mut reader = SealedReader::open_growing_with_key(Cursor::new(&growing), &key).unwrap();
    assert_eq!(reader.plaintext_len(), 3 * C as u64);
    let mut read = Vec::new();
    reader.read_to_end(&mut read).unwrap();
    assert_eq!(read, plaintext[..3 * C]);
    reader.seek(SeekFrom::Start(C as u64 + 5)).unwrap();
    let mut some = [0u8; 10];
    reader.read_exact(&mut some).unwrap();
    assert_eq!(some, plaintext[C + 5..C + 15]);
    // Opened as a whole file, the same bytes are refused as cut short.
    let mut whole = SealedReader::open_with_key(Cursor::new(&growing), &key).unwrap();
    assert!(whole.read_to_end(&mut Vec::new()).is_err());

    let finished = writer.finish().unwrap();
    let mut reader = SealedReader::open_growing_with_key(Cursor::new(&finished), &key).unwrap();
    let mut read = Vec::new();
    reader.read_to_end(&mut read).unwrap();
    assert_eq!(read, plaintext);
}
