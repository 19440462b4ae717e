//! A chunked, indexed MCAP writer that compresses chunks on several threads and writes
//! them in order: what `rec reindex` writes with.
//!
//! The `mcap` crate's writer compresses each chunk on the thread that writes it, so a
//! reindex ran at the speed of one core. Here the reading thread gathers a chunk's
//! records ([`builder`]), threads compress them ([`pool`], [`encode`]) while it reads on,
//! and the reading thread writes each finished chunk, its Message Index records and, at
//! the end, the summary ([`summary`]) in the order the records came.

mod builder;
mod encode;
mod pool;
mod summary;

use std::collections::{BTreeMap, VecDeque};
use std::io::{self, Write};

use mcap::records::{
    op, AttachmentHeader, AttachmentIndex, Channel, ChunkIndex, Header, MessageHeader, Metadata,
    MetadataIndex, SchemaHeader, Statistics,
};
use mcap::{McapError, McapResult};

use self::builder::ChunkBuilder;
use self::pool::{EncoderPool, Encoding};
use crate::compression::Compression;
use crate::wire;

/// How [`ChunkedWriter`] cuts and compresses chunks.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ChunkOptions {
    /// Chunk compression.
    pub compression: Compression,
    /// The compressor's level; 0 is its default.
    pub level: u32,
    /// Uncompressed size at which a chunk is closed.
    pub chunk_size: u64,
    /// Threads that compress chunks.
    pub threads: usize,
}

impl ChunkOptions {
    /// The compression threads asked for as `threads`: 0 means one per core.
    pub fn threads_for(threads: u32) -> usize {
        match threads {
            0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
            n => n as usize,
        }
    }
}

/// Something written to the data section, in the order it was given.
enum Pending {
    Chunk(Encoding),
    Metadata {
        record: Vec<u8>,
        name: String,
    },
    Attachment {
        record: Vec<u8>,
        index: AttachmentIndex,
    },
}

/// Writes a chunked MCAP file with a full summary to `W`.
pub(crate) struct ChunkedWriter<W: Write> {
    out: Counted<W>,
    options: ChunkOptions,
    builder: ChunkBuilder,
    pool: EncoderPool,
    pending: VecDeque<Pending>,
    schemas: BTreeMap<u16, (SchemaHeader, Vec<u8>)>,
    channels: BTreeMap<u16, Channel>,
    statistics: Statistics,
    chunk_indexes: Vec<ChunkIndex>,
    attachment_indexes: Vec<AttachmentIndex>,
    metadata_indexes: Vec<MetadataIndex>,
}

impl<W: Write> ChunkedWriter<W> {
    /// Starts a file on `out` with `header`.
    pub fn new(out: W, header: &Header, options: ChunkOptions) -> McapResult<Self> {
        let mut out = Counted::new(out);
        out.write(mcap::MAGIC)?;
        let mut record = Vec::new();
        wire::append_record(&mut record, op::HEADER, header)?;
        out.write(&record)?;
        Ok(Self {
            out,
            options,
            builder: ChunkBuilder::new(options.chunk_size),
            pool: EncoderPool::new(options.compression, options.level, options.threads)?,
            pending: VecDeque::new(),
            schemas: BTreeMap::new(),
            channels: BTreeMap::new(),
            statistics: Statistics::default(),
            chunk_indexes: Vec::new(),
            attachment_indexes: Vec::new(),
            metadata_indexes: Vec::new(),
        })
    }

    /// Adds a schema; a repeat of a known one is left out, a different one under a known
    /// id refused.
    pub fn add_schema(&mut self, header: SchemaHeader, data: &[u8]) -> McapResult<()> {
        if let Some((known, known_data)) = self.schemas.get(&header.id) {
            return if *known == header && known_data == data {
                Ok(())
            } else {
                Err(McapError::ConflictingSchemas(header.name))
            };
        }
        self.builder.push_schema(&header, data)?;
        self.schemas.insert(header.id, (header, data.to_vec()));
        Ok(())
    }

    /// Adds a channel; a repeat of a known one is left out, a different one under a known
    /// id refused, as is one whose schema is unknown.
    pub fn add_channel(&mut self, channel: Channel) -> McapResult<()> {
        if let Some(known) = self.channels.get(&channel.id) {
            return if *known == channel {
                Ok(())
            } else {
                Err(McapError::ConflictingChannels(channel.topic))
            };
        }
        if channel.schema_id != 0 && !self.schemas.contains_key(&channel.schema_id) {
            return Err(McapError::UnknownSchema(channel.topic, channel.schema_id));
        }
        self.builder.push_channel(&channel)?;
        self.channels.insert(channel.id, channel);
        Ok(())
    }

    /// Writes a message on a known channel.
    pub fn write_message(&mut self, header: &MessageHeader, data: &[u8]) -> McapResult<()> {
        if !self.channels.contains_key(&header.channel_id) {
            return Err(McapError::UnknownChannel(
                header.sequence,
                header.channel_id,
            ));
        }
        self.builder.push_message(header, data);
        let statistics = &mut self.statistics;
        if statistics.message_count == 0 {
            statistics.message_start_time = header.log_time;
            statistics.message_end_time = header.log_time;
        } else {
            statistics.message_start_time = statistics.message_start_time.min(header.log_time);
            statistics.message_end_time = statistics.message_end_time.max(header.log_time);
        }
        statistics.message_count += 1;
        *statistics
            .channel_message_counts
            .entry(header.channel_id)
            .or_default() += 1;
        if self.builder.len() as u64 >= self.options.chunk_size {
            self.close_chunk()?;
        }
        Ok(())
    }

