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
#[derive(Debug)]
pub(super) struct ChunkBuilder {
    chunk: RawChunk,
    messages: u64,
    /// What each chunk's records are allocated with at its start.
    capacity: usize,
    /// Whether `capacity` is the chunk size: then a record that does not fit is the
    /// last of its chunk, and the records grow to exactly what it needs.
    closes_when_full: bool,
}

/// The most a chunk's records are allocated with before its first record: a larger
/// `chunk_size` grows past it as records come.
const MAX_PREALLOCATED: usize = 64 << 20;

impl ChunkBuilder {
    /// A builder for chunks closed at `chunk_size` bytes. Each chunk's records are
    /// allocated at that size once, and grown at most once more, to exactly what the
    /// record that closes it needs: grown by doubling, a 4 MiB chunk went through a
    /// dozen allocations and ended in an 8 MiB one, and the freed steps stayed in the
    /// allocator's arenas of the threads that finish files.
    pub fn new(chunk_size: u64) -> Self {
        let capacity =
            usize::try_from(chunk_size).map_or(MAX_PREALLOCATED, |size| size.min(MAX_PREALLOCATED));
        Self {
            chunk: RawChunk::with_capacity(capacity),
            messages: 0,
            capacity,
            closes_when_full: capacity as u64 == chunk_size,
        }
    }

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
        let needed = wire::MESSAGE_PREFIX_LEN + data.len();
        if self.closes_when_full {
            records.reserve_exact(needed);
        } else {
            records.reserve(needed);
        }
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
        std::mem::replace(&mut self.chunk, RawChunk::with_capacity(self.capacity))
    }
}

impl RawChunk {
    fn with_capacity(capacity: usize) -> Self {
        Self {
            records: Vec::with_capacity(capacity),
            ..Self::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn message(sequence: u32) -> MessageHeader {
        MessageHeader {
            channel_id: 1,
            sequence,
            log_time: u64::from(sequence),
            publish_time: u64::from(sequence),
        }
    }

    #[test]
    fn records_start_at_the_chunk_size_and_grow_only_to_the_record_that_closes_the_chunk() {
        let record = wire::MESSAGE_PREFIX_LEN + 300;
        let mut builder = ChunkBuilder::new(1000);
        assert_eq!(builder.chunk.records.capacity(), 1000);
        // Three records fit in 1000 bytes; the fourth is the one after which the writer
        // closes the chunk.
        for sequence in 0..4 {
            builder.push_message(&message(sequence), &[7; 300]);
        }
        let chunk = builder.take();
        assert_eq!(chunk.records.len(), 4 * record);
        assert_eq!(chunk.records.capacity(), 4 * record, "grown by doubling");
        assert_eq!(chunk.indexes[&1].len(), 4);
        assert_eq!((chunk.start_time, chunk.end_time), (0, 3));
        assert_eq!(builder.chunk.records.capacity(), 1000);
        assert!(builder.is_empty());
    }

    #[test]
    fn a_chunk_size_beyond_the_preallocation_grows_as_records_come() {
        let mut builder = ChunkBuilder::new(1 << 40);
        assert_eq!(builder.chunk.records.capacity(), MAX_PREALLOCATED);
        builder.push_message(&message(0), &vec![0; MAX_PREALLOCATED]);
        builder.push_message(&message(1), &[0; 10]);
        let capacity = builder.chunk.records.capacity();
        assert!(
            capacity >= 2 * MAX_PREALLOCATED,
            "grown per record: {capacity}"
        );
    }
}
