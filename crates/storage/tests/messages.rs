//! `for_each_message` (what `rec play` reads): every message, in file order, from a
//! finished file (mapped: kept bytes are views of the file), from a file still being
//! written (read through a buffer), from a reindexed (chunked) file and from a cut one.

mod common;

use std::ops::ControlFlow;
use std::path::Path;

use common::{reindex, write_sample, Expected};
use recd_storage::{
    for_each_message, Compression, MessageHeader, ReindexOptions, StreamWriter, WriterOptions,
};

/// Every message of `path`, and for each whether `to_bytes` kept it without a copy.
fn read(path: &Path) -> (Vec<Expected>, Vec<bool>, Option<u64>) {
    let mut messages = Vec::new();
    let mut views = Vec::new();
    let read = for_each_message(path, |message| {
        let kept = message.to_bytes();
        assert_eq!(kept, message.data);
        views.push(kept.as_ptr() == message.data.as_ptr() && !kept.is_empty());
        messages.push(Expected {
            topic: message.channel.topic.clone(),
            sequence: message.sequence,
            log_time: message.log_time,
            publish_time: message.publish_time,
            payload: kept.to_vec(),
        });
        ControlFlow::Continue(())
    })
    .unwrap();
    (messages, views, read.damage.map(|d| d.offset))
}

#[test]
fn a_finished_file_is_read_in_place_and_its_messages_kept_without_a_copy() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a.mcap");
    let expected = write_sample(&path, WriterOptions::default(), 3);
    let (messages, views, damage) = read(&path);
    assert_eq!(messages, expected);
    assert_eq!(damage, None);
    // Every non-empty message is a view of the mapped file.
    let non_empty = expected.iter().filter(|m| !m.payload.is_empty()).count();
    assert_eq!(views.iter().filter(|v| **v).count(), non_empty);

    // Chunked without compression (`finish = "index"`): the messages still lie in the
    // mapped file, so they are views too.
    let chunked = dir.path().join("chunked.mcap");
    reindex(&path, &chunked, &Default::default()).unwrap();
    let (messages, views, _) = read(&chunked);
    assert_eq!(messages, expected);
    assert_eq!(views.iter().filter(|v| **v).count(), non_empty);

    // Compressed chunks: the messages lie in decompressed chunks, so they are copies.
    let compressed = dir.path().join("compressed.mcap");
    let zstd = ReindexOptions {
        compression: Compression::Zstd,
        ..Default::default()
    };
    reindex(&path, &compressed, &zstd).unwrap();
    let (messages, views, _) = read(&compressed);
    assert_eq!(messages, expected);
    assert!(views.iter().all(|v| !v));

    // Cut: up to the last complete message, and where it ends.
    let bytes = std::fs::read(&path).unwrap();
    let cut = dir.path().join("cut.mcap");
    std::fs::write(&cut, &bytes[..bytes.len() * 2 / 3]).unwrap();
    let (messages, _, damage) = read(&cut);
    assert!(!messages.is_empty() && messages.len() < expected.len());
    assert_eq!(messages[..], expected[..messages.len()]);
    assert!(damage.is_some());
}

#[test]
fn a_file_still_being_written_is_read_through_a_buffer() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("live.mcap");
    let mut writer = StreamWriter::create(&path, WriterOptions::default()).unwrap();
    let channel = writer
        .add_channel(None, "/imu", "raw", &Default::default())
        .unwrap();
    let mut sent = Vec::new();
    for sequence in 0..20u32 {
        let payload = vec![sequence as u8; 70_000 + sequence as usize];
        let header = MessageHeader {
            channel,
            sequence,
            log_time: u64::from(sequence),
            publish_time: 0,
        };
        writer.write_message(&header, &payload).unwrap();
        sent.push(payload);
    }
    writer.flush().unwrap();
    let (messages, views, _) = read(&path);
    let payloads: Vec<Vec<u8>> = messages.into_iter().map(|m| m.payload).collect();
    assert_eq!(payloads, sent);
    assert!(
        views.iter().all(|v| !v),
        "no view of a file its writer holds"
    );
    writer.close().unwrap();
}
