//! The streaming, unchunked MCAP writer of the recorder's hot path.
//!
//! This module is the writer's API; the jobs behind it have their own modules: the
//! records of a file (`layout`), handing them on to the kernel or the direct-I/O
//! staging (`staging`), ending a file (`end`) and creating one (`open`).

use std::collections::{BTreeMap, VecDeque};
use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};

use mcap::records::{self, op};

use crate::checkpoints::{CheckpointTracker, Span};
use crate::direct::{self, DirectSink};
use crate::durability::WriteBack;
use crate::io_mode::IoMode;
use crate::latched::is_latched;
use crate::wire::{self, MESSAGE_PREFIX_LEN};

mod end;
mod error;
mod layout;
mod open;
mod options;
mod sealed;
mod sealed_output;
mod staging;
mod stored_digest;

pub use error::WriteError;
pub use open::probe_io_mode;
pub use options::WriterOptions;

use layout::{ChannelEntry, FileStats, SchemaEntry};
use open::{open_new, write_back_policy};
use sealed::SealedSink;
use stored_digest::StoredDigest;

/// The direct-I/O staging of a sealed file: every byte of it is staged (no payload can be
/// written from the caller's memory), so it leaves in writes as large as a camera frame
/// written in place would, keeping the disk's queue as busy.
const SEALED_STAGING: usize = 8 << 20;

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
    /// The SHA-256 of the file's `bytes` as the writer stored them (the ciphertext of a
    /// sealed file), taken as they were written: with
    /// [`WriterOptions::stored_digest`], for a file closed whole; `None` otherwise (a file
    /// ended on a write error was cut and partly rewritten, and must be read back).
    pub stored_sha256: Option<[u8; 32]>,
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
    /// The sealing of the file, when it is sealed (then `written` counts plaintext).
    sealed: Option<SealedSink>,
    data_crc: Option<crc32fast::Hasher>,
    /// The digest of the bytes stored so far, when asked for and the file is not sealed
    /// (a sealed file's output hashes its ciphertext).
    stored_digest: Option<StoredDigest>,
    schemas: Vec<SchemaEntry>,
    channels: Vec<ChannelEntry>,
    /// Messages whose write call succeeded (some may still be batched).
    stats: FileStats,
    /// Record boundaries with the counts of everything before them, oldest first: the
    /// last one the file holds is where a failed file ends (see [`Self::end`]).
    commits: VecDeque<(u64, FileStats)>,
    /// Where a cut of the file may start its scan, kept as messages are written.
    checkpoints: CheckpointTracker,
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

/// A Metadata record encoded ahead of time, off the thread that writes the file, so that
/// writing it is a copy ([`StreamWriter::add_encoded_metadata`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EncodedMetadata {
    name: String,
    bytes: Vec<u8>,
}

impl EncodedMetadata {
    /// The record `name` holding `metadata`.
    pub fn new(name: &str, metadata: &BTreeMap<String, String>) -> io::Result<Self> {
        let record = records::Metadata {
            name: name.to_string(),
            metadata: metadata.clone(),
        };
        let mut bytes = Vec::new();
        wire::append_record(&mut bytes, op::METADATA, &record)?;
        Ok(Self {
            name: name.to_string(),
            bytes,
        })
    }

