//! Reads an MCAP file from its start, record by record, keeping every complete and
//! consistent record and stopping cleanly at the first truncated or corrupt one.
//!
//! This is what `rec reindex` and `rec info` (on a file a crash left open) stand on. It
//! frames records itself so that it knows the offset of every one, and parses their bodies
//! and decompresses chunks with the `mcap` crate.

use std::borrow::Cow;
use std::collections::HashMap;
use std::io::{self, BufReader, Read};

use mcap::records::{op, MessageHeader, Record};

/// The most bytes a record may claim: reading one takes a buffer of its size. A recorded
/// message is far smaller (a 4K camera frame is 25 MB); a larger claim is damage.
pub(crate) const MAX_RECORD_BYTES: u64 = crate::chunk::MAX_CHUNK_BYTES;
/// A Message record's fixed header: channel id, sequence, log time and publish time.
pub(crate) const MESSAGE_HEADER_BYTES: u64 = 22;

/// Where and why reading stopped before the end of a file's data.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Damage {
    /// File offset of the first byte that could not be used.
    pub offset: u64,
    /// What was wrong there.
    pub reason: String,
}

/// What a recovery pass found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Recovery {
    /// The data section ended with a DataEnd record (the file was closed).
    pub data_end_reached: bool,
    /// Where reading stopped early, if it did.
    pub damage: Option<Damage>,
    /// Bytes from the damage to the end of the file.
    pub unusable_bytes: u64,
    /// The DataEnd record's CRC did not match the data section.
    pub crc_mismatch: bool,
    /// Private records (opcode ≥ 0x80), which are passed over.
    pub skipped_private_records: u64,
}

