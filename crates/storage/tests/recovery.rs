//! Reindexing truncated and corrupted files: every complete record before the damage is
//! recovered, nothing after it is invented, and the report says what was lost.

mod common;

use std::path::Path;

use common::{frame_records, read_with_mcap_crate, reindex, write_sample, Expected};
use mcap::records::op;
use recd_storage::{Compression, ReindexOptions, WriterOptions};

const FAST: ReindexOptions = ReindexOptions {
    compression: Compression::None,
    level: 0,
    chunk_size: 64 << 10,
    threads: 1,
    message_definitions: None,
};

struct Sample {
    bytes: Vec<u8>,
    expected: Vec<Expected>,
    /// End offset of each message record, in file order.
    message_ends: Vec<u64>,
    data_end: u64,
}

fn sample(dir: &Path, data_crc: bool) -> Sample {
    let path = dir.join("source.mcap");
    let options = WriterOptions {
        data_crc,
        ..WriterOptions::default()
    };
    let expected = write_sample(&path, options, 4);
    let bytes = std::fs::read(&path).unwrap();
    let records = frame_records(&bytes);
    let message_ends = records
        .iter()
        .filter(|r| r.opcode == op::MESSAGE)
        .map(|r| r.end)
        .collect::<Vec<_>>();
    assert_eq!(message_ends.len(), expected.len());
    let data_end = records
        .iter()
        .find(|r| r.opcode == op::DATA_END)
        .unwrap()
        .start;
    Sample {
        bytes,
        expected,
        message_ends,
        data_end,
    }
}

/// Reindexes `bytes` and checks that its first `intact` recovered messages are the
/// expected ones, byte-exact, and that the output holds no more messages than expected.
fn reindex_bytes(
    dir: &Path,
    bytes: &[u8],
    expected: &[Expected],
    intact: usize,
) -> recd_storage::ReindexReport {
    let input = dir.join("damaged.mcap");
    let output = dir.join("recovered.mcap");
    std::fs::write(&input, bytes).unwrap();
    let report = reindex(&input, &output, &FAST).unwrap();
    let recovered = read_with_mcap_crate(&output);
    assert_eq!(report.messages as usize, recovered.len());
    assert!(recovered.len() >= intact && recovered.len() <= expected.len());
    assert_eq!(
        recovered[..intact],
        expected[..intact],
        "intact messages come back byte-exact"
    );
    assert_eq!(
        std::fs::read(&input).unwrap(),
        bytes,
        "the input is never modified"
    );
    report
}

/// Reindexes a truncated copy: the output holds exactly the complete messages.
fn reindex_prefix(dir: &Path, sample: &Sample, cut: u64) -> recd_storage::ReindexReport {
    let complete = complete_before(sample, cut);
    let report = reindex_bytes(
        dir,
        &sample.bytes[..cut as usize],
        &sample.expected,
        complete,
    );
    assert_eq!(report.messages as usize, complete, "cut at {cut}");
    report
}

fn complete_before(sample: &Sample, offset: u64) -> usize {
    sample
        .message_ends
        .iter()
        .filter(|&&end| end <= offset)
        .count()
}

#[test]
fn a_file_cut_at_every_record_boundary_loses_nothing_it_held() {
    let dir = tempfile::tempdir().unwrap();
    let sample = sample(dir.path(), false);
    let boundaries: Vec<u64> = frame_records(&sample.bytes)
        .iter()
        .map(|r| r.end)
        .filter(|&end| end <= sample.data_end)
        .collect();
    assert!(boundaries.len() > sample.expected.len());
    for cut in boundaries {
        let report = reindex_prefix(dir.path(), &sample, cut);
        assert!(report.lost_nothing(), "cut at boundary {cut}: {report:?}");
        assert_eq!(report.unusable_bytes, 0);
    }
}