    /// The record's name.
    pub fn name(&self) -> &str {
        &self.name
    }
}

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
        let write_back = WriteBack::for_file(write_back_policy(&options.durability, used), &file);
        let direct_io = used == IoMode::Direct;
        let sealed = match &options.sealing {
            Some(sealing) => Some(SealedSink::start(
                &file,
                &path,
                sealing,
                direct_io,
                SEALED_STAGING,
                options.stored_digest,
            )?),
            None => None,
        };
        // A sealed file stages its sealed chunks instead.
        let direct = (direct_io && sealed.is_none()).then(|| DirectSink::new(options.batch_size));
        let mut writer = Self {
            file,
            path,
            write_back,
            direct,
            sealed,
            pending: Vec::with_capacity(options.batch_size + MESSAGE_PREFIX_LEN),
            written: 0,
            data_crc: None,
            stored_digest: None,
            schemas: Vec::new(),
            channels: Vec::new(),
            stats: FileStats::default(),
            commits: VecDeque::new(),
            checkpoints: CheckpointTracker::default(),
            failed: false,
            options,
        };
        writer.start_file()?;
        Ok(writer)
    }

    /// Whether the files are sealed (age files, `….mcap.age`).
    pub fn is_sealed(&self) -> bool {
        self.sealed.is_some()
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

    /// Bytes of MCAP in the current file so far, including those still batched (of a
    /// sealed file: its plaintext).
    pub fn bytes_written(&self) -> u64 {
        self.written + self.pending.len() as u64
    }

    /// Messages in the current file so far.
    pub fn message_count(&self) -> u64 {
        self.stats.message_count
    }

    /// The earliest and latest log time written to the current file so far, if any.
    pub fn time_range(&self) -> Option<(u64, u64)> {
        self.stats.time_range
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
        self.checkpoints.channel_added(is_latched(metadata));
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
        let record_at = self.bytes_written();
        let prefix = wire::message_prefix(
            header.channel.0,
            header.sequence,
            header.log_time,
            header.publish_time,
            payload_len as u64,
        );
        self.pending.extend_from_slice(&prefix);
        if payload_len >= self.options.zero_copy_threshold {
            self.flush_with(parts)?;
        } else if payload_len >= direct::BLOCK && self.stages() {
            // Copied once, into the staging, rather than into the batch and then from it.
            self.stage_with(parts)?;
        } else {
            for part in parts {
                self.pending.extend_from_slice(part);
            }
            if self.pending.len() >= self.options.batch_size {
                self.flush_with(&[])?;
            }
        }
        self.stats.count(channel, header.log_time, payload_len);
        self.commit();
        let record = Span {
            offset: record_at,
            len: self.bytes_written() - record_at,
        };
        let taken = (self.checkpoints).message_written(header.channel.0, record, header.log_time);
        if let (true, Some(book)) = (taken, &self.options.checkpoints) {
            book.publish(&self.path, self.checkpoints.growing());
        }
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
        let record = EncodedMetadata::new(name, metadata).map_err(|e| self.io(e))?;
        self.add_encoded_metadata(&record)
    }

    /// Writes a Metadata record encoded beforehand: a copy of its bytes.
    pub fn add_encoded_metadata(&mut self, record: &EncodedMetadata) -> Result<(), WriteError> {
        self.check_usable()?;
        let offset = self.bytes_written();
        self.pending.extend_from_slice(&record.bytes);
        self.checkpoints.definition_written(Span {
            offset,
            len: record.bytes.len() as u64,
        });
        self.stats.metadata_indexes.push(records::MetadataIndex {
            offset,
            length: record.bytes.len() as u64,
            name: record.name.clone(),
        });
        Ok(())
    }

    /// Hands every batched record to the kernel. With direct I/O the file then ends in a
    /// padding record that fills its last block, as direct writes come in whole blocks.
    ///
    /// A sealed file is padded to a chunk boundary instead, and its open chunk sealed, so
    /// that everything written so far is in the file; call it as often as that bound on a
    /// power cut is worth up to 64 KiB of padding.
    pub fn flush(&mut self) -> Result<(), WriteError> {
        self.check_usable()?;
        if self.sealed.is_some() {
            return self.seal_to_here();
        }
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
        if let Some(sealing) = &self.options.sealing {
            let direct_io = self.options.io_mode == IoMode::Direct;
            let staging = SEALED_STAGING;
            self.sealed = Some(SealedSink::start(
                &self.file,
                &next,
                sealing,
                direct_io,
                staging,
                self.options.stored_digest,
            )?);
        }
        self.path = next;
        self.written = 0;
        if let Some(sink) = &mut self.direct {
            sink.reset();
        }
        self.stats = FileStats::for_channels(self.channels.len());
        self.commits.clear();
        self.checkpoints.file_started();
        self.write_back = WriteBack::for_file(
            write_back_policy(&self.options.durability, self.options.io_mode),
            &self.file,
        );
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
        // Ended early, the file no longer holds what its checkpoints say.
        if let Some(book) = &self.options.checkpoints {
            book.forget(&self.path);
        }
        if self.sealed.is_some() {
            return self.end_sealed(error);
        }
        self.end_on_last_commit(error)
    }

    fn start_file(&mut self) -> Result<(), WriteError> {
        self.data_crc = self.options.data_crc.then(crc32fast::Hasher::new);
        self.stored_digest =
            (self.options.stored_digest && self.sealed.is_none()).then(StoredDigest::new);
        self.pending.clear();
        layout::append_file_start(
            &mut self.pending,
            &self.options.profile,
            &self.options.library,
        )
        .map_err(|e| self.io(e))?;
        self.flush_with(&[])?;
        self.commit();
        Ok(())
    }

    fn append_schema(&mut self, id: u16) -> Result<(), WriteError> {
        let offset = self.bytes_written();
        let schema = &self.schemas[id as usize - 1];
        layout::append_schema(&mut self.pending, id, schema).map_err(|e| self.io(e))?;
        self.definition_written(offset);
        Ok(())
    }

    fn append_channel(&mut self, id: u16) -> Result<(), WriteError> {
        let offset = self.bytes_written();
        let channel = &self.channels[id as usize];
        layout::append_channel(&mut self.pending, id, channel).map_err(|e| self.io(e))?;
        self.definition_written(offset);
        Ok(())
    }

    /// Notes the Schema or Channel record from `offset` to here for the checkpoints.
    fn definition_written(&mut self, offset: u64) {
        let len = self.bytes_written() - offset;
        self.checkpoints.definition_written(Span { offset, len });
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
