//! Files written by the streaming writer read back byte-exact by the `mcap` crate, before
//! and after reindexing.

mod common;

use std::collections::BTreeMap;

use common::{read_with_mcap_crate, reindex, validate_with_mcap_crate, write_sample};
use recd_storage::{
    Attachment, ChannelId, Compression, MessageHeader, ReindexOptions, StreamWriter, WriteError,
    WriterOptions,
};

#[test]
fn every_message_comes_back_byte_exact_with_and_without_crc() {
    for data_crc in [false, true] {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("rec.mcap");
        let options = WriterOptions {
            data_crc,
            ..WriterOptions::default()
        };
        let expected = write_sample(&path, options, 12);
        assert_eq!(read_with_mcap_crate(&path), expected, "crc {data_crc}");

        let bytes = std::fs::read(&path).unwrap();
        assert!(validate_with_mcap_crate(&bytes) > expected.len());
        let summary = mcap::Summary::read(&bytes).unwrap().expect("a summary");
        let stats = summary.stats.as_ref().unwrap();
        assert_eq!(stats.message_count, expected.len() as u64);
        assert_eq!(stats.channel_count, 3);
        assert_eq!(stats.schema_count, 1);
        assert_eq!(stats.metadata_count, 1);
        assert_eq!(stats.message_start_time, expected[0].log_time);
        assert_eq!(stats.message_end_time, expected.last().unwrap().log_time);
        let camera = summary
            .channels
            .values()
            .find(|c| c.topic == "/camera")
            .unwrap();
        assert_eq!(camera.metadata["offered_qos_profiles"], "- history: 1");
        assert_eq!(
            camera.schema.as_ref().unwrap().name,
            "sensor_msgs/msg/Image"
        );
        let metadata = mcap::read::metadata(&bytes, &summary.metadata_indexes[0]).unwrap();
        assert_eq!(metadata.name, "recorder");
        assert_eq!(metadata.metadata["/camera.dropped"], "0");
        let data_end = mcap_data_end_crc(&bytes);
        assert_eq!(data_end != 0, data_crc, "DataEnd CRC present iff asked for");
    }
}

fn mcap_data_end_crc(bytes: &[u8]) -> u32 {
    let records = common::frame_records(bytes);
    let data_end = records
        .iter()
        .find(|r| r.opcode == mcap::records::op::DATA_END)
        .unwrap();
    u32::from_le_bytes(
        bytes[data_end.start as usize + 9..data_end.end as usize]
            .try_into()
            .unwrap(),
    )
}

#[test]
fn reindexed_files_are_chunked_indexed_and_hold_the_same_messages() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("rec.mcap");
    let expected = write_sample(&input, WriterOptions::default(), 12);
    let cases = [
        (Compression::None, 0),
        (Compression::Zstd, 0),
        (Compression::Zstd, 19),
        (Compression::Lz4, 0),
        (Compression::Lz4, 9),
    ];
    for (compression, level) in cases {
        let output = dir
            .path()
            .join(format!("indexed-{compression:?}-{level}.mcap"));
        let options = ReindexOptions {
            compression,
            level,
            chunk_size: 256 << 10,
            threads: 2,
            message_definitions: None,
        };
        let report = reindex(&input, &output, &options).unwrap();
        assert!(report.lost_nothing());
        assert!(report.input_was_closed);
        assert_eq!(report.messages, expected.len() as u64);
        assert_eq!(read_with_mcap_crate(&output), expected);

        let bytes = std::fs::read(&output).unwrap();
        validate_with_mcap_crate(&bytes);
        let summary = mcap::Summary::read(&bytes).unwrap().unwrap();
        assert!(summary.chunk_indexes.len() > 1, "several chunks");
        let name = match compression {
            Compression::None => "",
            Compression::Zstd => "zstd",
            Compression::Lz4 => "lz4",
        };
        assert!(summary.chunk_indexes.iter().all(|c| c.compression == name));
        let indexed: usize = summary
            .chunk_indexes
            .iter()
            .map(|chunk| {
                let indexes = summary.read_message_indexes(&bytes, chunk).unwrap();
                indexes.values().map(Vec::len).sum::<usize>()
            })
            .sum();
        assert_eq!(
            indexed,
            expected.len(),
            "every message is in a message index"
        );
        assert_eq!(summary.metadata_indexes.len(), 1, "metadata kept");

        // Re-chunking an indexed file keeps everything too.
        let again = dir
            .path()
            .join(format!("again-{compression:?}-{level}.mcap"));
        let report = reindex(&output, &again, &ReindexOptions::default()).unwrap();
        assert!(report.lost_nothing());
        assert_eq!(read_with_mcap_crate(&again), expected);
    }
}

