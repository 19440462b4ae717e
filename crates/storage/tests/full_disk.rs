//! A file system that fills up under the writer: the file ends on its last complete
//! record with its summary, and says exactly which acknowledged messages it lacks.

mod common;

use std::collections::BTreeMap;

use recd_storage::{IoMode, MessageHeader, StreamWriter, WriteError, WriterOptions};
use recd_testkit::Mount;

/// Writes `size`-byte messages on two channels into a 4 MiB tmpfs until a write fails,
/// then ends the file; returns it with the number of messages acknowledged per topic.
fn fill(
    mount: &Mount,
    io_mode: IoMode,
    size: usize,
) -> (recd_storage::EndedFile, BTreeMap<String, u64>) {
    let options = WriterOptions {
        io_mode,
        ..WriterOptions::default()
    };
    let mut writer = StreamWriter::create(mount.join("full.mcap"), options).unwrap();
    let topics = ["/a", "/b"];
    let channels = topics.map(|topic| {
        writer
            .add_channel(None, topic, "raw", &BTreeMap::new())
            .unwrap()
    });
    let mut acknowledged = BTreeMap::new();
    let mut error = None;
    for sequence in 0..100_000u32 {
        let which = sequence as usize % 2;
        let header = MessageHeader {
            channel: channels[which],
            sequence,
            log_time: 1_000 + u64::from(sequence),
            publish_time: 1_000 + u64::from(sequence),
        };
        let payload = vec![sequence as u8; size];
        match writer.write_message(&header, &payload) {
            Ok(()) => *acknowledged.entry(topics[which].to_string()).or_default() += 1,
            Err(e) => {
                error = Some(e);
                break;
            }
        }
    }
    let error = error.expect("the 4 MiB file system filled up");
    assert!(
        matches!(&error, WriteError::Io { source, .. } if source.raw_os_error() == Some(libc::ENOSPC)),
        "{error}"
    );
    (writer.end(), acknowledged)
}

fn check(io_mode: IoMode, size: usize) {
    let mount = Mount::new("tmpfs", "size=4m");
    let (ended, acknowledged) = fill(&mount, io_mode, size);
    assert!(
        ended.summary.indexed,
        "truncating to the last record made room for the summary"
    );
    let on_disk = std::fs::metadata(&ended.summary.path).unwrap().len();
    assert_eq!(ended.summary.bytes, on_disk);
    let bytes = std::fs::read(&ended.summary.path).unwrap();
    common::validate_with_mcap_crate(&bytes);
    let messages = common::read_with_mcap_crate(&ended.summary.path);
    assert_eq!(messages.len() as u64, ended.summary.message_count);
    let summary = mcap::Summary::read(&bytes).unwrap().expect("a summary");
    let stats = summary.stats.expect("statistics");
    assert_eq!(stats.message_count, ended.summary.message_count);
    // Every message is whole, in order, and each topic's acknowledged messages are either
    // in the file or reported as unwritten.
    for (i, message) in messages.iter().enumerate() {
        assert_eq!(message.sequence, i as u32);
        assert!(message.payload.iter().all(|&b| b == i as u8));
    }
    if size < WriterOptions::default().zero_copy_threshold {
        assert!(
            !ended.unwritten.is_empty(),
            "the batch the disk refused was acknowledged"
        );
    }
    for (topic, sent) in &acknowledged {
        let in_file = messages.iter().filter(|m| &m.topic == topic).count() as u64;
        let (unwritten, unwritten_bytes) = ended.unwritten.get(topic).copied().unwrap_or_default();
        assert_eq!(in_file + unwritten, *sent, "{topic}");
        assert_eq!(unwritten_bytes, unwritten * size as u64);
    }
}

#[test]
fn buffered_large_messages_end_on_the_last_complete_one_with_a_summary() {
    check(IoMode::Buffered, 300_000);
}

#[test]
fn buffered_batched_messages_lost_with_the_batch_are_reported_unwritten() {
    check(IoMode::Buffered, 1_000);
}

#[test]
fn direct_io_ends_on_the_last_record_the_disk_took() {
    check(IoMode::Direct, 300_000);
    check(IoMode::Direct, 1_000);
}