/// Receives what a recovery pass reads.
pub(crate) trait RecordSink {
    /// What makes the pass stop (a failed write, an interruption).
    type Error;
    /// A complete, consistent Header, Schema, Channel, Message, Metadata or Attachment
    /// record, in file order, chunk contents flattened.
    fn record(&mut self, record: Record<'_>) -> Result<(), Self::Error>;
    /// A chunk whose contents were all handed to [`Self::record`].
    fn chunk(&mut self, _compression: &str, _compressed: u64, _uncompressed: u64) {}
    /// Reading reached `offset`; called once per record.
    fn progress(&mut self, _offset: u64) -> Result<(), Self::Error> {
        Ok(())
    }
    /// Whether the pass checks the data section's CRC ([`Recovery::crc_mismatch`]) and
    /// each chunk's; a pass that only reads the messages skips the cost. A pass that
    /// checks it reads every byte; one that does not reads only the records it hands on
    /// (and the headers of the others).
    fn checks_crc(&self) -> bool {
        true
    }
    /// Whether the pass checks each chunk's CRC; as [`Self::checks_crc`] says unless the
    /// sink says otherwise.
    fn checks_chunk_crc(&self) -> bool {
        self.checks_crc()
    }
    /// Whether the sink wants the Metadata or Attachment records (`opcode`); a record it
    /// does not want is passed over unread where the pass checks no CRC.
    fn wants(&self, _opcode: u8) -> bool {
        true
    }
    /// Whether the sink wants the Message outside a chunk whose header this is, with
    /// `len` bytes of data; asked only where the pass checks no CRC. A message not
    /// wanted is passed over: its data is not read nor handed to [`Self::record`].
    fn wants_message(&mut self, _header: &MessageHeader, _len: u64) -> Result<bool, Self::Error> {
        Ok(true)
    }
}

/// Why a recovery pass could not run to its end.
#[derive(Debug)]
pub(crate) enum RecoverError<E> {
    /// The input does not start with the MCAP magic.
    NotMcap,
    /// Reading the input failed.
    Read(io::Error),
    /// The sink stopped the pass.
    Sink(E),
}

/// Keeps track of the schemas and channels seen, so that records referring to missing or
/// contradicting ones are recognised as damage.
#[derive(Default, Clone)]
struct Consistency {
    schemas: HashMap<u16, (String, String, Vec<u8>)>,
    channels: HashMap<u16, mcap::records::Channel>,
    header_seen: bool,
}

impl Consistency {
    fn check(&mut self, record: &Record<'_>) -> Result<(), String> {
        if !self.header_seen {
            return match record {
                Record::Header(_) => {
                    self.header_seen = true;
                    Ok(())
                }
                _ => Err("the file does not begin with a Header record".into()),
            };
        }
        match record {
            Record::Header(_) => Err("a second Header record".into()),
            Record::Schema { header, data } => {
                if header.id == 0 {
                    return Err("a Schema record with id 0".into());
                }
                let content = (header.name.clone(), header.encoding.clone(), data.to_vec());
                match self.schemas.get(&header.id) {
                    Some(known) if *known != content => {
                        Err(format!("schema {} redefined differently", header.id))
                    }
                    Some(_) => Ok(()),
                    None => {
                        self.schemas.insert(header.id, content);
                        Ok(())
                    }
                }
            }
            Record::Channel(channel) => {
                if channel.schema_id != 0 && !self.schemas.contains_key(&channel.schema_id) {
                    return Err(format!(
                        "channel {} refers to unknown schema {}",
                        channel.id, channel.schema_id
                    ));
                }
                match self.channels.get(&channel.id) {
                    Some(known) if known != channel => {
                        Err(format!("channel {} redefined differently", channel.id))
                    }
                    Some(_) => Ok(()),
                    None => {
                        self.channels.insert(channel.id, channel.clone());
                        Ok(())
                    }
                }
            }
            Record::Message { header, .. } if !self.channels.contains_key(&header.channel_id) => {
                Err(format!(
                    "a message for unknown channel {}",
                    header.channel_id
                ))
            }
            _ => Ok(()),
        }
    }
}

/// Whether `opcode` is one a record may have: MCAP's, or a private one.
pub(crate) fn opcode_is_valid(opcode: u8) -> bool {
    (op::HEADER..=op::DATA_END).contains(&opcode) || opcode >= 0x80
}

fn record_name(opcode: u8) -> String {
    match opcode {
        op::HEADER => "Header".into(),
        op::FOOTER => "Footer".into(),
        op::SCHEMA => "Schema".into(),
        op::CHANNEL => "Channel".into(),
        op::MESSAGE => "Message".into(),
        op::CHUNK => "Chunk".into(),
        op::MESSAGE_INDEX => "MessageIndex".into(),
        op::CHUNK_INDEX => "ChunkIndex".into(),
        op::ATTACHMENT => "Attachment".into(),
        op::ATTACHMENT_INDEX => "AttachmentIndex".into(),
        op::STATISTICS => "Statistics".into(),
        op::METADATA => "Metadata".into(),
        op::METADATA_INDEX => "MetadataIndex".into(),
        op::SUMMARY_OFFSET => "SummaryOffset".into(),
        op::DATA_END => "DataEnd".into(),
        other => format!("private record 0x{other:02x}"),
    }
}

/// Where a recovery pass takes the file's bytes from, in order.
pub(crate) trait Source {
    /// The next `len` bytes; `UnexpectedEof` when the file has fewer.
    fn take(&mut self, len: usize) -> io::Result<&[u8]>;
    /// Passes over the next `len` bytes, which the file holds (the pass checked).
    fn skip(&mut self, len: usize) -> io::Result<()> {
        self.take(len).map(|_| ())
    }
}

/// A file read through a buffer.
struct Buffered<R> {
    input: BufReader<R>,
    /// Grown to the largest record and never shrunk, so that a large record after small
    /// ones is not zero-filled again.
    buffer: Vec<u8>,
}

impl<R: Read> Source for Buffered<R> {
    fn take(&mut self, len: usize) -> io::Result<&[u8]> {
        if self.buffer.len() < len {
            self.buffer.resize(len, 0);
        }
        self.input.read_exact(&mut self.buffer[..len])?;
        Ok(&self.buffer[..len])
    }
}

/// A file in memory (mapped): its records are handed on where they lie, not copied.
struct InMemory<'a> {
    data: &'a [u8],
    at: usize,
}

impl Source for InMemory<'_> {
    fn take(&mut self, len: usize) -> io::Result<&[u8]> {
        let end = self
            .at
            .checked_add(len)
            .filter(|&end| end <= self.data.len())
            .ok_or_else(|| io::Error::from(io::ErrorKind::UnexpectedEof))?;
        let taken = &self.data[self.at..end];
        self.at = end;
        Ok(taken)
    }
}

/// Reads `input` (of `file_len` bytes) from its first byte and hands every complete,
/// consistent record of the data section to `sink`.
pub(crate) fn recover<R: Read, S: RecordSink>(
    input: R,
    file_len: u64,
    sink: &mut S,
) -> Result<Recovery, RecoverError<S::Error>> {
    let input = Buffered {
        input: BufReader::with_capacity(1 << 20, input),
        buffer: Vec::new(),
    };
    recover_from(input, file_len, sink)
}

/// [`recover`] of a file in memory: the records `sink` gets lie in `data`.
pub(crate) fn recover_in_memory<S: RecordSink>(
    data: &[u8],
    sink: &mut S,
) -> Result<Recovery, RecoverError<S::Error>> {
    recover_from(InMemory { data, at: 0 }, data.len() as u64, sink)
}

