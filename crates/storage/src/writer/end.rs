//! Ending a file: DataEnd, the summary and the Footer after the last record; after a
//! write error, on the last complete record the file holds, saying what did not make it.

use std::collections::BTreeMap;
use std::io;

use mcap::records::{self, op};

use super::error::WriteError;
use super::layout::{self, FileStats};
use super::{EndedFile, FileSummary, StreamWriter};
use crate::checkpoints::CHECKPOINTS;
use crate::{direct, wire};

impl StreamWriter {
    /// Writes DataEnd, the summary and the Footer, and syncs the file to disk.
    pub(super) fn finish(&mut self) -> Result<FileSummary, WriteError> {
        self.check_usable()?;
        let end = self.bytes_written();
        self.checkpoints.file_ending(end);
        let checkpoints = self.checkpoints.checkpoints();
        if !checkpoints.0.is_empty() {
            let metadata = checkpoints.to_metadata();
            self.add_metadata(CHECKPOINTS, &metadata)?;
        }
        if !self.pending.is_empty() {
            self.flush_with(&[])?;
        }
        let data_crc = self.data_crc.take().map(|crc| crc.finalize());
        let mut tail = Vec::new();
        let data_end = records::DataEnd {
            data_section_crc: data_crc.unwrap_or(0),
        };
        wire::append_record(&mut tail, op::DATA_END, &data_end).map_err(|e| self.io(e))?;
        let summary_start = self.written + tail.len() as u64;
        layout::append_summary(
            &mut tail,
            summary_start,
            &self.schemas,
            &self.channels,
            &self.stats,
        )
        .map_err(|e| self.io(e))?;
        self.write_tail(&tail)?;
        self.file.sync_data().map_err(|e| self.io(e))?;
        // The file's own record and summary say it all now.
        if let Some(book) = &self.options.checkpoints {
            book.forget(&self.path);
        }
        let (bytes, stored_sha256) = match &mut self.sealed {
            Some(sink) => (sink.stored_in_file(), sink.take_stored_sha256()),
            None => (self.written, self.stored_digest.take().map(|d| d.finish())),
        };
        Ok(FileSummary {
            path: self.path.clone(),
            bytes,
            message_count: self.stats.message_count,
            channel_message_counts: layout::channel_message_counts(&self.stats),
            time_range: self.stats.time_range,
            data_crc,
            indexed: true,
            stored_sha256,
        })
    }

    /// Ends the file on the last record boundary it holds, with the summary of what is
    /// before it where the room can be had.
    pub(super) fn end_on_last_commit(mut self, error: Option<WriteError>) -> EndedFile {
        let in_file = match &self.direct {
            Some(sink) => sink.in_file(),
            None => self.written,
        };
        let (end, kept) = self.last_commit_within(in_file);
        let unwritten = self.unwritten_since(&kept);
        let mut tail = Vec::new();
        let data_end = records::DataEnd {
            data_section_crc: 0,
        };
        let indexed = wire::append_record(&mut tail, op::DATA_END, &data_end)
            .and_then(|()| {
                let summary_start = end + tail.len() as u64;
                layout::append_summary(
                    &mut tail,
                    summary_start,
                    &self.schemas,
                    &self.channels,
                    &kept,
                )
            })
            .and_then(|()| self.write_tail_at(end, &tail))
            .is_ok();
        let size = if indexed {
            end + tail.len() as u64
        } else {
            end
        };
        // Without the tail, the file must at least end on its last complete record.
        let _ = self.file.set_len(size);
        let _ = self.file.sync_data();
        EndedFile {
            summary: FileSummary {
                path: self.path.clone(),
                bytes: size,
                message_count: kept.message_count,
                channel_message_counts: layout::channel_message_counts(&kept),
                time_range: kept.time_range,
                data_crc: None,
                indexed,
                stored_sha256: None,
            },
            unwritten,
            error,
        }
    }

    /// The newest record boundary among the first `in_file` bytes, and the counts of
    /// everything before it.
    pub(super) fn last_commit_within(&self, in_file: u64) -> (u64, FileStats) {
        self.commits
            .iter()
            .rev()
            .find(|(offset, _)| *offset <= in_file)
            .cloned()
            .unwrap_or_default()
    }

    /// Messages acknowledged to the caller since `kept`, per channel topic.
    pub(super) fn unwritten_since(&self, kept: &FileStats) -> BTreeMap<String, (u64, u64)> {
        let at = |counts: &[u64], id: usize| counts.get(id).copied().unwrap_or(0);
        (self.channels.iter().enumerate())
            .filter_map(|(id, channel)| {
                let messages = self.stats.per_channel[id] - at(&kept.per_channel, id);
                let bytes = self.stats.per_channel_bytes[id] - at(&kept.per_channel_bytes, id);
                (messages > 0).then(|| (channel.topic.clone(), (messages, bytes)))
            })
            .collect()
    }

    /// Writes `tail` at `offset` through the page cache, the file cut there first.
    fn write_tail_at(&mut self, offset: u64, tail: &[u8]) -> io::Result<()> {
        use std::os::unix::fs::FileExt;
        self.file.set_len(offset)?;
        if self.direct.is_some() {
            direct::set_direct(&self.file, false)?;
        }
        self.file.write_all_at(tail, offset)?;
        self.file.sync_data()
    }
}
