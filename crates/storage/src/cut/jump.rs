//! Where the scan of a file without chunk indexes starts and stops, as the writer's
//! checkpoints say ([`crate::checkpoints`]): at the last checkpoint before the window,
//! knowing the schemas and channels (from a closed file's summary, or read where a
//! growing file's writer says) and each latched channel's last message before it, and at
//! the first checkpoint with nothing of the window after it, rather than walking every
//! record header from the file's start to 10 s past the window. Anything that does not
//! check out (no checkpoints, a record not where it is said to be) leaves the scan at the
//! start.

use std::borrow::Cow;

use mcap::records::{self, op, MessageHeader, Record};

use super::pread::Pread;
use crate::checkpoints::{Checkpoints, Growing, Span, CHECKPOINTS};
use crate::recover::{message_header, opcode_is_valid, MESSAGE_HEADER_BYTES};
use crate::window::LogWindow;

/// An opcode and a length.
const PREFIX_BYTES: u64 = 9;

/// Where a scan of an input starts and stops, as its checkpoints say.
#[derive(Default)]
pub(super) struct Bounds<'s> {
    /// A start past the file's start.
    pub start: Option<Jump<'s>>,
    /// The record boundary after which no message of the window lies (a closed file's).
    pub stop: Option<u64>,
}

/// A start for the scan past the file's start.
pub(super) struct Jump<'s> {
    /// The record boundary the scan starts at.
    pub offset: u64,
    known: Known<'s>,
    profile: String,
    /// Each latched channel's last message before it: its header, and where its data
    /// lies and how long it is.
    pub latched: Vec<(MessageHeader, Span)>,
}

/// Where the Schema, Channel (and Metadata) records before a jump come from.
enum Known<'s> {
    /// A closed file's summary.
    Summary(&'s mcap::Summary),
    /// A growing file's records, read (opcode and body each).
    Read(Vec<(u8, Vec<u8>)>),
}

/// Where the scan of the window `window` of the closed file `input` (of `size` bytes)
/// whose summary is `summary` starts and stops, as its checkpoints record says.
pub(super) fn bounds_closed<'s>(
    input: &Pread<'_>,
    size: u64,
    summary: &'s mcap::Summary,
    profile: &str,
    window: LogWindow,
) -> Bounds<'s> {
    let Some((checkpoints, at)) = closed_checkpoints(input, size, summary) else {
        return Bounds::default();
    };
    // Only a list whose last checkpoint lies where the record starts covers every message.
    let complete = checkpoints.0.last().is_some_and(|last| last.offset == at);
    Bounds {
        start: jump(input, size, &checkpoints, window.start_ns, profile, |_| {
            Some(Known::Summary(summary))
        }),
        stop: complete.then(|| checkpoints.after(window.end_ns)).flatten(),
    }
}

/// Where the scan of the window `window` of a file still being written (read up to
/// `size` bytes) starts and stops, as its writer's checkpoints say; a message past the
/// window by `reorder_margin_ns` stops the scan anyway.
pub(super) fn bounds_growing(
    input: &Pread<'_>,
    size: u64,
    growing: &Growing,
    profile: &str,
    window: LogWindow,
    reorder_margin_ns: u64,
) -> Bounds<'static> {
    let checkpoints = &growing.checkpoints;
    let start = jump(
        input,
        size,
        checkpoints,
        window.start_ns,
        profile,
        |before| read_definitions(input, &growing.definitions, before).map(Known::Read),
    );
    // What is written after the last checkpoint is not known yet; but once a message
    // before it lies past the window by the reorder margin, the scan stops there anyway.
    let margin_passed = (checkpoints.0.last())
        .is_some_and(|last| last.log_time_max > window.end_ns.saturating_add(reorder_margin_ns));
    Bounds {
        start,
        stop: margin_passed
            .then(|| checkpoints.after(window.end_ns))
            .flatten(),
    }
}