#[test]
fn a_file_cut_at_random_offsets_keeps_exactly_the_complete_records() {
    let dir = tempfile::tempdir().unwrap();
    let sample = sample(dir.path(), false);
    let boundaries: Vec<u64> = frame_records(&sample.bytes).iter().map(|r| r.end).collect();
    let mut rng = fastrand::Rng::with_seed(11);
    for _ in 0..60 {
        let cut = rng.u64(9..sample.data_end);
        if boundaries.contains(&cut) {
            continue;
        }
        let report = reindex_prefix(dir.path(), &sample, cut);
        assert!(!report.lost_nothing(), "cut at {cut} must be reported");
        let damage = report.damage.expect("damage reported");
        assert_eq!(report.unusable_bytes, cut - damage.offset);
        assert!(damage.offset <= cut);
    }
}

#[test]
fn flipped_bytes_never_panic_and_are_always_reported_when_the_file_has_a_crc() {
    let dir = tempfile::tempdir().unwrap();
    let sample = sample(dir.path(), true);
    let records = frame_records(&sample.bytes);
    let mut rng = fastrand::Rng::with_seed(23);
    for _ in 0..150 {
        // Anywhere after the magic, up to the DataEnd record.
        let at = rng.u64(8..sample.data_end) as usize;
        let mut bytes = sample.bytes.clone();
        bytes[at] ^= 1 << rng.u8(..8);
        // Every message that ended before the flipped byte is recovered intact.
        let intact = complete_before(&sample, at as u64);
        let report = reindex_bytes(dir.path(), &bytes, &sample.expected, intact);
        assert!(
            !report.lost_nothing(),
            "flip at {at} (in a {:?} record) went unnoticed",
            records
                .iter()
                .find(|r| r.start <= at as u64 && (at as u64) < r.end)
                .map(|r| r.opcode)
        );
    }
}

#[test]
fn a_damaged_chunked_file_keeps_the_intact_chunks() {
    let dir = tempfile::tempdir().unwrap();
    let sample = sample(dir.path(), false);
    let source = dir.path().join("source.mcap");
    let chunked = dir.path().join("chunked.mcap");
    let options = ReindexOptions {
        compression: Compression::Zstd,
        level: 0,
        chunk_size: 64 << 10,
        threads: 1,
        message_definitions: None,
    };
    reindex(&source, &chunked, &options).unwrap();
    let bytes = std::fs::read(&chunked).unwrap();
    let records = frame_records(&bytes);
    let chunks: Vec<_> = records.iter().filter(|r| r.opcode == op::CHUNK).collect();
    assert!(chunks.len() >= 3);

    let summary = mcap::Summary::read(&bytes).unwrap().unwrap();
    let in_first_two: usize = summary.chunk_indexes[..2]
        .iter()
        .map(|chunk| {
            let indexes = summary.read_message_indexes(&bytes, chunk).unwrap();
            indexes.values().map(Vec::len).sum::<usize>()
        })
        .sum();
    assert!(in_first_two > 0);

    // Cut inside the third chunk: exactly the first two chunks' messages survive.
    let third = chunks[2];
    let cut = (third.start + third.end) / 2;
    let report = reindex_bytes(
        dir.path(),
        &bytes[..cut as usize],
        &sample.expected,
        in_first_two,
    );
    assert_eq!(report.messages as usize, in_first_two);
    assert_eq!(report.damage.as_ref().unwrap().offset, third.start);

    // A flipped byte inside a chunk's compressed data fails its CRC: that chunk and what
    // follows are not taken, what precedes it is.
    let mut flipped = bytes.clone();
    let at = (third.start + third.end) as usize / 2;
    flipped[at] ^= 0x40;
    let report = reindex_bytes(dir.path(), &flipped, &sample.expected, in_first_two);
    assert_eq!(report.messages as usize, in_first_two);
    assert_eq!(report.damage.as_ref().unwrap().offset, third.start);
}

#[test]
fn garbage_after_the_magic_is_damage_not_a_crash() {
    let dir = tempfile::tempdir().unwrap();
    let mut bytes = mcap::MAGIC.to_vec();
    bytes.extend_from_slice(&[0xff; 100]);
    let report = reindex_bytes(dir.path(), &bytes, &[], 0);
    assert_eq!(report.messages, 0);
    assert_eq!(report.damage.unwrap().offset, 8);
    assert_eq!(report.unusable_bytes, 100);
}
