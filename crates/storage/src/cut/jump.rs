//! Where the scan of a closed streamed file starts: at the last of the writer's
//! checkpoints before the window ([`crate::checkpoints`]), knowing the schemas and
//! channels from the summary and each latched channel's last message before that point
//! from the checkpoint, rather than walking every record header from the file's start.
//! Anything that does not check out (no checkpoints, a record not where it is said to
//! be) leaves the scan at the start.

use std::borrow::Cow;

use mcap::records::{self, op, MessageHeader, Record};

use super::pread::Pread;
use crate::checkpoints::{Checkpoints, Span, CHECKPOINTS};
use crate::recover::MESSAGE_HEADER_BYTES;

/// An opcode and a length.
const PREFIX_BYTES: u64 = 9;

/// A start for the scan past the file's start.
pub(super) struct Jump<'s> {
    /// The record boundary the scan starts at.
    pub offset: u64,
    summary: &'s mcap::Summary,
    profile: String,
    /// Each latched channel's last message before it: its header, and where its data
    /// lies and how long it is.
    pub latched: Vec<(MessageHeader, Span)>,
}

/// The start for a scan of the window from `start_ns` of the file `input` (of `size`
/// bytes, read up to `size`) whose summary is `summary`, if its checkpoints give one.
pub(super) fn jump_for<'s>(
    input: &Pread<'_>,
    size: u64,
    summary: &'s mcap::Summary,
    profile: &str,
    start_ns: u64,
) -> Option<Jump<'s>> {
    let index = (summary.metadata_indexes.iter()).find(|index| index.name == CHECKPOINTS)?;
    let record = read_record(input, size, index.offset, index.length)?;
    let Ok(Record::Metadata(metadata)) = crate::parse::parse_record(record[0], &record[9..])
    else {
        return None;
    };
    if metadata.name != CHECKPOINTS {
        return None;
    }
    let checkpoints = Checkpoints::from_metadata(&metadata.metadata)?;
    let checkpoint = checkpoints.before(start_ns, size)?;
    let follows = read_record_prefix(input, size, checkpoint.offset)?;
    if !(op::HEADER..=op::DATA_END).contains(&follows.0) && follows.0 < 0x80 {
        return None;
    }
    let latched = (checkpoint.latched.iter())
        .map(|&(channel, span)| latched_message(input, checkpoint.offset, channel, span))
        .collect::<Option<_>>()?;
    Some(Jump {
        offset: checkpoint.offset,
        summary,
        profile: profile.to_string(),
        latched,
    })
}

impl<'s> Jump<'s> {
    /// The Header, then the Schema and Channel records that hold before the start (the
    /// summary's), by id.
    pub fn known(&self) -> Vec<Record<'s>> {
        known_records(self.summary, &self.profile)
    }
}

fn known_records<'s>(summary: &'s mcap::Summary, profile: &str) -> Vec<Record<'s>> {
    let mut known = vec![Record::Header(records::Header {
        profile: profile.to_string(),
        library: String::new(),
    })];
    let mut schemas: Vec<_> = summary.schemas.values().collect();
    schemas.sort_by_key(|schema| schema.id);
    known.extend(schemas.into_iter().map(|schema| Record::Schema {
        header: records::SchemaHeader {
            id: schema.id,
            name: schema.name.clone(),
            encoding: schema.encoding.clone(),
        },
        data: Cow::Borrowed(&schema.data[..]),
    }));
    let mut channels: Vec<_> = summary.channels.values().collect();
    channels.sort_by_key(|channel| channel.id);
    known.extend(channels.into_iter().map(|channel| {
        Record::Channel(records::Channel {
            id: channel.id,
            schema_id: channel.schema.as_ref().map_or(0, |schema| schema.id),
            topic: channel.topic.clone(),
            message_encoding: channel.message_encoding.clone(),
            metadata: channel.metadata.clone(),
        })
    }));
    known
}

/// The header of the Message record of `channel` at `span`, which must lie before
/// `before`, and where its data lies.
fn latched_message(
    input: &Pread<'_>,
    before: u64,
    channel: u16,
    span: Span,
) -> Option<(MessageHeader, Span)> {
    let head_len = PREFIX_BYTES + MESSAGE_HEADER_BYTES;
    if span.len < head_len || span.offset.checked_add(span.len)? > before {
        return None;
    }
    let head = input.read_range(span.offset, head_len).ok()?;
    let len = u64::from_le_bytes(head[1..9].try_into().ok()?);
    if head[0] != op::MESSAGE || len != span.len - PREFIX_BYTES {
        return None;
    }
    let body = &head[9..];
    let header = MessageHeader {
        channel_id: u16::from_le_bytes([body[0], body[1]]),
        sequence: u32::from_le_bytes(body[2..6].try_into().ok()?),
        log_time: u64::from_le_bytes(body[6..14].try_into().ok()?),
        publish_time: u64::from_le_bytes(body[14..22].try_into().ok()?),
    };
    (header.channel_id == channel).then_some((
        header,
        Span {
            offset: span.offset + head_len,
            len: span.len - head_len,
        },
    ))
}

/// The opcode and length of the record at `offset`, if one fits in the file there.
fn read_record_prefix(input: &Pread<'_>, size: u64, offset: u64) -> Option<(u8, u64)> {
    if offset.checked_add(PREFIX_BYTES)? > size {
        return None;
    }
    let prefix = input.read_range(offset, PREFIX_BYTES).ok()?;
    let len = u64::from_le_bytes(prefix[1..9].try_into().ok()?);
    (len <= size - offset - PREFIX_BYTES).then_some((prefix[0], len))
}

/// The whole record at `offset` of `length` bytes (prefix included), if it fits.
fn read_record(input: &Pread<'_>, size: u64, offset: u64, length: u64) -> Option<Vec<u8>> {
    if length < PREFIX_BYTES || offset.checked_add(length)? > size {
        return None;
    }
    input.read_range(offset, length).ok()
}
