//! The layout of a file: what the writer keeps of each schema and channel and the counts
//! of the file being written, and the MCAP records built from them (the Header, Schema
//! and Channel records, and the summary section that ends a file).

use std::collections::BTreeMap;
use std::io;

use mcap::records::{self, op};

use crate::wire;

/// A schema as added; every file of the writer declares it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct SchemaEntry {
    pub(super) name: String,
    pub(super) encoding: String,
    pub(super) data: Vec<u8>,
}

/// A channel as added; every file of the writer declares it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct ChannelEntry {
    pub(super) schema_id: u16,
    pub(super) topic: String,
    pub(super) message_encoding: String,
    pub(super) metadata: BTreeMap<String, String>,
}

/// Counts of the file being written; reset by a roll.
#[derive(Debug, Default, Clone)]
pub(super) struct FileStats {
    pub(super) message_count: u64,
    pub(super) per_channel: Vec<u64>,
    /// Payload bytes per channel.
    pub(super) per_channel_bytes: Vec<u64>,
    pub(super) time_range: Option<(u64, u64)>,
    pub(super) metadata_indexes: Vec<records::MetadataIndex>,
    pub(super) attachment_indexes: Vec<records::AttachmentIndex>,
}

impl FileStats {
    pub(super) fn for_channels(channels: usize) -> Self {
        Self {
            per_channel: vec![0; channels],
            per_channel_bytes: vec![0; channels],
            ..Self::default()
        }
    }

    pub(super) fn count(&mut self, channel: usize, log_time: u64, payload_len: usize) {
        self.message_count += 1;
        self.per_channel[channel] += 1;
        self.per_channel_bytes[channel] += payload_len as u64;
        self.time_range = Some(match self.time_range {
            None => (log_time, log_time),
            Some((start, end)) => (start.min(log_time), end.max(log_time)),
        });
    }
}

/// Messages per channel, for the channels that have any.
pub(super) fn channel_message_counts(stats: &FileStats) -> BTreeMap<u16, u64> {
    (stats.per_channel.iter().enumerate())
        .filter(|(_, &count)| count > 0)
        .map(|(id, &count)| (id as u16, count))
        .collect()
}

/// Appends the MCAP magic and the Header record that open every file.
pub(super) fn append_file_start(out: &mut Vec<u8>, profile: &str, library: &str) -> io::Result<()> {
    out.extend_from_slice(mcap::MAGIC);
    let header = records::Header {
        profile: profile.to_string(),
        library: library.to_string(),
    };
    wire::append_record(out, op::HEADER, &header)
}

/// Appends the Schema record of schema `id` (ids start at 1).
pub(super) fn append_schema(out: &mut Vec<u8>, id: u16, schema: &SchemaEntry) -> io::Result<()> {
    let header = records::SchemaHeader {
        id,
        name: schema.name.clone(),
        encoding: schema.encoding.clone(),
    };
    wire::append_schema(out, &header, &schema.data)
}

/// Appends the Channel record of channel `id`.
pub(super) fn append_channel(out: &mut Vec<u8>, id: u16, channel: &ChannelEntry) -> io::Result<()> {
    let record = records::Channel {
        id,
        schema_id: channel.schema_id,
        topic: channel.topic.clone(),
        message_encoding: channel.message_encoding.clone(),
        metadata: channel.metadata.clone(),
    };
    wire::append_record(out, op::CHANNEL, &record)
}

/// Appends the summary section (Schemas, Channels, Statistics, Attachment and Metadata
/// indexes), the summary offsets and the Footer (with the summary CRC) to `out`, whose
/// first byte lands at file offset `summary_start - out.len()`.
pub(super) fn append_summary(
    out: &mut Vec<u8>,
    summary_start: u64,
    schemas: &[SchemaEntry],
    channels: &[ChannelEntry],
    stats: &FileStats,
) -> io::Result<()> {
    let base = summary_start as usize - out.len();
    let summary_from = out.len();
    let mut offsets = Vec::new();
    let mut group = |out: &mut Vec<u8>, opcode: u8, start: usize| {
        if out.len() > start {
            offsets.push(records::SummaryOffset {
                group_opcode: opcode,
                group_start: (base + start) as u64,
                group_length: (out.len() - start) as u64,
            });
        }
    };

    let start = out.len();
    for (index, schema) in schemas.iter().enumerate() {
        append_schema(out, index as u16 + 1, schema)?;
    }
    group(out, op::SCHEMA, start);

    let start = out.len();
    for (id, channel) in channels.iter().enumerate() {
        append_channel(out, id as u16, channel)?;
    }
    group(out, op::CHANNEL, start);

    let start = out.len();
    let (message_start_time, message_end_time) = stats.time_range.unwrap_or((0, 0));
    let statistics = records::Statistics {
        message_count: stats.message_count,
        schema_count: schemas.len() as u16,
        channel_count: channels.len() as u32,
        attachment_count: stats.attachment_indexes.len() as u32,
        metadata_count: stats.metadata_indexes.len() as u32,
        chunk_count: 0,
        message_start_time,
        message_end_time,
        channel_message_counts: channel_message_counts(stats),
    };
    wire::append_record(out, op::STATISTICS, &statistics)?;
    group(out, op::STATISTICS, start);

    let start = out.len();
    for index in &stats.attachment_indexes {
        wire::append_record(out, op::ATTACHMENT_INDEX, index)?;
    }
    group(out, op::ATTACHMENT_INDEX, start);

    let start = out.len();
    for index in &stats.metadata_indexes {
        wire::append_record(out, op::METADATA_INDEX, index)?;
    }
    group(out, op::METADATA_INDEX, start);

    let summary_offset_start = (base + out.len()) as u64;
    for offset in &offsets {
        wire::append_record(out, op::SUMMARY_OFFSET, offset)?;
    }

    // The footer's CRC covers the summary and the footer's own fields before it.
    out.push(op::FOOTER);
    out.extend_from_slice(&20u64.to_le_bytes());
    out.extend_from_slice(&summary_start.to_le_bytes());
    out.extend_from_slice(&summary_offset_start.to_le_bytes());
    let summary_crc = crc32fast::hash(&out[summary_from..]);
    out.extend_from_slice(&summary_crc.to_le_bytes());
    out.extend_from_slice(mcap::MAGIC);
    Ok(())
}