/// [`recover`] of the bytes `input` gives (`file_len` of them), read as it reads them.
pub(crate) fn recover_from<S: RecordSink>(
    mut input: impl Source,
    file_len: u64,
    sink: &mut S,
) -> Result<Recovery, RecoverError<S::Error>> {
    match input.take(8) {
        Ok(magic) if magic == mcap::MAGIC => {}
        Ok(_) => return Err(RecoverError::NotMcap),
        Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => return Err(RecoverError::NotMcap),
        Err(e) => return Err(RecoverError::Read(e)),
    }
    let mut crc = crc32fast::Hasher::new();
    crc.update(mcap::MAGIC);
    let start = mcap::MAGIC.len() as u64;
    walk(input, file_len, start, Consistency::default(), crc, sink)
}

/// [`recover_from`] of a streamed file's records from `start`, a record boundary, on:
/// `input` has passed over the bytes before it, and `known` are the Header, Schema and
/// Channel records that lie before it (the sink has them already). A sink that checks
/// the data section's CRC cannot start there.
pub(crate) fn recover_resumed<S: RecordSink>(
    input: impl Source,
    file_len: u64,
    start: u64,
    known: &[Record<'_>],
    sink: &mut S,
) -> Result<Recovery, RecoverError<S::Error>> {
    debug_assert!(!sink.checks_crc(), "the CRC covers the bytes passed over");
    let mut consistency = Consistency::default();
    for record in known {
        if let Err(reason) = consistency.check(record) {
            return Ok(Recovery {
                damage: Some(Damage {
                    offset: start,
                    reason,
                }),
                ..Recovery::default()
            });
        }
    }
    walk(
        input,
        file_len,
        start,
        consistency,
        crc32fast::Hasher::new(),
        sink,
    )
}

/// Reads records from `offset` to the end of the data section or the first damage.
fn walk<S: RecordSink>(
    mut input: impl Source,
    file_len: u64,
    mut offset: u64,
    mut consistency: Consistency,
    mut crc: crc32fast::Hasher,
    sink: &mut S,
) -> Result<Recovery, RecoverError<S::Error>> {
    let checks_crc = sink.checks_crc();
    let checks_chunk_crc = sink.checks_chunk_crc();
    let mut recovery = Recovery::default();

    let damage = loop {
        sink.progress(offset).map_err(RecoverError::Sink)?;
        let remaining = file_len - offset;
        if remaining == 0 {
            break None;
        }
        if remaining < 9 {
            break Some(format!(
                "the file ends {remaining} bytes into a record's header"
            ));
        }
        let prefix: [u8; 9] = take(&mut input, 9)?.try_into().expect("9 bytes");
        let opcode = prefix[0];
        let len = u64::from_le_bytes(prefix[1..].try_into().expect("8 bytes"));
        if !opcode_is_valid(opcode) {
            break Some(format!("invalid record opcode 0x{opcode:02x}"));
        }
        if len > MAX_RECORD_BYTES {
            break Some(format!(
                "{} record of {len} bytes, more than a record may hold ({MAX_RECORD_BYTES})",
                record_name(opcode)
            ));
        }
        if len > remaining - 9 {
            break Some(format!(
                "{} record of {len} bytes, but the file ends after {} more bytes",
                record_name(opcode),
                remaining - 9
            ));
        }
        if !checks_crc {
            let passed = match opcode {
                op::MESSAGE => Some(pass_message(&mut input, len, &mut consistency, sink)?),
                op::METADATA | op::ATTACHMENT if !sink.wants(opcode) => {
                    Some(skip(&mut input, len)?)
                }
                op::MESSAGE_INDEX
                | op::CHUNK_INDEX
                | op::ATTACHMENT_INDEX
                | op::METADATA_INDEX
                | op::STATISTICS
                | op::SUMMARY_OFFSET => Some(skip(&mut input, len)?),
                private if private >= 0x80 => {
                    recovery.skipped_private_records += 1;
                    Some(skip(&mut input, len)?)
                }
                _ => None,
            };
            match passed {
                Some(Ok(())) => {
                    offset += 9 + len;
                    continue;
                }
                Some(Err(reason)) => break Some(reason),
                None => {}
            }
        }
        let body = take(&mut input, len as usize)?;

        match opcode {
            op::DATA_END => {
                recovery.data_end_reached = true;
                if let Ok(Record::DataEnd(end)) = crate::parse::parse_record(opcode, body) {
                    recovery.crc_mismatch = checks_crc
                        && end.data_section_crc != 0
                        && end.data_section_crc != crc.finalize();
                }
                break None;
            }
            op::FOOTER => break None,
            op::MESSAGE_INDEX
            | op::CHUNK_INDEX
            | op::ATTACHMENT_INDEX
            | op::METADATA_INDEX
            | op::STATISTICS
            | op::SUMMARY_OFFSET => {}
            op::CHUNK => {
                if let Err(reason) = forward_chunk(body, checks_chunk_crc, &mut consistency, sink)?
                {
                    break Some(reason);
                }
            }
            private if private >= 0x80 => recovery.skipped_private_records += 1,
            _ => {
                let record = match crate::parse::parse_record(opcode, body) {
                    Ok(record) => record,
                    Err(e) => {
                        break Some(format!("unreadable {} record: {e}", record_name(opcode)))
                    }
                };
                if let Err(reason) = consistency.check(&record) {
                    break Some(reason);
                }
                sink.record(record).map_err(RecoverError::Sink)?;
            }
        }
        if checks_crc {
            crc.update(&prefix);
            crc.update(body);
        }
        offset += 9 + len;
    };
    if let Some(reason) = damage {
        recovery.unusable_bytes = file_len - offset;
        recovery.damage = Some(Damage { offset, reason });
    }
    Ok(recovery)
}

/// Decompresses a chunk and hands its records to `sink`, but only once the whole chunk
/// proved intact (its CRC too, where the sink checks CRCs). The inner `Err` names the damage.
fn forward_chunk<S: RecordSink>(
    body: &[u8],
    checks_crc: bool,
    consistency: &mut Consistency,
    sink: &mut S,
) -> Result<Result<(), String>, RecoverError<S::Error>> {
    let (header, data) = match crate::parse::parse_record(op::CHUNK, body) {
        Ok(Record::Chunk { header, data }) => (header, data),
        Ok(_) => unreachable!("parse_record returns the record of the opcode it is given"),
        Err(e) => return Ok(Err(format!("unreadable Chunk record: {e}"))),
    };
    let compressed = data.len() as u64;
    let content = match crate::chunk::decompress(
        &header.compression,
        &data,
        header.uncompressed_size,
        if checks_crc {
            header.uncompressed_crc
        } else {
            0
        },
    ) {
        Ok(content) => content,
        Err(reason) => return Ok(Err(reason)),
    };
    // An uncompressed chunk's records borrow the input: a mapped file's messages stay
    // views of the mapping.
    let inner = match crate::chunk::records(&content) {
        Ok(records) => records,
        Err(reason) => return Ok(Err(reason)),
    };
    // Check the whole chunk before forwarding any of it, so nothing is half-taken.
    let mut checked = consistency.clone();
    for record in &inner {
        if let Err(reason) = checked.check(record) {
            return Ok(Err(format!("in a chunk: {reason}")));
        }
    }
    *consistency = checked;
    for record in inner {
        sink.record(record).map_err(RecoverError::Sink)?;
    }
    sink.chunk(&header.compression, compressed, header.uncompressed_size);
    Ok(Ok(()))
}

/// The header at the start of a Message record's body.
pub(crate) fn message_header(head: &[u8; MESSAGE_HEADER_BYTES as usize]) -> MessageHeader {
    let u64_at = |at: usize| u64::from_le_bytes(head[at..at + 8].try_into().expect("8 bytes"));
    MessageHeader {
        channel_id: u16::from_le_bytes([head[0], head[1]]),
        sequence: u32::from_le_bytes(head[2..6].try_into().expect("4 bytes")),
        log_time: u64_at(6),
        publish_time: u64_at(14),
    }
}

/// Reads a Message record's header, and its data only where `sink` wants it; passes
/// over the rest of the record (`len` bytes after its opcode and length). The inner `Err`
/// names the damage.
fn pass_message<S: RecordSink>(
    input: &mut impl Source,
    len: u64,
    consistency: &mut Consistency,
    sink: &mut S,
) -> Result<Result<(), String>, RecoverError<S::Error>> {
    const HEADER: u64 = MESSAGE_HEADER_BYTES;
    if len < HEADER {
        return Ok(Err(format!(
            "unreadable Message record: {len} bytes, fewer than its header's {HEADER}"
        )));
    }
    let head = take(input, HEADER as usize)?;
    let header = message_header(head.try_into().expect("a message header's bytes"));
    let unread = Record::Message {
        header,
        data: Cow::Borrowed(&[]),
    };
    if let Err(reason) = consistency.check(&unread) {
        return Ok(Err(reason));
    }
    let data_len = (len - HEADER) as usize;
    if !sink
        .wants_message(&header, len - HEADER)
        .map_err(RecoverError::Sink)?
    {
        input.skip(data_len).map_err(RecoverError::Read)?;
        return Ok(Ok(()));
    }
    let data = take(input, data_len)?;
    let record = Record::Message {
        header,
        data: Cow::Borrowed(data),
    };
    sink.record(record).map_err(RecoverError::Sink)?;
    Ok(Ok(()))
}

/// Passes over the `len` bytes of a record's body; never damage.
fn skip<E>(input: &mut impl Source, len: u64) -> Result<Result<(), String>, RecoverError<E>> {
    input.skip(len as usize).map(Ok).map_err(RecoverError::Read)
}

fn take<E>(input: &mut impl Source, len: usize) -> Result<&[u8], RecoverError<E>> {
    input.take(len).map_err(RecoverError::Read)
}
