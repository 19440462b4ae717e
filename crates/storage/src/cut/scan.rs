//! Reads an input without chunk indexes (streamed, closed or still being recorded, or cut
//! short by a crash) from its start with the recovery reader, up to its last complete
//! record, reading of each record only its header unless the cut needs its body: the
//! schemas and channels, the window's messages, each latched channel's last message
//! before the window (read once it is known to be the last), and the marker and health
//! records (found by the summary's metadata indexes where the file has a summary). It
//! stops at the first message past the window by more than [`REORDER_MARGIN_NS`].

use std::collections::{HashMap, HashSet};
use std::io;
use std::sync::Arc;

use mcap::records::{op, MessageHeader, Record};

use super::indexed::read_notes;
use super::jump::{bounds_closed, bounds_growing, Bounds, Jump};
use super::paged::Paged;
use super::pread::Pread;
use super::source::{Batch, ChannelDef, Context, Event, Events, Latched, Notes, SchemaDef};
use crate::checkpoints::Growing;
use crate::latched::is_latched;
use crate::recover::{self, Damage, RecordSink, RecoverError, Source, MESSAGE_HEADER_BYTES};

/// A batch is handed to the merge once its messages hold this many bytes.
const BATCH_BYTES: usize = 4 << 20;
/// The pace hook hears of the bytes read in steps of this many.
const PACE_STEP: u64 = 1 << 20;
/// How far a message's log time may lie past the window's end with a message of the
/// window still to come after it in the file. recd writes a file in the order its receive
/// threads received (log time is the time of receipt), so log times rise within a file
/// but for messages of two threads passing each other on the way to the writer, which is
/// milliseconds; 10 s leaves room for a thread held up by a stalled disk or an overloaded
/// host too.
pub(super) const REORDER_MARGIN_NS: u64 = 10_000_000_000;

/// Where a scan takes over from a reader that followed the index part of the way.
#[derive(Debug, Default)]
pub(super) struct Resume {
    /// The merge has the input's latched messages.
    pub ready_sent: bool,
    /// Chunks (by offset) whose messages the merge has.
    pub skip_chunks: HashSet<u64>,
}

/// Why a scan could not run.
pub(super) enum ScanError {
    NotMcap,
    Read(io::Error),
}

/// What a scan knows of its input before it reads a record.
pub(super) struct Known<'k> {
    /// The input's profile (its Header's).
    pub profile: String,
    /// Its summary, if it has one (a closed file).
    pub summary: Option<&'k mcap::Summary>,
    /// Its writer's checkpoints, if it is being written in this process.
    pub growing: Option<&'k Growing>,
}

/// Scans `input` (of `size` bytes) and sends what it holds; gives back its markers and
/// expectations, and where its records ended early if the scan read that far.
pub(super) fn scan(
    input: &Pread<'_>,
    size: u64,
    known: Known<'_>,
    resume: Resume,
    ctx: Context<'_>,
    events: &Events,
) -> Result<(Notes, Option<Damage>), ScanError> {
    let Known {
        profile,
        summary,
        growing,
    } = known;
    let notes = match summary {
        Some(summary) => read_notes(input, size, summary, ctx).map_err(ScanError::Read)?,
        None => Notes::default(),
    };
    let mut sink = Sink {
        ctx,
        events,
        input,
        profile,
        ready_sent: resume.ready_sent,
        skip_chunks: resume.skip_chunks,
        notes_read: summary.is_some(),
        offset: 0,
        paced_to: input.bytes_read(),
        stop_at: None,
        schemas: HashMap::new(),
        channels: HashMap::new(),
        left_out: HashSet::new(),
        latched: HashMap::new(),
        batch: Batch::default(),
        notes,
    };
    let bounds = match (summary, growing) {
        (Some(summary), _) => bounds_closed(input, size, summary, &sink.profile, ctx.window),
        (None, Some(growing)) => bounds_growing(
            input,
            size,
            growing,
            &sink.profile,
            ctx.window,
            REORDER_MARGIN_NS,
        ),
        (None, None) => Bounds::default(),
    };
    sink.stop_at = bounds.stop;
    let mut paged = Paged::new(input, size);
    let recovered = match &bounds.start {
        Some(jump) => sink
            .start_at(jump)
            .and_then(|()| {
                Source::skip(&mut paged, jump.offset as usize).map_err(RecoverError::Read)
            })
            .and_then(|()| {
                recover::recover_resumed(paged, size, jump.offset, &jump.known(), &mut sink)
            }),
        None => recover::recover_from(paged, size, &mut sink),
    };
    let damage = match recovered {
        Ok(recovery) => recovery.damage,
        Err(RecoverError::NotMcap) => return Err(ScanError::NotMcap),
        Err(RecoverError::Read(error) | RecoverError::Sink(Stop::Read(error))) => {
            return Err(ScanError::Read(error))
        }
        Err(RecoverError::Sink(Stop::Stopped)) => return Ok((sink.notes, None)),
        Err(RecoverError::Sink(Stop::Past)) => None,
    };
    if let Err(Stop::Read(error)) = sink.ready().and_then(|()| sink.flush()) {
        return Err(ScanError::Read(error));
    }
    sink.ctx.paced(input.bytes_read() - sink.paced_to);
    Ok((sink.notes, damage))
}

