//! Sealed files: the writer's files are age files whose plaintext is the MCAP it would
//! write unsealed, no message byte is in the file in clear, and a file whose writer died
//! after a flush holds everything written before it as authentic chunks.

mod common;

use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use common::{validate_with_mcap_crate, write_sample};
use recd_seal::{Recipients, CHUNK_SIZE, NONCE_SIZE, TAG_SIZE};
use recd_storage::{
    reindex_in_memory, IoMode, MessageHeader, ReindexOptions, SealKeys, Sealing, StreamWriter,
    WriterOptions,
};

const MARKER: &[u8] = b"recd-sealed-marker-5f1c";

fn sealing() -> (age::x25519::Identity, Sealing) {
    let identity = age::x25519::Identity::generate();
    let recipients = Recipients::parse(&[identity.to_public().to_string()]).unwrap();
    let sealing = Sealing {
        recipients: Arc::new(recipients),
        keys: SealKeys::default(),
    };
    (identity, sealing)
}

fn sealed_options(sealing: &Sealing) -> WriterOptions {
    WriterOptions {
        data_crc: true,
        sealing: Some(sealing.clone()),
        ..WriterOptions::default()
    }
}

/// The I/O modes to test here: buffered, and direct where the test directory's file
/// system takes it.
fn io_modes(dir: &Path) -> Vec<IoMode> {
    let mut modes = vec![IoMode::Buffered];
    if recd_storage::probe_io_mode(dir, IoMode::Auto).unwrap() == IoMode::Direct {
        modes.push(IoMode::Direct);
    }
    modes
}

/// The plaintext age decrypts from `file`, as far as it authenticates, and whether the
/// whole file did.
fn decrypt(file: &[u8], identity: &age::x25519::Identity) -> (Vec<u8>, bool) {
    let decryptor = age::Decryptor::new(file).unwrap();
    let mut reader = decryptor
        .decrypt(std::iter::once(identity as &dyn age::Identity))
        .unwrap();
    let mut plaintext = Vec::new();
    let mut buf = vec![0u8; CHUNK_SIZE];
    loop {
        match reader.read(&mut buf) {
            Ok(0) => return (plaintext, true),
            Ok(n) => plaintext.extend_from_slice(&buf[..n]),
            Err(_) => return (plaintext, false),
        }
    }
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

#[test]
fn a_sealed_file_is_an_age_file_of_the_mcap_an_unsealed_one_holds() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let (identity, sealing) = sealing();
    for io_mode in io_modes(dir.path()) {
        let sealed_path = dir.path().join(format!("a-{io_mode}.mcap.age"));
        let plain_path = dir.path().join(format!("a-{io_mode}.mcap"));
        let options = WriterOptions {
            io_mode,
            ..sealed_options(&sealing)
        };
        let expected = write_sample(&sealed_path, options, 6);
        write_sample(&plain_path, WriterOptions::default(), 6);
        let file = std::fs::read(&sealed_path).unwrap();
        assert!(file.starts_with(b"age-encryption.org/v1\n"));
        let (plaintext, complete) = decrypt(&file, &identity);
        assert!(complete);
        // Records, counts and CRCs all check out; the same messages as the unsealed file.
        assert!(validate_with_mcap_crate(&plaintext) > expected.len());
        let messages: Vec<_> = mcap::MessageStream::new(&plaintext)
            .unwrap()
            .map(|m| m.unwrap().data.into_owned())
            .collect();
        let plain = std::fs::read(&plain_path).unwrap();
        let plain_messages: Vec<_> = mcap::MessageStream::new(&plain)
            .unwrap()
            .map(|m| m.unwrap().data.into_owned())
            .collect();
        assert_eq!(messages, plain_messages);
        assert_eq!(messages.len(), expected.len());
        // The writer kept the file's key.
        assert!(sealing.keys.get(&sealed_path).is_some());
    }
}

#[test]
fn no_message_byte_is_in_the_file_in_clear_and_the_summary_counts_the_stored_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let (identity, sealing) = sealing();
    let path = dir.path().join("marker.mcap.age");
    let mut writer = StreamWriter::create(&path, sealed_options(&sealing)).unwrap();
    let channel = writer
        .add_channel(None, "/marker", "raw", &BTreeMap::new())
        .unwrap();
    let large = [MARKER.repeat(20_000)].concat();
    for (i, payload) in [MARKER.to_vec(), large].iter().cycle().take(40).enumerate() {
        let header = MessageHeader {
            channel,
            sequence: i as u32,
            log_time: 1_000 + i as u64,
            publish_time: 1_000 + i as u64,
        };
        writer.write_message(&header, payload).unwrap();
        if i % 7 == 0 {
            writer.flush().unwrap();
        }
    }
    let summary = writer.close().unwrap();
    let file = std::fs::read(&path).unwrap();
    assert_eq!(summary.bytes, file.len() as u64);
    assert!(!contains(&file, MARKER));
    assert!(!contains(&file, b"/marker"));
    let (plaintext, complete) = decrypt(&file, &identity);
    assert!(complete);
    assert!(contains(&plaintext, MARKER));
    assert_eq!(
        mcap::MessageStream::new(&plaintext).unwrap().count(),
        40,
        "every message"
    );
}

