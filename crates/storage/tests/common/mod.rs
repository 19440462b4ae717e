//! Helpers shared by the storage tests: a recording with known contents, and independent
//! ways of reading files back (the `mcap` crate, and a plain record framer).

#![allow(dead_code)]

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::atomic::AtomicBool;

use mcap::sans_io::linear_reader::{LinearReadEvent, LinearReader, LinearReaderOptions};
use recd_storage::{
    MessageHeader, ReindexError, ReindexOptions, ReindexReport, StreamWriter, WriterOptions,
};

/// One message as the tests know it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Expected {
    pub topic: String,
    pub sequence: u32,
    pub log_time: u64,
    pub publish_time: u64,
    pub payload: Vec<u8>,
}

/// Payload sizes that cover the batched path, the staged path of direct I/O and sealing
/// (from a block up to the zero-copy threshold), the zero-copy path and the thresholds.
pub const SIZES: [usize; 8] = [0, 1, 100, 4_000, 4_096, 65_535, 65_536, 300_000];

/// Writes a recording on three channels (two with schemas) with payloads of every size in
/// [`SIZES`], some in two parts, plus a Metadata record; returns what it holds.
pub fn write_sample(path: &Path, options: WriterOptions, rounds: usize) -> Vec<Expected> {
    let mut writer = StreamWriter::create(path, options).unwrap();
    let image = writer
        .add_schema(
            "sensor_msgs/msg/Image",
            "ros2msg",
            b"uint32 height\nuint32 width",
        )
        .unwrap();
    let topics = ["/camera", "/lidar", "/imu"];
    let metadata = BTreeMap::from([(
        "offered_qos_profiles".to_string(),
        "- history: 1".to_string(),
    )]);
    let channels = [
        writer
            .add_channel(Some(image), topics[0], "cdr", &metadata)
            .unwrap(),
        writer
            .add_channel(Some(image), topics[1], "cdr", &BTreeMap::new())
            .unwrap(),
        writer
            .add_channel(None, topics[2], "raw", &BTreeMap::new())
            .unwrap(),
    ];
    let mut rng = fastrand::Rng::with_seed(7);
    let mut expected = Vec::new();
    let mut time = 1_700_000_000_000_000_000u64;
    for round in 0..rounds {
        for (i, &size) in SIZES.iter().enumerate() {
            let which = (round + i) % 3;
            let payload: Vec<u8> = (0..size).map(|_| rng.u8(..)).collect();
            time += 1_000 + rng.u64(..1_000);
            let header = MessageHeader {
                channel: channels[which],
                sequence: (round * SIZES.len() + i) as u32,
                log_time: time,
                publish_time: time - 500,
            };
            if i % 2 == 0 {
                writer.write_message(&header, &payload).unwrap();
            } else {
                let (head, tail) = payload.split_at(size / 3);
                writer.write_message_parts(&header, &[head, tail]).unwrap();
            }
            expected.push(Expected {
                topic: topics[which].to_string(),
                sequence: header.sequence,
                log_time: header.log_time,
                publish_time: header.publish_time,
                payload,
            });
        }
    }
    let counts = BTreeMap::from([("/camera.dropped".to_string(), "0".to_string())]);
    writer.add_metadata("recorder", &counts).unwrap();
    writer.close().unwrap();
    expected
}

/// Every message of a file, read by the `mcap` crate (chunked or not).
pub fn read_with_mcap_crate(path: &Path) -> Vec<Expected> {
    let bytes = std::fs::read(path).unwrap();
    mcap::MessageStream::new(&bytes)
        .unwrap()
        .map(|message| {
            let message = message.unwrap();
            Expected {
                topic: message.channel.topic.clone(),
                sequence: message.sequence,
                log_time: message.log_time,
                publish_time: message.publish_time,
                payload: message.data.into_owned(),
            }
        })
        .collect()
}

/// One record of a file as a plain framer sees it: opcode, start offset, end offset.
#[derive(Debug, Clone, Copy)]
pub struct Framed {
    pub opcode: u8,
    pub start: u64,
    pub end: u64,
}

/// The records of a well-formed file, framed by opcode and length alone.
pub fn frame_records(bytes: &[u8]) -> Vec<Framed> {
    let mut records = Vec::new();
    let mut at = 8usize;
    while at + 9 <= bytes.len() - 8 {
        let opcode = bytes[at];
        let len = u64::from_le_bytes(bytes[at + 1..at + 9].try_into().unwrap()) as usize;
        let end = at + 9 + len;
        records.push(Framed {
            opcode,
            start: at as u64,
            end: end as u64,
        });
        at = end;
        if opcode == mcap::records::op::FOOTER {
            break;
        }
    }
    records
}

/// Runs a reindex without progress reporting or cancellation.
pub fn reindex(
    input: &Path,
    output: &Path,
    options: &ReindexOptions,
) -> Result<ReindexReport, ReindexError> {
    recd_storage::reindex(
        input,
        output,
        options,
        &mut |_, _| {},
        &AtomicBool::new(false),
    )
}

/// Reads a whole file with the `mcap` crate's validating linear reader (magic, record
/// framing, data and summary CRCs) and returns how many records it saw.
pub fn validate_with_mcap_crate(bytes: &[u8]) -> usize {
    let options = LinearReaderOptions::default()
        .with_validate_data_section_crc(true)
        .with_validate_summary_section_crc(true)
        .with_validate_chunk_crcs(true);
    let mut reader = LinearReader::new_with_options(options);
    let mut remaining = bytes;
    let mut records = 0;
    while let Some(event) = reader.next_event() {
        match event.expect("the mcap crate rejects the file") {
            LinearReadEvent::ReadRequest(need) => {
                let n = need.min(remaining.len());
                reader.insert(n).copy_from_slice(&remaining[..n]);
                reader.notify_read(n);
                remaining = &remaining[n..];
            }
            LinearReadEvent::Record { opcode, data } => {
                mcap::parse_record(opcode, data).expect("a record the mcap crate cannot parse");
                records += 1;
            }
        }
    }
    records
}
