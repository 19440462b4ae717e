//! What an MCAP file holds, for `rec info`.
//!
//! A cleanly closed file is summarized from its head, footer and summary section alone, a
//! small fixed number of reads whatever its size. A file without a summary (a crash left
//! it open) is scanned from the start with the recovery reader.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use mcap::records::{op, Record};
use mcap::sans_io::summary_reader::{SummaryReadEvent, SummaryReader, SummaryReaderOptions};
use recd_health::FileHealthSummary;

use crate::recover::{self, Damage, RecordSink, RecoverError};
use crate::{IncidentRecord, Marker, Trigger};

/// A summary of one MCAP file.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct FileInfo {
    /// The file.
    pub path: PathBuf,
    /// Its size in bytes.
    pub size: u64,
    /// The Header's profile.
    pub profile: String,
    /// The Header's library.
    pub library: String,
    /// Whether the file has a summary section (it was closed).
    pub closed_cleanly: bool,
    /// Messages in the file.
    pub message_count: u64,
    /// Earliest message log time, ns since the Unix epoch.
    pub start_time: Option<u64>,
    /// Latest message log time, ns since the Unix epoch.
    pub end_time: Option<u64>,
    /// Schemas in the file.
    pub schema_count: u64,
    /// The channels, by id.
    pub channels: Vec<ChannelInfo>,
    /// Chunks in the file.
    pub chunk_count: u64,
    /// Readers that seek by the summary's chunk indexes (Foxglove, Lichtblick,
    /// `@mcap/core`'s indexed reader) find its messages: it was closed with every message
    /// in indexed chunks, or holds none. recd's raw files are not; `rec reindex` makes
    /// them so.
    pub indexed: bool,
    /// Chunk sizes per compression format.
    pub compression: Vec<CompressionInfo>,
    /// Metadata records in the file.
    pub metadata_count: u64,
    /// Attachments in the file.
    pub attachment_count: u64,
    /// Markers (`rec mark`) in the file, in file order.
    pub markers: Vec<Marker>,
    /// Triggers (`rec trigger`) whose window the file holds, in file order.
    pub triggers: Vec<Trigger>,
    /// The incident whose window the file holds, for an incident's cut file.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub incident: Option<IncidentRecord>,
    /// Its health record (`health/<file>`): each topic's expectation, rate and gaps, and
    /// the required topics missing; `None` for a file without one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub health: Option<FileHealthSummary>,
    /// The ROS 2 parameters the file started with (`rec start --parameters`): by node
    /// (`/ns/talker`), each parameter's value as YAML.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub parameters: BTreeMap<String, BTreeMap<String, String>>,
    /// For a file that had to be scanned: where the scan ended.
    pub scan: Option<ScanOutcome>,
}

impl FileInfo {
    /// Seconds between the first and the last message.
    pub fn duration_secs(&self) -> f64 {
        match (self.start_time, self.end_time) {
            (Some(start), Some(end)) => end.saturating_sub(start) as f64 / 1e9,
            _ => 0.0,
        }
    }
}

/// One channel of a file.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct ChannelInfo {
    /// The channel id.
    pub id: u16,
    /// The topic.
    pub topic: String,
    /// The message encoding (`cdr`, `iceoryx2`, ...).
    pub message_encoding: String,
    /// The schema's name, if the channel has one.
    pub schema_name: Option<String>,
    /// The schema's encoding, if the channel has one.
    pub schema_encoding: Option<String>,
    /// Bytes of the schema's data (its message definition), if the channel has a schema:
    /// 0 means the definition is missing.
    pub schema_bytes: Option<usize>,
    /// Messages on the channel.
    pub message_count: u64,
    /// The channel's metadata (for ROS 2 channels: `offered_qos_profiles`,
    /// `topic_type_hash`).
    pub metadata: std::collections::BTreeMap<String, String>,
}

/// Chunks of one compression format.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct CompressionInfo {
    /// `zstd`, `lz4`, or empty for none.
    pub compression: String,
    /// Chunks of this format.
    pub chunks: u64,
    /// Their bytes as stored.
    pub compressed_bytes: u64,
    /// Their bytes once decompressed.
    pub uncompressed_bytes: u64,
}

