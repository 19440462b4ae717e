//! Direct I/O: files written with `O_DIRECT` hold the same messages as buffered ones, large
//! payloads leave from the caller's memory at block-aligned file offsets, and a flushed
//! file is a readable prefix at every moment.

mod common;

use std::collections::BTreeMap;

use common::{frame_records, read_with_mcap_crate, validate_with_mcap_crate, write_sample};
use recd_storage::direct::{BLOCK, PADDING_OPCODE};
use recd_storage::{summarize, IoMode, MessageHeader, StreamWriter, WriterOptions};

fn direct_options() -> WriterOptions {
    WriterOptions {
        io_mode: IoMode::Direct,
        data_crc: true,
        ..WriterOptions::default()
    }
}

#[test]
fn direct_files_hold_every_message_byte_exact_with_valid_crcs() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("direct.mcap");
    let expected = write_sample(&path, direct_options(), 8);
    assert_eq!(read_with_mcap_crate(&path), expected);
    let bytes = std::fs::read(&path).unwrap();
    assert!(validate_with_mcap_crate(&bytes) > expected.len());
    let paddings = frame_records(&bytes)
        .iter()
        .filter(|r| r.opcode == PADDING_OPCODE)
        .count();
    assert!(
        paddings >= 8,
        "one padding record per large payload at least"
    );
    let info = summarize(&path).unwrap();
    assert!(info.closed_cleanly);
    assert_eq!(info.message_count, expected.len() as u64);
}

fn random_bytes(len: usize, seed: u64) -> Vec<u8> {
    let mut rng = fastrand::Rng::with_seed(seed);
    (0..len).map(|_| rng.u8(..)).collect()
}

/// Finds `needle` in `haystack` (payloads are random, so the match is theirs).
fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

#[test]
fn large_payloads_land_on_offsets_congruent_to_their_addresses() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("aligned.mcap");
    let mut writer = StreamWriter::create(&path, direct_options()).unwrap();
    let channel = writer
        .add_channel(None, "/frames", "raw", &BTreeMap::new())
        .unwrap();
    let memory = random_bytes(4 << 20, 3);
    let user_header = [7u8; 16];
    // Start addresses all over a block; lengths that do and do not end on one.
    let slices: Vec<&[u8]> = [
        (1usize, 300_000usize),
        (4096, 65_536),
        (777, 1 << 20),
        (0, 100),
    ]
    .iter()
    .enumerate()
    .map(|(i, &(offset, len))| &memory[i * 1_100_000 + offset..][..len])
    .collect();
    for (sequence, payload) in slices.iter().enumerate() {
        let header = MessageHeader {
            channel,
            sequence: sequence as u32,
            log_time: 10 + sequence as u64,
            publish_time: 10,
        };
        writer
            .write_message_parts(&header, &[&user_header, payload])
            .unwrap();
    }
    writer.close().unwrap();

    let bytes = std::fs::read(&path).unwrap();
    for payload in &slices[..3] {
        let at = find(&bytes, &payload[..64]).expect("payload in the file");
        assert_eq!(at % BLOCK, payload.as_ptr() as usize % BLOCK);
    }
    let read = read_with_mcap_crate(&path);
    assert_eq!(read.len(), slices.len());
    for (message, payload) in read.iter().zip(&slices) {
        assert_eq!(message.payload, [&user_header[..], payload].concat());
    }
}

#[test]
fn a_flushed_direct_file_is_a_complete_prefix_and_rolls_stand_alone() {
    let dir = tempfile::tempdir().unwrap();
    let first = dir.path().join("a.mcap");
    let mut writer = StreamWriter::create(&first, direct_options()).unwrap();
    let channel = writer
        .add_channel(None, "/imu", "raw", &BTreeMap::new())
        .unwrap();
    let write = |writer: &mut StreamWriter, sequence: u32, size: usize| {
        let header = MessageHeader {
            channel,
            sequence,
            log_time: u64::from(sequence),
            publish_time: 0,
        };
        let payload = random_bytes(size, u64::from(sequence));
        writer.write_message(&header, &payload).unwrap();
    };
    for sequence in 0..10 {
        write(&mut writer, sequence, 100);
    }
    writer.flush().unwrap();
    let size = std::fs::metadata(&first).unwrap().len();
    assert_eq!(size % BLOCK as u64, 0, "direct writes come in whole blocks");
    let open = summarize(&first).unwrap();
    assert!(!open.closed_cleanly);
    assert_eq!(
        open.message_count, 10,
        "every flushed message is in the file"
    );
    assert_eq!(open.scan.unwrap().unusable_bytes, 0);

    let second = dir.path().join("b.mcap");
    write(&mut writer, 10, 200_000);
    let summary = writer.roll(&second).unwrap();
    assert_eq!(summary.message_count, 11);
    write(&mut writer, 11, 50);
    writer.close().unwrap();
    assert_eq!(read_with_mcap_crate(&first).len(), 11);
    let rest = read_with_mcap_crate(&second);
    assert_eq!(rest.len(), 1);
    assert_eq!(rest[0].sequence, 11);
    assert_eq!(rest[0].topic, "/imu");
}
