//! The streaming, unchunked MCAP writer of the recorder's hot path.

use std::collections::{BTreeMap, VecDeque};
use std::fs::{File, OpenOptions};
use std::io::{self, IoSlice, Write};
use std::path::{Path, PathBuf};

use mcap::records::{self, op};

use crate::direct::{self, DirectSink};
use crate::durability::{Durability, WriteBack};
use crate::io_mode::IoMode;
use crate::wire::{self, MESSAGE_PREFIX_LEN};

/// Settings of a [`StreamWriter`].
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct WriterOptions {
    /// The Header's profile (`ros2` for ROS 2 topics, empty for none).
    pub profile: String,
    /// The Header's library string.
    pub library: String,
    /// Compute the CRC-32 of the data section and store it in DataEnd.
    pub data_crc: bool,
    /// Payloads of at least this many bytes are written straight from the caller's memory;
    /// smaller ones are copied into the batch.
    pub zero_copy_threshold: usize,
    /// Batched records leave in one syscall once they fill this many bytes.
    pub batch_size: usize,
    /// Write-back, page-cache and fdatasync policy.
    pub durability: Durability,
    /// Page cache or `O_DIRECT` (see [`IoMode`]); with direct I/O the write-back window
    /// does not apply.
    pub io_mode: IoMode,
}

impl Default for WriterOptions {
    fn default() -> Self {
        Self {
            profile: String::new(),
            library: crate::LIBRARY.to_string(),
            data_crc: false,
            zero_copy_threshold: 64 << 10,
            batch_size: 512 << 10,
            durability: Durability::default(),
            io_mode: IoMode::default(),
        }
    }
}

/// Identifies a schema added to a [`StreamWriter`]; stays valid across [`StreamWriter::roll`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SchemaId(pub u16);

/// Identifies a channel added to a [`StreamWriter`]; stays valid across [`StreamWriter::roll`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ChannelId(pub u16);

/// The fields of a Message record besides its payload.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MessageHeader {
    /// The channel the message belongs to.
    pub channel: ChannelId,
    /// The publisher's sequence number, 0 where unknown.
    pub sequence: u32,
    /// When the recorder received the message, ns since the Unix epoch.
    pub log_time: u64,
    /// When the message was published, ns since the Unix epoch.
    pub publish_time: u64,
}

/// A file to put into every recording file as an MCAP Attachment (a calibration, say).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attachment {
    /// Its name in the file (the attached file's name).
    pub name: String,
    /// Its media type, e.g. `application/yaml`.
    pub media_type: String,
    /// When it was created (the attached file's modification time), ns since the Unix
    /// epoch.
    pub create_time: u64,
    /// Its bytes.
    pub data: Vec<u8>,
}

/// What one closed file holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileSummary {
    /// Where the file is.
    pub path: PathBuf,
    /// Its size in bytes.
    pub bytes: u64,
    /// Messages in the file.
    pub message_count: u64,
    /// Messages per channel, for the channels that have any.
    pub channel_message_counts: BTreeMap<u16, u64>,
    /// Earliest and latest log time, if any message was written.
    pub time_range: Option<(u64, u64)>,
    /// CRC-32 of the data section, if computed.
    pub data_crc: Option<u32>,
    /// The file ends with its summary and footer, so readers need no reindexing; false
    /// when a write error left no room for them (the file then ends on its last complete
    /// record, and `rec reindex` indexes it).
    pub indexed: bool,
}