/// How the scan of a file without a summary ended.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct ScanOutcome {
    /// Where the readable records ended early, if they did.
    pub damage: Option<Damage>,
    /// Bytes at the end that hold no complete record.
    pub unusable_bytes: u64,
    /// The data section's CRC did not match.
    pub crc_mismatch: bool,
}

/// Why a file could not be summarized.
#[derive(Debug, thiserror::Error)]
pub enum InfoError {
    /// The file could not be opened or read.
    #[error("cannot read {}: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: io::Error,
    },
    /// The path is a directory.
    #[error("{} is a directory, not an MCAP file", path.display())]
    IsDirectory {
        /// The path.
        path: PathBuf,
    },
    /// The file does not start with the MCAP magic.
    #[error("{} is not an MCAP file ({})", path.display(), if *empty { "it is empty" } else { "it does not start with the MCAP magic" })]
    NotMcap {
        /// The file has no bytes at all.
        empty: bool,
        /// The file.
        path: PathBuf,
    },
}

/// Summarizes the MCAP file at `path`.
pub fn summarize(path: impl AsRef<Path>) -> Result<FileInfo, InfoError> {
    let path = path.as_ref();
    let read_error = |source| InfoError::Read {
        path: path.to_path_buf(),
        source,
    };
    let mut file = File::open(path).map_err(read_error)?;
    let metadata = file.metadata().map_err(read_error)?;
    if metadata.is_dir() {
        return Err(InfoError::IsDirectory {
            path: path.to_path_buf(),
        });
    }
    summarize_from(&mut file, metadata.len(), path)
}

/// Summarizes an MCAP file of `size` bytes read through `input`; `path` only names it.
///
/// On a file with a summary this makes three reads (head, footer, summary section) and two
/// seeks, whatever its size.
pub fn summarize_from<R: Read + Seek>(
    input: &mut R,
    size: u64,
    path: &Path,
) -> Result<FileInfo, InfoError> {
    let read_error = |source| InfoError::Read {
        path: path.to_path_buf(),
        source,
    };
    let header = read_header(input, path)?;
    let mut info = FileInfo {
        path: path.to_path_buf(),
        size,
        profile: header.profile,
        library: header.library,
        closed_cleanly: false,
        message_count: 0,
        start_time: None,
        end_time: None,
        schema_count: 0,
        channels: Vec::new(),
        chunk_count: 0,
        indexed: false,
        compression: Vec::new(),
        metadata_count: 0,
        attachment_count: 0,
        markers: Vec::new(),
        triggers: Vec::new(),
        incident: None,
        health: None,
        parameters: BTreeMap::new(),
        scan: None,
    };
    // A missing or unreadable footer/summary means the file was not closed: scan it.
    if let Ok(Some(summary)) = read_summary(input, size) {
        if let Some(stats) = &summary.stats {
            fill_from_summary(&mut info, &summary, stats);
            let notes = read_notes(input, size, &summary).map_err(read_error)?;
            (info.markers, info.triggers) = (notes.markers, notes.triggers);
            (info.incident, info.health) = (notes.incident, notes.health);
            info.parameters = notes.parameters;
            return Ok(info);
        }
    }
    input.seek(SeekFrom::Start(0)).map_err(read_error)?;
    let mut tally = Tally::default();
    let recovery = match recover::recover(&mut *input, size, &mut tally) {
        Ok(recovery) => recovery,
        Err(RecoverError::NotMcap) => {
            return Err(InfoError::NotMcap {
                empty: size == 0,
                path: path.to_path_buf(),
            })
        }
        Err(RecoverError::Read(source)) => return Err(read_error(source)),
        Err(RecoverError::Sink(never)) => match never {},
    };
    tally.fill(&mut info);
    info.scan = Some(ScanOutcome {
        damage: recovery.damage,
        unusable_bytes: recovery.unusable_bytes,
        crc_mismatch: recovery.crc_mismatch,
    });
    Ok(info)
}