/// Why a scan stopped before the input's end.
enum Stop {
    /// The merge stopped, or the cut was cancelled.
    Stopped,
    /// A message lies past the window by more than [`REORDER_MARGIN_NS`], or the scan
    /// reached the checkpoint after which none lies in the window: none after it is in
    /// the window.
    Past,
    /// Reading a latched message's data failed.
    Read(io::Error),
}

struct Sink<'a, 'f> {
    ctx: Context<'a>,
    events: &'a Events,
    input: &'a Pread<'f>,
    profile: String,
    ready_sent: bool,
    skip_chunks: HashSet<u64>,
    /// The marker and health records were read through the summary.
    notes_read: bool,
    /// The offset of the record being read (a chunk's, for the records inside it).
    offset: u64,
    /// The input's bytes read that the pace hook heard of.
    paced_to: u64,
    /// Where no message of the window follows, if the input's checkpoints say.
    stop_at: Option<u64>,
    schemas: HashMap<u16, Arc<SchemaDef>>,
    /// Each channel kept, and whether it is latched.
    channels: HashMap<u16, (Arc<ChannelDef>, bool)>,
    /// The channels of topics the cut leaves out: their messages are passed over.
    left_out: HashSet<u16>,
    /// Each latched channel's last message before the window so far, and where its data
    /// lies while it is not read (its data is empty meanwhile).
    latched: HashMap<u16, (Latched, Option<(u64, u64)>)>,
    batch: Batch,
    notes: Notes,
}

/// A latched message's data: read, or where it lies in the input.
enum Data<'d> {
    Read(&'d [u8]),
    At(u64, u64),
}

impl Sink<'_, '_> {
    /// Hands the merge the latched messages, once, before the first batch: those whose
    /// data is not read yet are read now.
    fn ready(&mut self) -> Result<(), Stop> {
        if self.ready_sent {
            return Ok(());
        }
        self.ready_sent = true;
        let mut latched = Vec::with_capacity(self.latched.len());
        for (mut message, unread) in std::mem::take(&mut self.latched).into_values() {
            if let Some((offset, len)) = unread {
                message.data = self.input.read_range(offset, len).map_err(Stop::Read)?;
            }
            latched.push(message);
        }
        let ready = Event::Ready {
            profile: self.profile.clone(),
            latched,
        };
        self.events.send(ready).map_err(|_| Stop::Stopped)
    }

    fn flush(&mut self) -> Result<(), Stop> {
        if self.batch.messages.is_empty() && self.batch.channels.is_empty() {
            return Ok(());
        }
        let mut batch = std::mem::take(&mut self.batch);
        batch.sort();
        self.events
            .send(Event::Batch(batch))
            .map_err(|_| Stop::Stopped)
    }

    /// Takes what lies before `jump`: the schemas, the channels and the latched messages.
    fn start_at(&mut self, jump: &Jump<'_>) -> Result<(), RecoverError<Stop>> {
        for record in jump.known().into_iter().skip(1) {
            self.record(record).map_err(RecoverError::Sink)?;
        }
        for (header, data) in &jump.latched {
            self.latched(header, Data::At(data.offset, data.len));
        }
        Ok(())
    }

    /// Stops the scan at a message too far past the window for one of it to follow.
    fn past(&self, log_time: u64) -> Result<(), Stop> {
        if log_time > self.ctx.window.end_ns.saturating_add(REORDER_MARGIN_NS) {
            return Err(Stop::Past);
        }
        Ok(())
    }