/// What went wrong while writing.
#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    /// The file could not be created (an existing file is never overwritten).
    #[error("cannot create {}: {source}", path.display())]
    Create {
        /// The file.
        path: PathBuf,
        /// Why.
        source: io::Error,
    },
    /// Writing or syncing the file failed; it holds every record written before, and
    /// `rec reindex` recovers them.
    #[error("writing {} failed: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        source: io::Error,
    },
    /// A message named a channel that was never added.
    #[error("message for channel {0}, which was never added")]
    UnknownChannel(u16),
    /// A channel named a schema that was never added.
    #[error("channel refers to schema {0}, which was never added")]
    UnknownSchema(u16),
    /// MCAP numbers channels and schemas with 16 bits.
    #[error("more than 65535 {0} in one recording")]
    TooMany(&'static str),
    /// Direct I/O was asked for, but the file system refuses `O_DIRECT`.
    #[error("cannot create {} for direct I/O: its file system does not support O_DIRECT (use io_mode \"auto\" or \"buffered\" for this directory)", path.display())]
    DirectIoUnsupported {
        /// The file.
        path: PathBuf,
    },
    /// An earlier write failed; the file was left as a recoverable prefix.
    #[error("{} can no longer be written after an earlier error; `rec reindex` recovers what it holds", path.display())]
    Failed {
        /// The file.
        path: PathBuf,
    },
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct SchemaEntry {
    name: String,
    encoding: String,
    data: Vec<u8>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct ChannelEntry {
    schema_id: u16,
    topic: String,
    message_encoding: String,
    metadata: BTreeMap<String, String>,
}

/// Counts of the file being written; reset by a roll.
#[derive(Debug, Default, Clone)]
struct FileStats {
    message_count: u64,
    per_channel: Vec<u64>,
    /// Payload bytes per channel.
    per_channel_bytes: Vec<u64>,
    time_range: Option<(u64, u64)>,
    metadata_indexes: Vec<records::MetadataIndex>,
    attachment_indexes: Vec<records::AttachmentIndex>,
}

impl FileStats {
    fn for_channels(channels: usize) -> Self {
        Self {
            per_channel: vec![0; channels],
            per_channel_bytes: vec![0; channels],
            ..Self::default()
        }
    }

    fn count(&mut self, channel: usize, log_time: u64, payload_len: usize) {
        self.message_count += 1;
        self.per_channel[channel] += 1;
        self.per_channel_bytes[channel] += payload_len as u64;
        self.time_range = Some(match self.time_range {
            None => (log_time, log_time),
            Some((start, end)) => (start.min(log_time), end.max(log_time)),
        });
    }
}

/// Streams unchunked MCAP to a file: Header, Schema and Channel records as they are added,
/// Message and Metadata records, and at close DataEnd, a summary (Schemas, Channels,
/// Statistics, Metadata indexes, Summary offsets) and the Footer.
///
/// Every prefix of the file that ends on a record boundary is readable; after a crash,
/// [`crate::reindex`] recovers it. A write call returns only once the writer no longer
/// needs the payload: a large payload has reached the kernel, a small one was copied.
///
/// ```
/// use std::collections::BTreeMap;
/// use recd_storage::{MessageHeader, StreamWriter, WriterOptions};
///
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("example.mcap");
/// let mut file = StreamWriter::create(&path, WriterOptions::default())?;
/// let schema = file.add_schema("example/Text", "text", b"")?;
/// let channel = file.add_channel(Some(schema), "/greeting", "text", &BTreeMap::new())?;
/// let header = MessageHeader {
///     channel,
///     sequence: 0,
///     log_time: 1_700_000_000_000_000_000,
///     publish_time: 1_700_000_000_000_000_000,
/// };
/// file.write_message(&header, b"hello")?;
/// let summary = file.close()?;
/// assert_eq!(summary.message_count, 1);
///
/// // Any reader of MCAP reads it back, the mcap crate among them.
/// let bytes = std::fs::read(&path)?;
/// let message = mcap::MessageStream::new(&bytes)?.next().unwrap()?;
/// assert_eq!(&message.data[..], b"hello");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct StreamWriter {
    file: File,
    path: PathBuf,
    options: WriterOptions,
    /// Encoded records that have not reached the kernel yet.
    pending: Vec<u8>,
    /// Bytes handed on (to the kernel, or to `direct`): the file offset of `pending[0]`.
    written: u64,
    /// The staging of direct I/O, when it is on.
    direct: Option<DirectSink>,
    data_crc: Option<crc32fast::Hasher>,
    schemas: Vec<SchemaEntry>,
    channels: Vec<ChannelEntry>,
    /// Messages whose write call succeeded (some may still be batched).
    stats: FileStats,
    /// Record boundaries with the counts of everything before them, oldest first: the
    /// last one the file holds is where a failed file ends (see [`Self::end`]).
    commits: VecDeque<(u64, FileStats)>,
    write_back: WriteBack,
    failed: bool,
}

/// A file ended by [`StreamWriter::end`], also after a write error.
#[derive(Debug)]
pub struct EndedFile {
    /// What the file holds: its real size and the messages in it.
    pub summary: FileSummary,
    /// Messages whose write call had succeeded but which are not in the file (they were
    /// batched when a write failed), per channel topic: (messages, payload bytes).
    pub unwritten: BTreeMap<String, (u64, u64)>,
    /// The error that ended the file early, if any.
    pub error: Option<WriteError>,
}

/// How many payload parts go into one `writev` besides the batch.
const PARTS_PER_WRITEV: usize = 15;

impl StreamWriter {
    /// Creates `path`, which must not exist yet (nothing recorded is ever overwritten),
    /// and writes the MCAP magic and Header.
    ///
    /// With [`IoMode::Auto`] the file is opened with `O_DIRECT` if its file system accepts
    /// it; [`Self::io_mode`] tells which was used, and the files [`Self::roll`] continues
    /// in use the same.
    pub fn create(path: impl AsRef<Path>, mut options: WriterOptions) -> Result<Self, WriteError> {
        let path = path.as_ref().to_path_buf();
        let (file, used) = open_new(&path, options.io_mode)?;
        options.io_mode = used;
        let write_back = WriteBack::for_file(write_back_policy(&options), &file);
        let direct = (used == IoMode::Direct).then(|| DirectSink::new(options.batch_size));
        let mut writer = Self {
            file,
            path,
            write_back,
            direct,
            pending: Vec::with_capacity(options.batch_size + MESSAGE_PREFIX_LEN),
            written: 0,
            data_crc: None,
            schemas: Vec::new(),
            channels: Vec::new(),
            stats: FileStats::default(),
            commits: VecDeque::new(),
            failed: false,
            options,
        };
        writer.start_file()?;
        Ok(writer)
    }

    /// The I/O path this writer uses: [`IoMode::Direct`] or [`IoMode::Buffered`], never
    /// [`IoMode::Auto`].
    pub fn io_mode(&self) -> IoMode {
        self.options.io_mode
    }

    /// The file being written.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Bytes in the current file so far, including those still batched.
    pub fn bytes_written(&self) -> u64 {
        self.written + self.pending.len() as u64
    }

    /// Messages in the current file so far.
    pub fn message_count(&self) -> u64 {
        self.stats.message_count
    }

    /// Adds a schema and writes its record; adding an identical schema again returns the
    /// same id.
    pub fn add_schema(
        &mut self,
        name: &str,
        encoding: &str,
        data: &[u8],
    ) -> Result<SchemaId, WriteError> {
        let entry = SchemaEntry {
            name: name.to_string(),
            encoding: encoding.to_string(),
            data: data.to_vec(),
        };
        if let Some(index) = self.schemas.iter().position(|s| *s == entry) {
            return Ok(SchemaId(index as u16 + 1));
        }
        // Schema id 0 means "no schema", so ids start at 1.
        let id =
            u16::try_from(self.schemas.len() + 1).map_err(|_| WriteError::TooMany("schemas"))?;
        self.schemas.push(entry);
        self.append_schema(id)?;
        Ok(SchemaId(id))
    }

    /// Adds a channel and writes its record; adding an identical channel again returns the
    /// same id.
    pub fn add_channel(
        &mut self,
        schema: Option<SchemaId>,
        topic: &str,
        message_encoding: &str,
        metadata: &BTreeMap<String, String>,
    ) -> Result<ChannelId, WriteError> {
        let schema_id = schema.map_or(0, |s| s.0);
        if schema_id as usize > self.schemas.len() {
            return Err(WriteError::UnknownSchema(schema_id));
        }
        let entry = ChannelEntry {
            schema_id,
            topic: topic.to_string(),
            message_encoding: message_encoding.to_string(),
            metadata: metadata.clone(),
        };
        if let Some(index) = self.channels.iter().position(|c| *c == entry) {
            return Ok(ChannelId(index as u16));
        }
        let id = u16::try_from(self.channels.len()).map_err(|_| WriteError::TooMany("channels"))?;
        self.channels.push(entry);
        self.stats.per_channel.push(0);
        self.stats.per_channel_bytes.push(0);
        self.append_channel(id)?;
        Ok(ChannelId(id))
    }

    /// Writes one message whose payload is `payload`.
    pub fn write_message(
        &mut self,
        header: &MessageHeader,
        payload: &[u8],
    ) -> Result<(), WriteError> {
        self.write_message_parts(header, &[payload])
    }

    /// Writes one message whose payload is the concatenation of `parts` (a user header and
    /// a sample's payload, say), without joining them in memory.
    pub fn write_message_parts(
        &mut self,
        header: &MessageHeader,
        parts: &[&[u8]],
    ) -> Result<(), WriteError> {
        self.check_usable()?;
        let channel = header.channel.0 as usize;
        if channel >= self.channels.len() {
            return Err(WriteError::UnknownChannel(header.channel.0));
        }
        let payload_len: usize = parts.iter().map(|p| p.len()).sum();
        let in_place = self.direct.is_some() && payload_len >= self.options.zero_copy_threshold;
        if let (true, Some((last, before))) = (in_place, parts.split_last()) {
            // Land the last part on a file offset congruent to its address.
            let distance = MESSAGE_PREFIX_LEN + before.iter().map(|p| p.len()).sum::<usize>();
            let padding =
                direct::padding_for(self.bytes_written(), distance, last.as_ptr() as usize);
            direct::append_padding(&mut self.pending, padding);
        }
        let prefix = wire::message_prefix(
            header.channel.0,
            header.sequence,
            header.log_time,
            header.publish_time,
            payload_len as u64,
        );
        self.pending.extend_from_slice(&prefix);
        if payload_len < self.options.zero_copy_threshold {
            for part in parts {
                self.pending.extend_from_slice(part);
            }
            if self.pending.len() >= self.options.batch_size {
                self.flush_with(&[])?;
            }
        } else {
            self.flush_with(parts)?;
        }
        self.stats.count(channel, header.log_time, payload_len);
        self.commit();
        Ok(())
    }

    /// Writes an Attachment record (a calibration file, say), logged at `log_time`; it is
    /// indexed in the summary.
    pub fn add_attachment(
        &mut self,
        attachment: &Attachment,
        log_time: u64,
    ) -> Result<(), WriteError> {
        self.check_usable()?;
        let offset = self.bytes_written();
        let header = records::AttachmentHeader {
            log_time,
            create_time: attachment.create_time,
            name: attachment.name.clone(),
            media_type: attachment.media_type.clone(),
        };
        wire::append_attachment(&mut self.pending, &header, &attachment.data)
            .map_err(|e| self.io(e))?;
        self.stats
            .attachment_indexes
            .push(records::AttachmentIndex {
                offset,
                length: self.bytes_written() - offset,
                log_time,
                create_time: attachment.create_time,
                data_size: attachment.data.len() as u64,
                name: attachment.name.clone(),
                media_type: attachment.media_type.clone(),
            });
        Ok(())
    }

    /// Writes a Metadata record (the recorder's per-topic counts, say); it is indexed in the
    /// summary.
    pub fn add_metadata(
        &mut self,
        name: &str,
        metadata: &BTreeMap<String, String>,
    ) -> Result<(), WriteError> {
        self.check_usable()?;
        let offset = self.bytes_written();
        let record = records::Metadata {
            name: name.to_string(),
            metadata: metadata.clone(),
        };
        wire::append_record(&mut self.pending, op::METADATA, &record).map_err(|e| self.io(e))?;
        self.stats.metadata_indexes.push(records::MetadataIndex {
            offset,
            length: self.bytes_written() - offset,
            name: name.to_string(),
        });
        Ok(())
    }

    /// Hands every batched record to the kernel. With direct I/O the file then ends in a
    /// padding record that fills its last block, as direct writes come in whole blocks.
    pub fn flush(&mut self) -> Result<(), WriteError> {
        self.check_usable()?;
        let Some(sink) = &self.direct else {
            if self.pending.is_empty() {
                return Ok(());
            }
            self.flush_with(&[])?;
            self.commit();
            return Ok(());
        };
        if sink.position() == sink.in_file() && self.pending.is_empty() {
            return Ok(());
        }
        let end = self.bytes_written();
        if !(end as usize).is_multiple_of(direct::BLOCK) {
            // Pad so that the next byte lands on a block boundary.
            let padding = direct::padding_for(end, 0, 0);
            direct::append_padding(&mut self.pending, padding);
        }
        self.flush_with(&[])?;
        let sink = self.direct.as_mut().expect("direct I/O is on");
        let result = sink.write_full_blocks(&self.file);
        let in_file = sink.in_file();
        result.map_err(|error| self.fail(in_file, error))?;
        self.commit();
        Ok(())
    }

    /// Finishes the current file (as [`Self::close`] does) and continues in a new one at
    /// `next`, which starts with the Header and every schema and channel added so far, so
    /// that each file stands alone. Returns what the finished file holds.
    pub fn roll(&mut self, next: impl AsRef<Path>) -> Result<FileSummary, WriteError> {
        let summary = self.finish()?;
        let next = next.as_ref().to_path_buf();
        (self.file, _) = open_new(&next, self.options.io_mode)?;
        self.path = next;
        self.written = 0;
        if let Some(sink) = &mut self.direct {
            sink.reset();
        }
        self.stats = FileStats::for_channels(self.channels.len());
        self.commits.clear();
        self.write_back = WriteBack::for_file(write_back_policy(&self.options), &self.file);
        self.start_file()?;
        for id in 1..=self.schemas.len() {
            self.append_schema(id as u16)?;
        }
        for id in 0..self.channels.len() {
            self.append_channel(id as u16)?;
        }
        Ok(summary)
    }

    /// Writes DataEnd, the summary and the Footer, and syncs the file to disk.
    pub fn close(mut self) -> Result<FileSummary, WriteError> {
        self.finish()
    }

    /// Closes the file as [`Self::close`] does; after a write error (a full disk, say),
    /// or when closing itself fails, ends it on its last complete record instead and
    /// appends the summary there if the room can be had. Either way the result says what
    /// the file really holds.
    pub fn end(mut self) -> EndedFile {
        let error = if self.failed {
            None
        } else {
            match self.finish() {
                Ok(summary) => {
                    return EndedFile {
                        summary,
                        unwritten: BTreeMap::new(),
                        error: None,
                    }
                }
                Err(error) => Some(error),
            }
        };
        self.end_on_last_commit(error)
    }

    /// Remembers that everything handed on so far ends on a record boundary, with the
    /// counts as they are.
    fn commit(&mut self) {
        if !self.pending.is_empty() {
            return;
        }
        let in_file = match &self.direct {
            Some(sink) => sink.in_file(),
            None => {
                self.commits.clear();
                self.written
            }
        };
        // Keep the newest commit the file holds and the ones still staged after it.
        while self.commits.len() >= 2 && self.commits[1].0 <= in_file {
            self.commits.pop_front();
        }
        self.commits.push_back((self.written, self.stats.clone()));
    }

    fn end_on_last_commit(mut self, error: Option<WriteError>) -> EndedFile {
        let in_file = match &self.direct {
            Some(sink) => sink.in_file(),
            None => self.written,
        };
        let (end, kept) = self
            .commits
            .iter()
            .rev()
            .find(|(offset, _)| *offset <= in_file)
            .cloned()
            .unwrap_or_default();
        let unwritten = self.unwritten_since(&kept);
        let mut tail = Vec::new();
        let data_end = records::DataEnd {
            data_section_crc: 0,
        };
        let indexed = wire::append_record(&mut tail, op::DATA_END, &data_end)
            .and_then(|()| {
                let summary_start = end + tail.len() as u64;
                self.append_summary(&mut tail, summary_start, &kept)
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
                channel_message_counts: channel_message_counts(&kept),
                time_range: kept.time_range,
                data_crc: None,
                indexed,
            },
            unwritten,
            error,
        }
    }

    /// Messages acknowledged to the caller since `kept`, per channel topic.
    fn unwritten_since(&self, kept: &FileStats) -> BTreeMap<String, (u64, u64)> {
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

    fn start_file(&mut self) -> Result<(), WriteError> {
        self.data_crc = self.options.data_crc.then(crc32fast::Hasher::new);
        self.pending.clear();
        self.pending.extend_from_slice(mcap::MAGIC);
        let header = records::Header {
            profile: self.options.profile.clone(),
            library: self.options.library.clone(),
        };
        wire::append_record(&mut self.pending, op::HEADER, &header).map_err(|e| self.io(e))?;
        self.flush_with(&[])?;
        self.commit();
        Ok(())
    }

    fn append_schema(&mut self, id: u16) -> Result<(), WriteError> {
        let schema = &self.schemas[id as usize - 1];
        let header = records::SchemaHeader {
            id,
            name: schema.name.clone(),
            encoding: schema.encoding.clone(),
        };
        wire::append_schema(&mut self.pending, &header, &schema.data).map_err(|e| self.io(e))
    }

    fn append_channel(&mut self, id: u16) -> Result<(), WriteError> {
        let record = self.channel_record(id);
        wire::append_record(&mut self.pending, op::CHANNEL, &record).map_err(|e| self.io(e))
    }

    fn channel_record(&self, id: u16) -> records::Channel {
        let channel = &self.channels[id as usize];
        records::Channel {
            id,
            schema_id: channel.schema_id,
            topic: channel.topic.clone(),
            message_encoding: channel.message_encoding.clone(),
            metadata: channel.metadata.clone(),
        }
    }

    /// Writes the batch followed by `parts` with as few `writev` calls as possible.
    fn flush_with(&mut self, parts: &[&[u8]]) -> Result<(), WriteError> {
        if let Some(crc) = &mut self.data_crc {
            crc.update(&self.pending);
            parts.iter().for_each(|part| crc.update(part));
        }
        if self.direct.is_some() {
            return self.hand_to_direct(parts);
        }
        let record_boundary = self.written;
        let mut groups = parts.chunks(PARTS_PER_WRITEV);
        let mut result = write_all_vectored(
            &mut self.file,
            &self.pending,
            groups.next().unwrap_or(&[]),
            &mut self.written,
        );
        for group in groups {
            if result.is_err() {
                break;
            }
            result = write_all_vectored(&mut self.file, &[], group, &mut self.written);
        }
        self.pending.clear();
        if let Err(error) = result {
            return Err(self.fail(record_boundary, error));
        }
        self.write_back
            .after_write(&self.file, self.written)
            .map_err(|error| self.fail(self.written, error))
    }

    /// The direct-I/O half of `flush_with`: stages the batch and small parts, writes large
    /// parts in place.
    fn hand_to_direct(&mut self, parts: &[&[u8]]) -> Result<(), WriteError> {
        let sink = self.direct.as_mut().expect("direct I/O is on");
        let mut result = sink.stage(&self.file, &self.pending);
        for part in parts {
            if result.is_err() {
                break;
            }
            result = if part.len() >= 2 * direct::BLOCK {
                sink.write_in_place(&self.file, part)
            } else {
                sink.stage(&self.file, part)
            };
        }
        self.pending.clear();
        self.written = sink.position();
        let in_file = sink.in_file();
        if let Err(error) = result {
            return Err(self.fail(in_file, error));
        }
        self.write_back
            .after_write(&self.file, in_file)
            .map_err(|error| self.fail(in_file, error))
    }

    /// Leaves the file ending on the last complete record and refuses further writes.
    fn fail(&mut self, record_boundary: u64, error: io::Error) -> WriteError {
        self.failed = true;
        // Best effort: a file cut mid-record is still recoverable, just less tidy.
        let _ = self.file.set_len(record_boundary);
        self.io(error)
    }

    fn finish(&mut self) -> Result<FileSummary, WriteError> {
        self.check_usable()?;
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
        self.append_summary(&mut tail, summary_start, &self.stats)
            .map_err(|e| self.io(e))?;
        let record_boundary = self.written;
        if let Some(sink) = &mut self.direct {
            let result = sink
                .stage(&self.file, &tail)
                .and_then(|()| sink.finish(&self.file));
            self.written = sink.position();
            let in_file = sink.in_file();
            if let Err(error) = result {
                return Err(self.fail(in_file, error));
            }
        } else if let Err(error) = write_all_vectored(&mut self.file, &tail, &[], &mut self.written)
        {
            return Err(self.fail(record_boundary, error));
        }
        self.file.sync_data().map_err(|e| self.io(e))?;
        Ok(FileSummary {
            path: self.path.clone(),
            bytes: self.written,
            message_count: self.stats.message_count,
            channel_message_counts: channel_message_counts(&self.stats),
            time_range: self.stats.time_range,
            data_crc,
            indexed: true,
        })
    }

    /// Appends the summary section, the summary offsets and the Footer (with the summary
    /// CRC) to `out`, whose first byte lands at file offset `summary_start - out.len()`.
    fn append_summary(
        &self,
        out: &mut Vec<u8>,
        summary_start: u64,
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
        for id in 1..=self.schemas.len() {
            let schema = &self.schemas[id - 1];
            let header = records::SchemaHeader {
                id: id as u16,
                name: schema.name.clone(),
                encoding: schema.encoding.clone(),
            };
            wire::append_schema(out, &header, &schema.data)?;
        }
        group(out, op::SCHEMA, start);

        let start = out.len();
        for id in 0..self.channels.len() {
            wire::append_record(out, op::CHANNEL, &self.channel_record(id as u16))?;
        }
        group(out, op::CHANNEL, start);

        let start = out.len();
        let (message_start_time, message_end_time) = stats.time_range.unwrap_or((0, 0));
        let statistics = records::Statistics {
            message_count: stats.message_count,
            schema_count: self.schemas.len() as u16,
            channel_count: self.channels.len() as u32,
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

    fn check_usable(&self) -> Result<(), WriteError> {
        if self.failed {
            return Err(WriteError::Failed {
                path: self.path.clone(),
            });
        }
        Ok(())
    }

    fn io(&self, source: io::Error) -> WriteError {
        WriteError::Io {
            path: self.path.clone(),
            source,
        }
    }
}

fn channel_message_counts(stats: &FileStats) -> BTreeMap<u16, u64> {
    (stats.per_channel.iter().enumerate())
        .filter(|(_, &count)| count > 0)
        .map(|(id, &count)| (id as u16, count))
        .collect()
}

/// The I/O path files created in `dir` with `mode` would get (`auto` resolved), found by
/// creating and removing a probe file; an error says why no file can be created there.
pub fn probe_io_mode(dir: &Path, mode: IoMode) -> Result<IoMode, WriteError> {
    static PROBES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let probe = PROBES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let path = dir.join(format!(".recd-probe-{}-{probe}", std::process::id()));
    let (file, used) = open_new(&path, mode)?;
    drop(file);
    let _ = std::fs::remove_file(&path);
    Ok(used)
}

/// Creates `path` for `mode`, and says which of direct or buffered I/O it got.
fn open_new(path: &Path, mode: IoMode) -> Result<(File, IoMode), WriteError> {
    let (file, used) = match mode {
        IoMode::Buffered => (open_exclusive(path, false)?, IoMode::Buffered),
        IoMode::Direct => (open_exclusive(path, true)?, IoMode::Direct),
        IoMode::Auto => match open_exclusive(path, true) {
            Ok(file) => (file, IoMode::Direct),
            Err(WriteError::DirectIoUnsupported { .. }) => {
                (open_exclusive(path, false)?, IoMode::Buffered)
            }
            Err(error) => return Err(error),
        },
    };
    // The file is new, so nobody else holds a lock on it yet.
    crate::lock::lock_for_writing(&file).map_err(|source| WriteError::Create {
        path: path.to_path_buf(),
        source,
    })?;
    Ok((file, used))
}

/// Creates `path`, which must not exist, optionally with `O_DIRECT`.
fn open_exclusive(path: &Path, direct_io: bool) -> Result<File, WriteError> {
    use std::os::unix::fs::OpenOptionsExt;
    let mut options = OpenOptions::new();
    options.write(true).create_new(true);
    if direct_io {
        options.custom_flags(libc::O_DIRECT);
    }
    options.open(path).map_err(|source| {
        if direct_io && source.raw_os_error() == Some(libc::EINVAL) {
            // The file system refused O_DIRECT after creating the (new, hence empty) file.
            let _ = std::fs::remove_file(path);
            WriteError::DirectIoUnsupported {
                path: path.to_path_buf(),
            }
        } else {
            WriteError::Create {
                path: path.to_path_buf(),
                source,
            }
        }
    })
}

/// The durability policy as it applies: direct I/O bypasses the page cache, so there is
/// no write-back to pace.
fn write_back_policy(options: &WriterOptions) -> Durability {
    if options.io_mode == IoMode::Direct {
        Durability {
            writeback_window: None,
            drop_written_pages: false,
            ..options.durability.clone()
        }
    } else {
        options.durability.clone()
    }
}

/// Writes `head` and then every part with `writev`, retrying short writes; `written`
/// counts the bytes that reached the kernel, also when an error cuts the write short.
fn write_all_vectored(
    file: &mut File,
    head: &[u8],
    parts: &[&[u8]],
    written: &mut u64,
) -> io::Result<()> {
    let mut storage = [IoSlice::new(&[]); PARTS_PER_WRITEV + 1];
    storage[0] = IoSlice::new(head);
    for (slot, part) in storage[1..].iter_mut().zip(parts) {
        *slot = IoSlice::new(part);
    }
    let mut slices = &mut storage[..parts.len() + 1];
    IoSlice::advance_slices(&mut slices, 0);
    while !slices.is_empty() {
        match file.write_vectored(slices) {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(n) => {
                *written += n as u64;
                IoSlice::advance_slices(&mut slices, n);
            }
            Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
            Err(error) => return Err(error),
        }
    }
    Ok(())
}
