//! Reads an input without chunk indexes (streamed, closed or still being recorded, or cut
//! short by a crash) from its start with the recovery reader, up to its last complete
//! record: the window's messages, each latched channel's last message before the
//! window, and the marker and health records.

use std::collections::{HashMap, HashSet};
use std::io::{self, Seek, SeekFrom};
use std::sync::Arc;

use mcap::records::Record;

use super::latched::is_latched;
use super::pread::Pread;
use super::source::{Batch, ChannelDef, Context, Event, Events, Latched, Notes, SchemaDef};
use crate::recover::{self, Damage, RecordSink, RecoverError};

/// A batch is handed to the merge once its messages hold this many bytes.
const BATCH_BYTES: usize = 4 << 20;
/// The pace hook hears of the bytes scanned in steps of this many.
const PACE_STEP: u64 = 1 << 20;

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

/// Scans `input` (of `size` bytes) and sends what it holds; gives back its markers and
/// expectations, and where its records ended early.
pub(super) fn scan(
    input: &mut Pread<'_>,
    size: u64,
    profile: String,
    resume: Resume,
    ctx: Context<'_>,
    events: &Events,
) -> Result<(Notes, Option<Damage>), ScanError> {
    input.seek(SeekFrom::Start(0)).map_err(ScanError::Read)?;
    let mut sink = Sink {
        ctx,
        events,
        profile,
        ready_sent: resume.ready_sent,
        skip_chunks: resume.skip_chunks,
        offset: 0,
        paced_to: 0,
        schemas: HashMap::new(),
        channels: HashMap::new(),
        latched: HashMap::new(),
        batch: Batch::default(),
        notes: Notes::default(),
    };
    let damage = match recover::recover(&mut *input, size, &mut sink) {
        Ok(recovery) => recovery.damage,
        Err(RecoverError::NotMcap) => return Err(ScanError::NotMcap),
        Err(RecoverError::Read(error)) => return Err(ScanError::Read(error)),
        Err(RecoverError::Sink(Stopped)) => return Ok((sink.notes, None)),
    };
    let _ = sink.ready().and_then(|()| sink.flush());
    sink.ctx.paced(size.saturating_sub(sink.paced_to));
    Ok((sink.notes, damage))
}

/// The merge stopped, or the cut was cancelled.
struct Stopped;

struct Sink<'a> {
    ctx: Context<'a>,
    events: &'a Events,
    profile: String,
    ready_sent: bool,
    skip_chunks: HashSet<u64>,
    /// The offset of the record being read (a chunk's, for the records inside it).
    offset: u64,
    paced_to: u64,
    schemas: HashMap<u16, Arc<SchemaDef>>,
    /// Each channel, and whether it is latched.
    channels: HashMap<u16, (Arc<ChannelDef>, bool)>,
    /// Each latched channel's last message before the window so far.
    latched: HashMap<u16, Latched>,
    batch: Batch,
    notes: Notes,
}

impl Sink<'_> {
    /// Hands the merge the latched messages, once, before the first batch.
    fn ready(&mut self) -> Result<(), Stopped> {
        if self.ready_sent {
            return Ok(());
        }
        self.ready_sent = true;
        let latched = std::mem::take(&mut self.latched).into_values().collect();
        let ready = Event::Ready {
            profile: self.profile.clone(),
            latched,
        };
        self.events.send(ready).map_err(|_| Stopped)
    }

    fn flush(&mut self) -> Result<(), Stopped> {
        if self.batch.messages.is_empty() && self.batch.channels.is_empty() {
            return Ok(());
        }
        let mut batch = std::mem::take(&mut self.batch);
        batch.sort();
        self.events.send(Event::Batch(batch)).map_err(|_| Stopped)
    }

    fn message(
        &mut self,
        header: mcap::records::MessageHeader,
        data: &[u8],
    ) -> Result<(), Stopped> {
        let Some((channel, latched)) = self.channels.get(&header.channel_id) else {
            return Ok(());
        };
        if header.log_time < self.ctx.window.start_ns {
            // After the merge has the latched messages, a late one can no longer go first.
            if *latched && !self.ready_sent {
                let newer = self
                    .latched
                    .get(&header.channel_id)
                    .is_none_or(|known| header.log_time >= known.log_time);
                if newer {
                    let latched = Latched {
                        channel: Arc::clone(channel),
                        sequence: header.sequence,
                        log_time: header.log_time,
                        publish_time: header.publish_time,
                        data: data.to_vec(),
                    };
                    self.latched.insert(header.channel_id, latched);
                }
            }
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

impl RecordSink for Sink<'_> {
    type Error = Stopped;

    fn record(&mut self, record: Record<'_>) -> Result<(), Stopped> {
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
                if self.channels.contains_key(&channel.id) {
                    return Ok(());
                }
                let latched = is_latched(&channel.metadata);
                let def = Arc::new(ChannelDef {
                    schema: self.schemas.get(&channel.schema_id).cloned(),
                    topic: channel.topic,
                    message_encoding: channel.message_encoding,
                    metadata: channel.metadata,
                });
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

    fn progress(&mut self, offset: u64) -> Result<(), Stopped> {
        if self.ctx.stopped() {
            return Err(Stopped);
        }
        self.offset = offset;
        if offset - self.paced_to >= PACE_STEP {
            self.ctx.paced(offset - self.paced_to);
            self.paced_to = offset;
        }
        Ok(())
    }
}