/// The markers, triggers, incident and health record of a file.
#[derive(Default)]
struct Notes {
    markers: Vec<Marker>,
    triggers: Vec<Trigger>,
    incident: Option<IncidentRecord>,
    health: Option<FileHealthSummary>,
    parameters: BTreeMap<String, BTreeMap<String, String>>,
}

impl Notes {
    fn add(&mut self, name: &str, entries: &BTreeMap<String, String>) {
        self.markers.extend(Marker::from_record(name, entries));
        self.triggers.extend(Trigger::from_record(name, entries));
        if let Some(incident) = IncidentRecord::from_record(name, entries) {
            self.incident = Some(incident);
        }
        if is_health_record(name) {
            self.health = FileHealthSummary::from_metadata(entries).ok();
        }
        if let Some(node) = crate::iceoryx2::parameters_node(name) {
            self.parameters.insert(node, entries.clone());
        }
    }
}

/// Whether a Metadata record of this name holds a file's health.
pub(crate) fn is_health_record(name: &str) -> bool {
    name.strip_prefix(crate::iceoryx2::HEALTH_METADATA)
        .is_some_and(|rest| rest.starts_with('/'))
}

/// The markers and triggers a summarized file holds: each Metadata record the summary
/// indexes under their names, read where the index says it is.
fn read_notes<R: Read + Seek>(
    input: &mut R,
    size: u64,
    summary: &mcap::Summary,
) -> io::Result<Notes> {
    let mut notes = Notes::default();
    for index in &summary.metadata_indexes {
        if index.name != crate::iceoryx2::MARKER
            && index.name != crate::iceoryx2::TRIGGER
            && index.name != crate::INCIDENT
            && !is_health_record(&index.name)
            && crate::iceoryx2::parameters_node(&index.name).is_none()
        {
            continue;
        }
        // The index's claims must fit in the file before anything is allocated for them.
        if index.length < 9 || index.offset.saturating_add(index.length) > size {
            continue;
        }
        let mut record = vec![0u8; index.length as usize];
        input.seek(SeekFrom::Start(index.offset))?;
        input.read_exact(&mut record)?;
        if let Some(Record::Metadata(metadata)) = record
            .get(9..)
            .and_then(|body| crate::parse::parse_record(record[0], body).ok())
        {
            notes.add(&metadata.name, &metadata.metadata);
        }
    }
    Ok(notes)
}

/// Reads the magic and the Header record from the start of the file: one read unless the
/// Header is unusually long.
pub(crate) fn read_header<R: Read + Seek>(
    input: &mut R,
    path: &Path,
) -> Result<mcap::records::Header, InfoError> {
    let not_mcap = |empty| InfoError::NotMcap {
        empty,
        path: path.to_path_buf(),
    };
    let read_error = |source| InfoError::Read {
        path: path.to_path_buf(),
        source,
    };
    let mut head = vec![0u8; 4096];
    let mut filled = read_up_to(input, &mut head).map_err(read_error)?;
    if filled < 8 || head[..8] != *mcap::MAGIC {
        return Err(not_mcap(filled == 0));
    }
    let empty = mcap::records::Header {
        profile: String::new(),
        library: String::new(),
    };
    if filled < 17 || head[8] != op::HEADER {
        return Ok(empty);
    }
    let body_len = u64::from_le_bytes(head[9..17].try_into().expect("8 bytes")) as usize;
    let needed = 17usize.saturating_add(body_len);
    if needed > head.len() && body_len < (1 << 20) {
        head.resize(needed, 0);
        filled += read_up_to(input, &mut head[filled..]).map_err(read_error)?;
    }
    if filled < needed {
        return Ok(empty);
    }
    match crate::parse::parse_record(op::HEADER, &head[17..needed]) {
        Ok(Record::Header(header)) => Ok(header),
        _ => Ok(empty),
    }
}