#[test]
fn chunks_compressed_on_several_threads_are_written_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("rec.mcap");
    let expected = write_sample(&input, WriterOptions::default(), 40);
    for compression in [Compression::Zstd, Compression::Lz4] {
        let files: Vec<Vec<u8>> = [1, 2, 3]
            .iter()
            .map(|&threads| {
                let output = dir.path().join(format!("{compression:?}-{threads}.mcap"));
                let options = ReindexOptions {
                    compression,
                    chunk_size: 64 << 10,
                    threads,
                    ..ReindexOptions::default()
                };
                reindex(&input, &output, &options).unwrap();
                assert_eq!(read_with_mcap_crate(&output), expected, "{threads} threads");
                std::fs::read(&output).unwrap()
            })
            .collect();
        let summary = mcap::Summary::read(&files[0]).unwrap().unwrap();
        assert!(summary.chunk_indexes.len() > 8, "many chunks in flight");
        assert!(
            files.iter().all(|file| *file == files[0]),
            "{compression:?}: the same bytes whatever the number of threads"
        );
    }
}

#[test]
fn reindex_without_output_replaces_the_input_only_when_done() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("rec.mcap");
    let expected = write_sample(&path, WriterOptions::default(), 3);
    let report = reindex(&path, &path, &ReindexOptions::default()).unwrap();
    assert!(report.lost_nothing());
    assert_eq!(read_with_mcap_crate(&path), expected);
    let summary = mcap::Summary::read(&std::fs::read(&path).unwrap())
        .unwrap()
        .unwrap();
    assert!(!summary.chunk_indexes.is_empty());
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(
        names,
        vec![std::ffi::OsString::from("rec.mcap")],
        "no stray files"
    );
}

#[test]
fn rolling_gives_self_contained_files_that_together_hold_every_message_once() {
    let dir = tempfile::tempdir().unwrap();
    let paths: Vec<_> = (0..3)
        .map(|i| dir.path().join(format!("rec_{i:04}.mcap")))
        .collect();
    let mut writer = StreamWriter::create(&paths[0], WriterOptions::default()).unwrap();
    let schema = writer
        .add_schema("std_msgs/msg/String", "ros2msg", b"string data")
        .unwrap();
    let chatter = writer
        .add_channel(Some(schema), "/chatter", "cdr", &BTreeMap::new())
        .unwrap();
    let mut summaries = Vec::new();
    for (file, _) in paths.iter().enumerate() {
        for i in 0..10u32 {
            let sequence = file as u32 * 10 + i;
            let header = MessageHeader {
                channel: chatter,
                sequence,
                log_time: u64::from(sequence) + 1,
                publish_time: u64::from(sequence) + 1,
            };
            let payload = vec![sequence as u8; (sequence as usize % 3) * 70_000 + 5];
            writer.write_message(&header, &payload).unwrap();
        }
        if file + 1 < paths.len() {
            summaries.push(writer.roll(&paths[file + 1]).unwrap());
        }
    }
    summaries.push(writer.close().unwrap());

    let mut sequences = Vec::new();
    for (path, summary) in paths.iter().zip(&summaries) {
        assert_eq!(&summary.path, path);
        assert_eq!(summary.message_count, 10);
        let bytes = std::fs::read(path).unwrap();
        validate_with_mcap_crate(&bytes);
        let file_summary = mcap::Summary::read(&bytes).unwrap().unwrap();
        assert_eq!(file_summary.stats.as_ref().unwrap().message_count, 10);
        assert_eq!(
            file_summary.schemas.len(),
            1,
            "each file carries its schema"
        );
        for message in read_with_mcap_crate(path) {
            assert_eq!(message.topic, "/chatter");
            assert_eq!(
                message.payload.len(),
                (message.sequence as usize % 3) * 70_000 + 5
            );
            sequences.push(message.sequence);
        }
    }
    assert_eq!(sequences, (0..30).collect::<Vec<_>>());
}

