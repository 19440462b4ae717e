//! The writer's digest of what it stored: the SHA-256 of every byte of the file as it is on
//! the disk once closed, taken while the bytes left (no read back), in every I/O mode,
//! sealed or not, and for each file of a rolled recording.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use recd_seal::Recipients;
use recd_storage::{IoMode, MessageHeader, SealKeys, Sealing, StreamWriter, WriterOptions};
use ring::digest::{digest, SHA256};

/// Payload sizes: batched, and large enough to leave in place with direct I/O.
const SIZES: [usize; 5] = [17, 4_000, 70_000, 300_001, 1_200_000];

fn sha256_on_disk(path: &Path) -> [u8; 32] {
    let bytes = std::fs::read(path).unwrap();
    digest(&SHA256, &bytes).as_ref().try_into().unwrap()
}

fn sealing() -> Sealing {
    let identity = age::x25519::Identity::generate();
    Sealing {
        recipients: Arc::new(Recipients::parse(&[identity.to_public().to_string()]).unwrap()),
        keys: SealKeys::default(),
    }
}

/// Writes two files (the second after a roll) with flushes between messages, and returns
/// each one's path and the digest its writer gave.
fn write_two_files(dir: &Path, options: WriterOptions) -> Vec<(PathBuf, Option<[u8; 32]>)> {
    let first = dir.join("a.mcap");
    let second = dir.join("b.mcap");
    let mut writer = StreamWriter::create(&first, options).unwrap();
    let channel = writer
        .add_channel(None, "/data", "raw", &BTreeMap::new())
        .unwrap();
    let mut rng = fastrand::Rng::with_seed(5);
    let mut summaries = Vec::new();
    for round in 0..12u32 {
        let size = SIZES[round as usize % SIZES.len()];
        let payload: Vec<u8> = (0..size).map(|_| rng.u8(..)).collect();
        let time = 1_700_000_000_000_000_000 + u64::from(round) * 1_000;
        let header = MessageHeader {
            channel,
            sequence: round,
            log_time: time,
            publish_time: time,
        };
        writer.write_message(&header, &payload).unwrap();
        if round % 3 == 1 {
            writer.flush().unwrap();
        }
        if round == 6 {
            summaries.push(writer.roll(&second).unwrap());
        }
    }
    summaries.push(writer.close().unwrap());
    (summaries.into_iter())
        .map(|summary| (summary.path, summary.stored_sha256))
        .collect()
}

fn io_modes(dir: &Path) -> Vec<IoMode> {
    let mut modes = vec![IoMode::Buffered];
    if recd_storage::probe_io_mode(dir, IoMode::Auto).unwrap() == IoMode::Direct {
        modes.push(IoMode::Direct);
    }
    modes
}

#[test]
fn each_closed_file_carries_the_sha256_of_its_bytes_on_disk() {
    let dir = tempfile::tempdir().unwrap();
    for io_mode in io_modes(dir.path()) {
        for sealing in [None, Some(sealing())] {
            let case = format!("{io_mode:?}, sealed {}", sealing.is_some());
            let out = tempfile::tempdir_in(dir.path()).unwrap();
            let options = WriterOptions {
                io_mode,
                sealing,
                stored_digest: true,
                ..WriterOptions::default()
            };
            let files = write_two_files(out.path(), options);
            assert_eq!(files.len(), 2, "{case}");
            for (path, stored) in files {
                assert_eq!(
                    stored,
                    Some(sha256_on_disk(&path)),
                    "{case}: {}",
                    path.display()
                );
            }
        }
    }
}

#[test]
fn without_asking_no_digest_is_taken() {
    let dir = tempfile::tempdir().unwrap();
    let files = write_two_files(dir.path(), WriterOptions::default());
    assert!(
        files.iter().all(|(_, stored)| stored.is_none()),
        "{files:?}"
    );
}