fn read_up_to<R: Read>(input: &mut R, buf: &mut [u8]) -> io::Result<usize> {
    let mut filled = 0;
    while filled < buf.len() {
        match input.read(&mut buf[filled..]) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(filled)
}

/// Bytes of the Footer record and the closing magic.
const FOOTER_AND_MAGIC: u64 = 9 + 20 + 8;
/// A summary section larger than this is not read in one piece.
const MAX_SUMMARY_READ: u64 = 256 << 20;

/// Reads the footer, then the whole summary section in one read, and parses it with the
/// `mcap` crate from memory: two seeks and two reads. `None` when there is no summary.
pub(crate) fn read_summary<R: Read + Seek>(
    input: &mut R,
    size: u64,
) -> mcap::McapResult<Option<mcap::Summary>> {
    if size < 8 + FOOTER_AND_MAGIC {
        return Ok(None);
    }
    let footer_start = size - FOOTER_AND_MAGIC;
    input.seek(SeekFrom::Start(footer_start))?;
    let mut footer = [0u8; FOOTER_AND_MAGIC as usize];
    if read_up_to(input, &mut footer)? < footer.len()
        || footer[0] != op::FOOTER
        || footer[29..] != *mcap::MAGIC
    {
        return Ok(None);
    }
    let summary_start = u64::from_le_bytes(footer[9..17].try_into().expect("8 bytes"));
    if summary_start == 0 || summary_start > footer_start || size - summary_start > MAX_SUMMARY_READ
    {
        return Ok(None);
    }
    input.seek(SeekFrom::Start(summary_start))?;
    let mut tail = vec![0u8; (size - summary_start) as usize];
    if read_up_to(input, &mut tail)? < tail.len()
        || !crate::parse::is_summary_section(&tail[..(footer_start - summary_start) as usize])
    {
        return Ok(None);
    }
    let mut window = Window {
        start: summary_start,
        bytes: tail,
        position: summary_start,
    };
    let mut reader =
        SummaryReader::new_with_options(SummaryReaderOptions::default().with_file_size(size));
    while let Some(event) = reader.next_event() {
        match event? {
            SummaryReadEvent::ReadRequest(need) => {
                let read = window.read(reader.insert(need))?;
                reader.notify_read(read);
            }
            SummaryReadEvent::SeekRequest(to) => {
                let position = window.seek(to)?;
                reader.notify_seeked(position);
            }
        }
    }
    Ok(reader.finish())
}

/// The end of a file held in memory, from `start` to the file's end.
struct Window {
    start: u64,
    bytes: Vec<u8>,
    position: u64,
}

impl Read for Window {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let Some(offset) = self.position.checked_sub(self.start) else {
            return Err(io::Error::other(
                "summary points before the summary section",
            ));
        };
        let available = self.bytes.get(offset as usize..).unwrap_or(&[]);
        let n = available.len().min(buf.len());
        buf[..n].copy_from_slice(&available[..n]);
        self.position += n as u64;
        Ok(n)
    }
}

impl Seek for Window {
    fn seek(&mut self, to: SeekFrom) -> io::Result<u64> {
        let end = self.start + self.bytes.len() as u64;
        self.position = match to {
            SeekFrom::Start(at) => at,
            SeekFrom::End(delta) => end
                .checked_add_signed(delta)
                .ok_or(io::ErrorKind::InvalidInput)?,
            SeekFrom::Current(delta) => self
                .position
                .checked_add_signed(delta)
                .ok_or(io::ErrorKind::InvalidInput)?,
        };
        Ok(self.position)
    }
}

fn fill_from_summary(
    info: &mut FileInfo,
    summary: &mcap::Summary,
    stats: &mcap::records::Statistics,
) {
    info.closed_cleanly = true;
    info.message_count = stats.message_count;
    if stats.message_count > 0 {
        info.start_time = Some(stats.message_start_time);
        info.end_time = Some(stats.message_end_time);
    }
    info.schema_count = u64::from(stats.schema_count);
    info.metadata_count = u64::from(stats.metadata_count);
    info.attachment_count = u64::from(stats.attachment_count);
    info.chunk_count = u64::from(stats.chunk_count);
    info.indexed = !summary.chunk_indexes.is_empty() || stats.message_count == 0;
    let mut channels: Vec<_> = summary.channels.values().collect();
    channels.sort_by_key(|c| c.id);
    info.channels = channels
        .into_iter()
        .map(|channel| ChannelInfo {
            id: channel.id,
            topic: channel.topic.clone(),
            message_encoding: channel.message_encoding.clone(),
            schema_name: channel.schema.as_ref().map(|s| s.name.clone()),
            schema_encoding: channel.schema.as_ref().map(|s| s.encoding.clone()),
            schema_bytes: channel.schema.as_ref().map(|s| s.data.len()),
            message_count: stats
                .channel_message_counts
                .get(&channel.id)
                .copied()
                .unwrap_or(0),
            metadata: channel.metadata.clone(),
        })
        .collect();
    let mut compression = CompressionTally::default();
    for index in &summary.chunk_indexes {
        compression.add(
            &index.compression,
            index.compressed_size,
            index.uncompressed_size,
        );
    }
    info.compression = compression.into_infos();
}

