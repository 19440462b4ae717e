//! The summary section, Summary Offset records and Footer that close a chunked file.

use std::collections::BTreeMap;
use std::io;

use mcap::records::{
    op, AttachmentIndex, Channel, ChunkIndex, MetadataIndex, SchemaHeader, Statistics,
    SummaryOffset,
};

use crate::wire;

/// What the summary repeats and indexes.
pub(super) struct Summary<'a> {
    pub schemas: &'a BTreeMap<u16, (SchemaHeader, Vec<u8>)>,
    pub channels: &'a BTreeMap<u16, Channel>,
    pub statistics: &'a Statistics,
    pub chunk_indexes: &'a [ChunkIndex],
    pub attachment_indexes: &'a [AttachmentIndex],
    pub metadata_indexes: &'a [MetadataIndex],
}

impl Summary<'_> {
    /// Everything from the summary's first byte, which lies at file offset `start`, to the
    /// closing magic.
    pub fn to_bytes(&self, start: u64) -> io::Result<Vec<u8>> {
        let mut out = Vec::new();
        let mut offsets = Vec::new();
        let mut group = |out: &mut Vec<u8>,
                         opcode: u8,
                         write: &mut dyn FnMut(&mut Vec<u8>) -> io::Result<()>|
         -> io::Result<()> {
            let group_start = out.len();
            write(out)?;
            if out.len() > group_start {
                offsets.push(SummaryOffset {
                    group_opcode: opcode,
                    group_start: start + group_start as u64,
                    group_length: (out.len() - group_start) as u64,
                });
            }
            Ok(())
        };
        group(&mut out, op::SCHEMA, &mut |out| {
            self.schemas
                .values()
                .try_for_each(|(header, data)| wire::append_schema(out, header, data))
        })?;
        group(&mut out, op::CHANNEL, &mut |out| {
            self.channels
                .values()
                .try_for_each(|channel| wire::append_record(out, op::CHANNEL, channel))
        })?;
        group(&mut out, op::STATISTICS, &mut |out| {
            wire::append_record(out, op::STATISTICS, self.statistics)
        })?;
        group(&mut out, op::CHUNK_INDEX, &mut |out| {
            self.chunk_indexes
                .iter()
                .try_for_each(|index| wire::append_record(out, op::CHUNK_INDEX, index))
        })?;
        group(&mut out, op::ATTACHMENT_INDEX, &mut |out| {
            self.attachment_indexes
                .iter()
                .try_for_each(|index| wire::append_record(out, op::ATTACHMENT_INDEX, index))
        })?;
        group(&mut out, op::METADATA_INDEX, &mut |out| {
            self.metadata_indexes
                .iter()
                .try_for_each(|index| wire::append_record(out, op::METADATA_INDEX, index))
        })?;

        let offsets_start = start + out.len() as u64;
        for offset in &offsets {
            wire::append_record(&mut out, op::SUMMARY_OFFSET, offset)?;
        }
        // The Footer's CRC covers the summary and the Footer up to the CRC itself.
        out.push(op::FOOTER);
        out.extend_from_slice(&20u64.to_le_bytes());
        out.extend_from_slice(&start.to_le_bytes());
        out.extend_from_slice(&offsets_start.to_le_bytes());
        let crc = crc32fast::hash(&out);
        out.extend_from_slice(&crc.to_le_bytes());
        out.extend_from_slice(mcap::MAGIC);
        Ok(out)
    }
}
