//! Turns a gathered chunk into the bytes of its Chunk record and Message Index records;
//! the part of a reindex that runs on many threads.

use std::collections::BTreeMap;
use std::io::{self, Write};

use mcap::records::{op, ChunkHeader, MessageIndex};

use super::builder::RawChunk;
use crate::compression::Compression;
use crate::wire;

/// A chunk ready to be written: its record in two parts (so that uncompressed records are
/// never copied), then its Message Index records.
#[derive(Debug)]
pub(super) struct EncodedChunk {
    /// Opcode, length and the Chunk record's fields up to its data.
    pub head: Vec<u8>,
    /// The records, compressed or not.
    pub data: Vec<u8>,
    /// One Message Index record per channel with messages in the chunk.
    pub message_indexes: Vec<u8>,
    /// Per channel, the offset of its Message Index record within `message_indexes`.
    pub message_index_offsets: BTreeMap<u16, u64>,
    /// The Chunk record's fields, for its Chunk Index.
    pub header: ChunkHeader,
}

/// Compresses chunks; one per thread, so that zstd's context is reused chunk after chunk.
pub(super) struct ChunkEncoder {
    compression: Compression,
    level: u32,
    zstd: Option<zstd::bulk::Compressor<'static>>,
}

impl ChunkEncoder {
    /// An encoder for `compression` at `level` (0: the compressor's default).
    pub fn new(compression: Compression, level: u32) -> io::Result<Self> {
        let zstd = match compression {
            Compression::Zstd => Some(zstd::bulk::Compressor::new(level as i32)?),
            Compression::None | Compression::Lz4 => None,
        };
        Ok(Self {
            compression,
            level,
            zstd,
        })
    }

    /// Encodes `chunk`.
    pub fn encode(&mut self, chunk: RawChunk) -> io::Result<EncodedChunk> {
        let uncompressed_crc = crc32fast::hash(&chunk.records);
        let uncompressed_size = chunk.records.len() as u64;
        let (compression, data) = match self.compression {
            Compression::None => ("", chunk.records),
            Compression::Zstd => (
                "zstd",
                self.zstd
                    .as_mut()
                    .expect("made for zstd")
                    .compress(&chunk.records)?,
            ),
            Compression::Lz4 => ("lz4", lz4_frame(&chunk.records, self.level)?),
        };
        let header = ChunkHeader {
            message_start_time: chunk.start_time,
            message_end_time: chunk.end_time,
            uncompressed_size,
            uncompressed_crc,
            compression: compression.into(),
            compressed_size: data.len() as u64,
        };
        let head = wire::record_head(op::CHUNK, &header, data.len() as u64)?;
        let mut message_indexes = Vec::new();
        let mut message_index_offsets = BTreeMap::new();
        for (channel_id, records) in chunk.indexes {
            message_index_offsets.insert(channel_id, message_indexes.len() as u64);
            let index = MessageIndex {
                channel_id,
                records,
            };
            wire::append_record(&mut message_indexes, op::MESSAGE_INDEX, &index)?;
        }
        Ok(EncodedChunk {
            head,
            data,
            message_indexes,
            message_index_offsets,
            header,
        })
    }
}

/// `records` as one lz4 frame, without block checksums (the chunk has its own CRC), as the
/// `mcap` crate writes them.
fn lz4_frame(records: &[u8], level: u32) -> io::Result<Vec<u8>> {
    let mut encoder = lz4::EncoderBuilder::new()
        .level(level)
        .block_checksum(lz4::liblz4::BlockChecksum::NoBlockChecksum)
        .build(Vec::with_capacity(records.len() / 2))?;
    encoder.write_all(records)?;
    let (frame, finished) = encoder.finish();
    finished?;
    Ok(frame)
}