#[derive(Default)]
struct CompressionTally(BTreeMap<String, CompressionInfo>);

impl CompressionTally {
    fn add(&mut self, compression: &str, compressed: u64, uncompressed: u64) {
        let entry = self
            .0
            .entry(compression.to_string())
            .or_insert_with(|| CompressionInfo {
                compression: compression.to_string(),
                chunks: 0,
                compressed_bytes: 0,
                uncompressed_bytes: 0,
            });
        entry.chunks += 1;
        entry.compressed_bytes += compressed;
        entry.uncompressed_bytes += uncompressed;
    }

    fn into_infos(self) -> Vec<CompressionInfo> {
        self.0.into_values().collect()
    }
}

/// Counts what a scan sees.
#[derive(Default)]
struct Tally {
    /// Name, encoding and data length by schema id.
    schemas: BTreeMap<u16, (String, String, usize)>,
    channels: BTreeMap<u16, ChannelInfo>,
    messages: u64,
    time_range: Option<(u64, u64)>,
    metadata: u64,
    notes: Notes,
    attachments: u64,
    chunks: u64,
    compression: CompressionTally,
}

impl Tally {
    fn fill(self, info: &mut FileInfo) {
        info.message_count = self.messages;
        info.start_time = self.time_range.map(|(start, _)| start);
        info.end_time = self.time_range.map(|(_, end)| end);
        info.schema_count = self.schemas.len() as u64;
        info.channels = self.channels.into_values().collect();
        info.metadata_count = self.metadata;
        info.markers = self.notes.markers;
        info.triggers = self.notes.triggers;
        info.incident = self.notes.incident;
        info.health = self.notes.health;
        info.parameters = self.notes.parameters;
        info.attachment_count = self.attachments;
        info.chunk_count = self.chunks;
        info.compression = self.compression.into_infos();
    }
}

impl RecordSink for Tally {
    type Error = std::convert::Infallible;

    fn record(&mut self, record: Record<'_>) -> Result<(), Self::Error> {
        match record {
            Record::Schema { header, data } => {
                self.schemas
                    .insert(header.id, (header.name, header.encoding, data.len()));
            }
            Record::Channel(channel) => {
                let schema = self.schemas.get(&channel.schema_id);
                self.channels.entry(channel.id).or_insert(ChannelInfo {
                    id: channel.id,
                    topic: channel.topic,
                    message_encoding: channel.message_encoding,
                    schema_name: schema.map(|s| s.0.clone()),
                    schema_encoding: schema.map(|s| s.1.clone()),
                    schema_bytes: schema.map(|s| s.2),
                    message_count: 0,
                    metadata: channel.metadata,
                });
            }
            Record::Message { header, .. } => {
                self.messages += 1;
                if let Some(channel) = self.channels.get_mut(&header.channel_id) {
                    channel.message_count += 1;
                }
                let t = header.log_time;
                self.time_range = Some(match self.time_range {
                    None => (t, t),
                    Some((start, end)) => (start.min(t), end.max(t)),
                });
            }
            Record::Metadata(metadata) => {
                self.metadata += 1;
                self.notes.add(&metadata.name, &metadata.metadata);
            }
            Record::Attachment { .. } => self.attachments += 1,
            _ => {}
        }
        Ok(())
    }

    fn chunk(&mut self, compression: &str, compressed: u64, uncompressed: u64) {
        self.chunks += 1;
        self.compression.add(compression, compressed, uncompressed);
    }
}