#[test]
fn unknown_ids_are_refused_with_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let mut writer =
        StreamWriter::create(dir.path().join("x.mcap"), WriterOptions::default()).unwrap();
    let header = MessageHeader {
        channel: ChannelId(3),
        sequence: 0,
        log_time: 0,
        publish_time: 0,
    };
    let error = writer.write_message(&header, b"x").unwrap_err();
    assert!(matches!(error, WriteError::UnknownChannel(3)), "{error}");
    let error = writer
        .add_channel(
            Some(recd_storage::SchemaId(9)),
            "/t",
            "cdr",
            &BTreeMap::new(),
        )
        .unwrap_err();
    assert!(matches!(error, WriteError::UnknownSchema(9)), "{error}");
    // The writer is still usable and the file still closes cleanly.
    writer.close().unwrap();
}

#[test]
fn creating_in_a_missing_directory_names_the_path() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("missing/x.mcap");
    let error = StreamWriter::create(&path, WriterOptions::default()).unwrap_err();
    assert!(error.to_string().contains("missing/x.mcap"), "{error}");
}

#[test]
fn attachments_are_indexed_and_read_back_with_their_crc_before_and_after_reindex() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("rec.mcap");
    let calibration = Attachment {
        name: "calibration.yaml".to_string(),
        media_type: "application/yaml".to_string(),
        create_time: 7,
        data: b"camera_matrix: [1, 0, 0]\n".to_vec(),
    };
    let mut writer = StreamWriter::create(&path, WriterOptions::default()).unwrap();
    writer.add_attachment(&calibration, 42).unwrap();
    let channel = writer
        .add_channel(None, "/a", "raw", &BTreeMap::new())
        .unwrap();
    let header = MessageHeader {
        channel,
        sequence: 0,
        log_time: 50,
        publish_time: 50,
    };
    writer.write_message(&header, b"payload").unwrap();
    writer.close().unwrap();

    let reindexed = dir.path().join("reindexed.mcap");
    reindex(&path, &reindexed, &ReindexOptions::default()).unwrap();
    for file in [&path, &reindexed] {
        let bytes = std::fs::read(file).unwrap();
        let summary = mcap::Summary::read(&bytes).unwrap().expect("a summary");
        assert_eq!(summary.stats.as_ref().unwrap().attachment_count, 1);
        assert_eq!(summary.attachment_indexes.len(), 1, "{file:?}");
        let read = mcap::read::attachment(&bytes, &summary.attachment_indexes[0]).unwrap();
        assert_eq!(read.name, calibration.name);
        assert_eq!(read.media_type, calibration.media_type);
        assert_eq!((read.log_time, read.create_time), (42, 7));
        assert_eq!(read.data.as_ref(), calibration.data.as_slice());
        // A linear read checks the record's CRC too.
        let records = mcap::read::LinearReader::new(&bytes).unwrap();
        assert!(records.map(Result::unwrap).count() > 3);
    }
}

#[test]
fn reindexing_in_memory_writes_the_bytes_reindexing_a_file_writes() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("rec.mcap");
    let expected = write_sample(&input, WriterOptions::default(), 6);
    let options = ReindexOptions {
        compression: Compression::Zstd,
        chunk_size: 64 << 10,
        threads: 1,
        ..ReindexOptions::default()
    };
    let output = dir.path().join("indexed.mcap");
    let report = reindex(&input, &output, &options).unwrap();
    let (in_memory, messages) =
        recd_storage::reindex_in_memory(&std::fs::read(&input).unwrap(), &options).unwrap();
    assert_eq!(messages, report.messages);
    assert_eq!(messages, expected.len() as u64);
    assert!(
        in_memory == std::fs::read(&output).unwrap(),
        "the same bytes as the file's reindex"
    );
    let not_mcap = recd_storage::reindex_in_memory(b"not an mcap file", &options).unwrap_err();
    assert!(not_mcap.to_string().contains("<memory>"), "{not_mcap}");
}
