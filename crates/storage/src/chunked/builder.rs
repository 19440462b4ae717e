//! Collects the records of one chunk, uncompressed, with the index of its messages.

use std::collections::BTreeMap;

use mcap::records::{op, Channel, MessageHeader, MessageIndexEntry, SchemaHeader};

use crate::wire;

/// A chunk's records as they will read once decompressed, and where its messages lie.
#[derive(Debug, Default)]
pub(super) struct RawChunk {
    /// Schema, Channel and Message records, one after the other.
    pub records: Vec<u8>,
    /// Per channel, each message's log time and offset within `records`.
    pub indexes: BTreeMap<u16, Vec<MessageIndexEntry>>,
    /// Earliest and latest log time of its messages (both 0 when it has none).
    pub start_time: u64,
    /// See `start_time`.
    pub end_time: u64,
}

/// Appends records to the chunk under construction.
#[derive(Debug, Default)]
pub(super) struct ChunkBuilder {
    chunk: RawChunk,
    messages: u64,
}

impl ChunkBuilder {
    /// Bytes gathered so far.
    pub fn len(&self) -> usize {
        self.chunk.records.len()
    }

    /// Whether nothing was gathered since the last [`Self::take`].
    pub fn is_empty(&self) -> bool {
        self.chunk.records.is_empty()
    }

    /// Adds a Schema record.
    pub fn push_schema(&mut self, header: &SchemaHeader, data: &[u8]) -> std::io::Result<()> {
        wire::append_schema(&mut self.chunk.records, header, data)
    }

    /// Adds a Channel record.
    pub fn push_channel(&mut self, channel: &Channel) -> std::io::Result<()> {
        wire::append_record(&mut self.chunk.records, op::CHANNEL, channel)
    }

    /// Adds a Message record and its index entry.
    pub fn push_message(&mut self, header: &MessageHeader, data: &[u8]) {
        let records = &mut self.chunk.records;
        let offset = records.len() as u64;
        records.extend_from_slice(&wire::message_prefix(
            header.channel_id,
            header.sequence,
            header.log_time,
            header.publish_time,
            data.len() as u64,
        ));
        records.extend_from_slice(data);
        self.chunk
            .indexes
            .entry(header.channel_id)
            .or_default()
            .push(MessageIndexEntry {
                log_time: header.log_time,
                offset,
            });
        if self.messages == 0 {
            self.chunk.start_time = header.log_time;
            self.chunk.end_time = header.log_time;
        } else {
            self.chunk.start_time = self.chunk.start_time.min(header.log_time);
            self.chunk.end_time = self.chunk.end_time.max(header.log_time);
        }
        self.messages += 1;
    }

    /// Hands over the chunk gathered so far and starts an empty one.
    pub fn take(&mut self) -> RawChunk {
        self.messages = 0;
        std::mem::take(&mut self.chunk)
    }
}