/// Writes `count` messages of `size` bytes, flushing after message `flush_after`, and
/// drops the writer there as a power cut would leave it (the process dies; nothing more
/// reaches the file).
fn write_and_die(
    path: &Path,
    options: WriterOptions,
    count: usize,
    size: usize,
    flush_after: usize,
) {
    let mut writer = StreamWriter::create(path, options).unwrap();
    let channel = writer
        .add_channel(None, "/data", "raw", &BTreeMap::new())
        .unwrap();
    for i in 0..count {
        let header = MessageHeader {
            channel,
            sequence: i as u32,
            log_time: i as u64,
            publish_time: i as u64,
        };
        writer.write_message(&header, &vec![i as u8; size]).unwrap();
        if i == flush_after {
            writer.flush().unwrap();
            // What reaches the file after the flush is lost with the process.
            let flushed = std::fs::read(path).unwrap();
            std::mem::forget(writer);
            std::fs::write(path, flushed).unwrap();
            return;
        }
    }
}

#[test]
fn a_flush_leaves_whole_chunks_that_hold_every_message_written_before_it() {
    // In the target directory: a file system that takes direct I/O, unlike a tmpfs.
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let (identity, sealing) = sealing();
    let cases = [(10, 100, 4), (50, 30_000, 33), (3, 70_000, 2)];
    for (io_mode, (count, size, flush_after)) in io_modes(dir.path())
        .into_iter()
        .flat_map(|mode| cases.map(|case| (mode, case)))
    {
        let path = dir.path().join(format!("cut-{io_mode}-{size}.mcap.age"));
        let options = WriterOptions {
            io_mode,
            ..sealed_options(&sealing)
        };
        write_and_die(&path, options, count, size, flush_after);
        let file = std::fs::read(&path).unwrap();
        let header_len = file.windows(4).position(|w| w == b"\n---").unwrap();
        let header_len = header_len
            + file[header_len + 1..]
                .iter()
                .position(|&b| b == b'\n')
                .unwrap()
            + 2;
        let payload = file.len() - header_len - NONCE_SIZE;
        assert_eq!(payload % (CHUNK_SIZE + TAG_SIZE), 0, "whole chunks only");
        let (plaintext, complete) = decrypt(&file, &identity);
        assert!(
            !complete,
            "a file without its last chunk is refused as cut short"
        );
        assert_eq!(
            plaintext.len(),
            payload / (CHUNK_SIZE + TAG_SIZE) * CHUNK_SIZE
        );
        let (_, messages) = reindex_in_memory(&plaintext, &ReindexOptions::default()).unwrap();
        assert_eq!(
            messages,
            flush_after as u64 + 1,
            "{io_mode}, {size}-byte messages"
        );
    }
}

#[test]
fn a_cut_reads_sealed_inputs_with_their_keys_an_empty_one_as_empty_and_seals_its_output() {
    let dir = tempfile::tempdir().unwrap();
    let (identity, sealing) = sealing();
    let recorded = dir.path().join("s_0000.mcap.age");
    let expected = write_sample(&recorded, sealed_options(&sealing), 4);
    // The next file of the session, created but with nothing on the disk yet (its header
    // is still staged): an empty prefix, not a damaged file.
    let just_created = dir.path().join("s_0001.mcap.age");
    std::fs::write(&just_created, b"").unwrap();
    let output = dir.path().join("cut.mcap.age");
    let options = recd_storage::CutOptions {
        sealing: Some(sealing.clone()),
        ..recd_storage::CutOptions::default()
    };
    let window = recd_storage::LogWindow {
        start_ns: 0,
        end_ns: u64::MAX,
    };
    let report = recd_storage::cut(&[recorded, just_created], window, &output, &options).unwrap();
    assert_eq!(report.messages, expected.len() as u64);
    let file = std::fs::read(&output).unwrap();
    assert!(file.starts_with(recd_seal::VERSION_LINE));
    let (plaintext, complete) = decrypt(&file, &identity);
    assert!(complete);
    assert_eq!(
        mcap::MessageStream::new(&plaintext).unwrap().count(),
        expected.len()
    );
    assert!(sealing.keys.get(&output).is_some(), "the cut's key is kept");
}

#[test]
fn only_the_input_still_being_written_is_read_as_growing_an_altered_last_chunk_fails_the_cut() {
    let dir = tempfile::tempdir().unwrap();
    let (_, sealing) = sealing();
    let recorded = dir.path().join("s_0000.mcap.age");
    let expected = write_sample(&recorded, sealed_options(&sealing), 40);
    let mut file = std::fs::read(&recorded).unwrap();
    assert!(
        file.len() > 3 * CHUNK_SIZE,
        "several chunks: {}",
        file.len()
    );
    // A byte of the last chunk flipped: the file reads as one whose last chunk is still
    // being written, but it was closed.
    let last = file.len() - 20;
    file[last] ^= 1;
    std::fs::write(&recorded, &file).unwrap();
    let window = recd_storage::LogWindow {
        start_ns: 0,
        end_ns: u64::MAX,
    };
    let cut = |growing: Vec<PathBuf>, name: &str| {
        let options = recd_storage::CutOptions {
            sealing: Some(sealing.clone()),
            growing,
            ..recd_storage::CutOptions::default()
        };
        let output = dir.path().join(name);
        recd_storage::cut(std::slice::from_ref(&recorded), window, &output, &options)
    };
    let error = cut(Vec::new(), "closed.mcap.age").unwrap_err().to_string();
    assert!(
        error.contains(&recorded.display().to_string())
            && error.contains("altered")
            && error.contains("chunk "),
        "{error}"
    );
    assert!(!dir.path().join("closed.mcap.age").exists());
    // Were it still being written, its whole chunks are what it holds so far.
    let report = cut(vec![recorded.clone()], "growing.mcap.age").unwrap();
    assert!(
        report.messages > 0 && report.messages < expected.len() as u64,
        "{} of {}",
        report.messages,
        expected.len()
    );
}