    /// Writes a Metadata record between chunks.
    pub fn write_metadata(&mut self, metadata: &Metadata) -> McapResult<()> {
        self.close_chunk()?;
        let mut record = Vec::new();
        wire::append_record(&mut record, op::METADATA, metadata)?;
        self.queue(Pending::Metadata {
            record,
            name: metadata.name.clone(),
        })
    }

    /// Writes an Attachment record between chunks.
    pub fn attach(&mut self, header: &AttachmentHeader, data: &[u8]) -> McapResult<()> {
        self.close_chunk()?;
        let mut record = Vec::new();
        wire::append_attachment(&mut record, header, data)?;
        let index = AttachmentIndex {
            offset: 0,
            length: record.len() as u64,
            log_time: header.log_time,
            create_time: header.create_time,
            data_size: data.len() as u64,
            name: header.name.clone(),
            media_type: header.media_type.clone(),
        };
        self.queue(Pending::Attachment { record, index })
    }

    /// Writes what is still pending, the DataEnd record and the summary, and gives `W`
    /// back (unflushed if it buffers). Returns the file's statistics too.
    pub fn finish(mut self) -> McapResult<(W, Statistics)> {
        self.close_chunk()?;
        while !self.pending.is_empty() {
            self.write_oldest()?;
        }
        let mut data_end = Vec::new();
        let data_section_crc = self.out.crc.clone().finalize();
        wire::append_record(
            &mut data_end,
            op::DATA_END,
            &mcap::records::DataEnd { data_section_crc },
        )?;
        self.out.write(&data_end)?;

        self.statistics.schema_count = self.schemas.len() as u16;
        self.statistics.channel_count = self.channels.len() as u32;
        self.statistics.chunk_count = self.chunk_indexes.len() as u32;
        self.statistics.attachment_count = self.attachment_indexes.len() as u32;
        self.statistics.metadata_count = self.metadata_indexes.len() as u32;
        let summary = summary::Summary {
            schemas: &self.schemas,
            channels: &self.channels,
            statistics: &self.statistics,
            chunk_indexes: &self.chunk_indexes,
            attachment_indexes: &self.attachment_indexes,
            metadata_indexes: &self.metadata_indexes,
        }
        .to_bytes(self.out.position)?;
        self.out.write(&summary)?;
        let statistics = std::mem::take(&mut self.statistics);
        Ok((self.out.inner, statistics))
    }

    fn close_chunk(&mut self) -> McapResult<()> {
        if self.builder.is_empty() {
            return Ok(());
        }
        let encoding = self.pool.submit(self.builder.take());
        self.queue(Pending::Chunk(encoding))
    }

    fn queue(&mut self, item: Pending) -> McapResult<()> {
        self.pending.push_back(item);
        while self.pending.len() > self.pool.capacity() {
            self.write_oldest()?;
        }
        Ok(())
    }

    fn write_oldest(&mut self) -> McapResult<()> {
        let Some(item) = self.pending.pop_front() else {
            return Ok(());
        };
        let offset = self.out.position;
        match item {
            Pending::Chunk(encoding) => {
                let chunk = encoding.wait()?;
                self.out.write(&chunk.head)?;
                self.out.write(&chunk.data)?;
                let indexes_start = self.out.position;
                self.out.write(&chunk.message_indexes)?;
                self.chunk_indexes.push(ChunkIndex {
                    message_start_time: chunk.header.message_start_time,
                    message_end_time: chunk.header.message_end_time,
                    chunk_start_offset: offset,
                    chunk_length: indexes_start - offset,
                    message_index_offsets: chunk
                        .message_index_offsets
                        .into_iter()
                        .map(|(channel, relative)| (channel, indexes_start + relative))
                        .collect(),
                    message_index_length: chunk.message_indexes.len() as u64,
                    compression: chunk.header.compression,
                    compressed_size: chunk.header.compressed_size,
                    uncompressed_size: chunk.header.uncompressed_size,
                });
            }
            Pending::Metadata { record, name } => {
                self.out.write(&record)?;
                self.metadata_indexes.push(MetadataIndex {
                    offset,
                    length: record.len() as u64,
                    name,
                });
            }
            Pending::Attachment { record, mut index } => {
                self.out.write(&record)?;
                index.offset = offset;
                self.attachment_indexes.push(index);
            }
        }
        Ok(())
    }
}

/// A writer that knows how many bytes went through it and their CRC (the data section's).
struct Counted<W> {
    inner: W,
    position: u64,
    crc: crc32fast::Hasher,
}

impl<W: Write> Counted<W> {
    fn new(inner: W) -> Self {
        Self {
            inner,
            position: 0,
            crc: crc32fast::Hasher::new(),
        }
    }

    fn write(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.inner.write_all(bytes)?;
        self.crc.update(bytes);
        self.position += bytes.len() as u64;
        Ok(())
    }
}