/// The checkpoints record of a closed file, and where it lies.
fn closed_checkpoints(
    input: &Pread<'_>,
    size: u64,
    summary: &mcap::Summary,
) -> Option<(Checkpoints, u64)> {
    let index = (summary.metadata_indexes.iter()).find(|index| index.name == CHECKPOINTS)?;
    let record = read_record(input, size, index.offset, index.length)?;
    let Ok(Record::Metadata(metadata)) = crate::parse::parse_record(record[0], &record[9..]) else {
        return None;
    };
    if metadata.name != CHECKPOINTS {
        return None;
    }
    Some((
        Checkpoints::from_metadata(&metadata.metadata)?,
        index.offset,
    ))
}

/// A start at the last checkpoint of `checkpoints` before `start_ns`, checked against
/// the file: its offset, the records before it (from `known`) and its latched messages.
fn jump<'s>(
    input: &Pread<'_>,
    size: u64,
    checkpoints: &Checkpoints,
    start_ns: u64,
    profile: &str,
    known: impl FnOnce(u64) -> Option<Known<'s>>,
) -> Option<Jump<'s>> {
    let checkpoint = checkpoints.before(start_ns, size)?;
    let (opcode, _) = read_record_prefix(input, size, checkpoint.offset)?;
    if !opcode_is_valid(opcode) {
        return None;
    }
    let latched = (checkpoint.latched.iter())
        .map(|&(channel, span)| latched_message(input, checkpoint.offset, channel, span))
        .collect::<Option<_>>()?;
    Some(Jump {
        offset: checkpoint.offset,
        known: known(checkpoint.offset)?,
        profile: profile.to_string(),
        latched,
    })
}

impl Jump<'_> {
    /// The Header, then the Schema and Channel records (and a growing file's Metadata
    /// records) that lie before the start, in file order.
    pub fn known(&self) -> Vec<Record<'_>> {
        let header = Record::Header(records::Header {
            profile: self.profile.clone(),
            library: String::new(),
        });
        let mut known = vec![header];
        match &self.known {
            Known::Summary(summary) => known.extend(summary_records(summary)),
            Known::Read(records) => known.extend(
                records
                    .iter()
                    .filter_map(|(opcode, body)| crate::parse::parse_record(*opcode, body).ok()),
            ),
        }
        known
    }
}

/// The summary's schemas and channels, by id.
fn summary_records(summary: &mcap::Summary) -> Vec<Record<'_>> {
    let mut schemas: Vec<_> = summary.schemas.values().collect();
    schemas.sort_by_key(|schema| schema.id);
    let mut known: Vec<Record<'_>> = (schemas.into_iter())
        .map(|schema| Record::Schema {
            header: records::SchemaHeader {
                id: schema.id,
                name: schema.name.clone(),
                encoding: schema.encoding.clone(),
            },
            data: Cow::Borrowed(&schema.data[..]),
        })
        .collect();
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

/// The Schema, Channel and Metadata records at `spans` that lie before `before`, read in
/// as few reads as they allow (they mostly follow one another), each checked to be one.
fn read_definitions(input: &Pread<'_>, spans: &[Span], before: u64) -> Option<Vec<(u8, Vec<u8>)>> {
    let spans: Vec<Span> = (spans.iter().copied())
        .filter(|span| span.offset + span.len <= before)
        .collect();
    let mut records = Vec::with_capacity(spans.len());
    let mut run = 0;
    while run < spans.len() {
        // A run of records each starting where the one before ends.
        let mut end = run + 1;
        while end < spans.len() && spans[end].offset == spans[end - 1].offset + spans[end - 1].len {
            end += 1;
        }
        let from = spans[run].offset;
        let to = spans[end - 1].offset + spans[end - 1].len;
        let bytes = input.read_range(from, to - from).ok()?;
        for span in &spans[run..end] {
            let record =
                &bytes[(span.offset - from) as usize..(span.offset - from + span.len) as usize];
            let opcode = record[0];
            let len = u64::from_le_bytes(record[1..9].try_into().ok()?);
            let definition = matches!(opcode, op::SCHEMA | op::CHANNEL | op::METADATA);
            if !definition || len != span.len - PREFIX_BYTES {
                return None;
            }
            records.push((opcode, record[9..].to_vec()));
        }
        run = end;
    }
    Some(records)
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
    let header = message_header(head[9..].try_into().ok()?);
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