    /// Keeps a message before the window of a latched channel if it is the channel's
    /// latest so far.
    fn latched(&mut self, header: &MessageHeader, data: Data<'_>) {
        // After the merge has the latched messages, a late one can no longer go first.
        if self.ready_sent {
            return;
        }
        let Some((channel, true)) = self.channels.get(&header.channel_id) else {
            return;
        };
        let newer = self
            .latched
            .get(&header.channel_id)
            .is_none_or(|(known, _)| header.log_time >= known.log_time);
        if !newer {
            return;
        }
        let (data, unread) = match data {
            Data::Read(data) => (data.to_vec(), None),
            Data::At(offset, len) => (Vec::new(), Some((offset, len))),
        };
        let latched = Latched {
            channel: Arc::clone(channel),
            sequence: header.sequence,
            log_time: header.log_time,
            publish_time: header.publish_time,
            data,
        };
        self.latched.insert(header.channel_id, (latched, unread));
    }

    fn message(&mut self, header: MessageHeader, data: &[u8]) -> Result<(), Stop> {
        self.past(header.log_time)?;
        if !self.channels.contains_key(&header.channel_id) {
            return Ok(());
        }
        if header.log_time < self.ctx.window.start_ns {
            self.latched(&header, Data::Read(data));
            return Ok(());
        }
        if !self.ctx.holds(header.log_time) {
            return Ok(());
        }
        self.ready()?;
        self.batch.push(&header, data);
        if self.batch.bytes.len() >= BATCH_BYTES {
            self.flush()?;
        }
        Ok(())
    }
}

impl RecordSink for Sink<'_, '_> {
    type Error = Stop;

    fn record(&mut self, record: Record<'_>) -> Result<(), Stop> {
        match record {
            Record::Schema { header, data } => {
                let schema = SchemaDef {
                    name: header.name,
                    encoding: header.encoding,
                    data: data.into_owned(),
                };
                self.schemas.insert(header.id, Arc::new(schema));
            }
            Record::Channel(channel) => {
                if self.channels.contains_key(&channel.id) || self.left_out.contains(&channel.id) {
                    return Ok(());
                }
                let latched = is_latched(&channel.metadata);
                let def = Arc::new(ChannelDef {
                    schema: self.schemas.get(&channel.schema_id).cloned(),
                    topic: channel.topic,
                    message_encoding: channel.message_encoding,
                    metadata: channel.metadata,
                });
                if !self.ctx.keeps(&def) {
                    self.left_out.insert(channel.id);
                    return Ok(());
                }
                self.batch.channels.push((channel.id, Arc::clone(&def)));
                self.channels.insert(channel.id, (def, latched));
            }
            Record::Message { header, data } if !self.skip_chunks.contains(&self.offset) => {
                self.message(header, &data)?;
            }
            Record::Metadata(metadata) => self.notes.add(metadata, self.ctx.window),
            _ => {}
        }
        Ok(())
    }

    fn progress(&mut self, offset: u64) -> Result<(), Stop> {
        if self.ctx.stopped() {
            return Err(Stop::Stopped);
        }
        if self.stop_at.is_some_and(|stop| offset >= stop) {
            return Err(Stop::Past);
        }
        self.offset = offset;
        let read = self.input.bytes_read();
        if read - self.paced_to >= PACE_STEP {
            self.ctx.paced(read - self.paced_to);
            self.paced_to = read;
        }
        Ok(())
    }

    // Only a scan that checks no data section CRC may pass over what it does not need;
    // the chunks it reads are still checked.
    fn checks_crc(&self) -> bool {
        false
    }

    fn checks_chunk_crc(&self) -> bool {
        true
    }

    fn wants(&self, opcode: u8) -> bool {
        opcode == op::METADATA && !self.notes_read
    }

    fn wants_message(&mut self, header: &MessageHeader, len: u64) -> Result<bool, Stop> {
        self.past(header.log_time)?;
        if !self.channels.contains_key(&header.channel_id) {
            return Ok(false);
        }
        if header.log_time < self.ctx.window.start_ns {
            let data_at = self.offset + 9 + MESSAGE_HEADER_BYTES;
            self.latched(header, Data::At(data_at, len));
            return Ok(false);
        }
        Ok(self.ctx.holds(header.log_time))
    }
}
