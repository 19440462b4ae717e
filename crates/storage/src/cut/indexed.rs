//! Reads a finished input (chunked, with chunk and message indexes) through its summary:
//! the marker and health records by the metadata indexes, each latched channel's last
//! message before the window by the message indexes of the chunks that hold it, and the
//! chunks that overlap the window, each by one positioned read of exactly its bytes.

use std::borrow::Cow;
use std::cmp::Reverse;
use std::collections::hash_map::Entry;
use std::collections::{HashMap, HashSet};
use std::io;
use std::ops::Range;
use std::sync::Arc;

use mcap::records::{op, ChunkIndex, Record};

use super::pread::Pread;
use super::source::{Batch, ChannelDef, Context, Event, Events, Latched, Message, Notes};
use crate::latched::is_latched;
use crate::window::LogWindow;

/// Chunks asked for ahead of the one being read (the chunks between them are not
/// contiguous, so the kernel does not read ahead by itself).
const READ_AHEAD_CHUNKS: usize = 2;

/// Why the index could not be followed; the input is then scanned.
pub(super) struct Fallback {
    /// What was wrong, and where.
    pub reason: String,
    /// Whether the merge already has the input's latched messages.
    pub ready_sent: bool,
    /// Chunks (by offset) whose messages the merge already has.
    pub sent_chunks: HashSet<u64>,
}

/// Why reading by the index stopped.
pub(super) enum Stop {
    Read(io::Error),
    Fallback(Fallback),
}

/// A chunk's decompressed content, lying in `bytes`.
struct Chunk {
    bytes: Vec<u8>,
    content: Range<usize>,
}

impl Chunk {
    fn content(&self) -> &[u8] {
        &self.bytes[self.content.clone()]
    }
}

/// A finished input of `size` bytes, its `summary` read already.
pub(super) struct Indexed<'a, 'f> {
    pub input: &'a mut Pread<'f>,
    pub size: u64,
    pub summary: &'a mcap::Summary,
    pub ctx: Context<'a>,
    pub events: &'a Events,
}

impl Indexed<'_, '_> {
    /// Sends the input's latched messages and the window's messages, and gives back its
    /// markers and expectations.
    pub fn read(mut self, profile: String) -> Result<Notes, Stop> {
        let mut sent_chunks = HashSet::new();
        let fallback = |reason: String, ready_sent, sent_chunks: &HashSet<u64>| {
            Stop::Fallback(Fallback {
                reason,
                ready_sent,
                sent_chunks: sent_chunks.clone(),
            })
        };
        let notes =
            read_notes(self.input, self.size, self.summary, self.ctx).map_err(Stop::Read)?;
        let channels: HashMap<u16, Arc<ChannelDef>> = self
            .summary
            .channels
            .iter()
            .map(|(&id, channel)| (id, Arc::new(ChannelDef::from_mcap(channel))))
            .collect();
        let kept: HashSet<u16> = (channels.iter())
            .filter(|(_, channel)| self.ctx.keeps(channel))
            .map(|(&id, _)| id)
            .collect();
        let mut cache = HashMap::new();
        let latched = self
            .latched(&channels, &kept, &mut cache)
            .map_err(|stop| match stop {
                Stop::Fallback(f) => fallback(f.reason, false, &sent_chunks),
                read => read,
            })?;
        if self.events.send(Event::Ready { profile, latched }).is_err() {
            return Ok(notes);
        }

        let window = self.ctx.window;
        let summary = self.summary;
        let mut chunks: Vec<&ChunkIndex> = summary
            .chunk_indexes
            .iter()
            .filter(|c| {
                window.overlaps(&LogWindow {
                    start_ns: c.message_start_time,
                    end_ns: c.message_end_time,
                }) && holds_kept(c, &kept)
            })
            .collect();
        chunks.sort_by_key(|c| (c.message_start_time, c.chunk_start_offset));
        let mut announced = HashSet::new();
        for (i, index) in chunks.iter().enumerate() {
            if self.ctx.stopped() {
                return Ok(notes);
            }
            for ahead in chunks.iter().skip(i + 1).take(READ_AHEAD_CHUNKS) {
                self.input
                    .will_need(ahead.chunk_start_offset, ahead.chunk_length);
            }
            let chunk = match cache.remove(&index.chunk_start_offset) {
                Some(chunk) => chunk,
                None => self.chunk(index).map_err(|stop| match stop {
                    Stop::Fallback(f) => fallback(f.reason, true, &sent_chunks),
                    read => read,
                })?,
            };
            let batch = self
                .batch(chunk, (&channels, &kept), &mut announced)
                .map_err(|reason| {
                    let reason = format!("chunk at {}: {reason}", index.chunk_start_offset);
                    fallback(reason, true, &sent_chunks)
                })?;
            sent_chunks.insert(index.chunk_start_offset);
            if !batch.messages.is_empty() && self.events.send(Event::Batch(batch)).is_err() {
                return Ok(notes);
            }
        }
        Ok(notes)
    }

    /// The window's messages of `chunk` on `kept` channels, in log-time order,
    /// announcing the channels the merge does not know yet.
    fn batch(
        &self,
        chunk: Chunk,
        (channels, kept): (&HashMap<u16, Arc<ChannelDef>>, &HashSet<u16>),
        announced: &mut HashSet<u16>,
    ) -> Result<Batch, String> {
        let mut batch = Batch::default();
        let base = chunk.bytes.as_ptr() as usize;
        for record in crate::chunk::records(chunk.content())? {
            let Record::Message { header, data } = record else {
                continue;
            };
            if !self.ctx.holds(header.log_time) {
                continue;
            }
            let Some(channel) = channels.get(&header.channel_id) else {
                return Err(format!(
                    "a message on channel {} the summary lacks",
                    header.channel_id
                ));
            };
            if !kept.contains(&header.channel_id) {
                continue;
            }
            if announced.insert(header.channel_id) {
                batch
                    .channels
                    .push((header.channel_id, Arc::clone(channel)));
            }
            let start = (data.as_ptr() as usize)
                .checked_sub(base)
                .filter(|start| start + data.len() <= chunk.bytes.len())
                .ok_or("a message outside its chunk")?;
            batch.messages.push(Message {
                channel: header.channel_id,
                sequence: header.sequence,
                log_time: header.log_time,
                publish_time: header.publish_time,
                data: start..start + data.len(),
            });
        }
        batch.bytes = chunk.bytes;
        batch.sort();
        Ok(batch)
    }

    /// Each `kept` latched channel's last message before the window. Only the message
    /// index of the channel in chunks that start before the window is read, then the one
    /// chunk that holds the message (kept in `cache` for the window, which may need it
    /// too).
    fn latched(
        &mut self,
        channels: &HashMap<u16, Arc<ChannelDef>>,
        kept: &HashSet<u16>,
        cache: &mut HashMap<u64, Chunk>,
    ) -> Result<Vec<Latched>, Stop> {
        let start = self.ctx.window.start_ns;
        let mut latched = Vec::new();
        let mut ids: Vec<u16> = channels
            .iter()
            .filter(|(id, channel)| kept.contains(id) && is_latched(&channel.metadata))
            .map(|(&id, _)| id)
            .collect();
        ids.sort_unstable();
        let summary = self.summary;
        for id in ids {
            let mut holding: Vec<&ChunkIndex> = summary
                .chunk_indexes
                .iter()
                .filter(|c| {
                    c.message_start_time < start && c.message_index_offsets.contains_key(&id)
                })
                .collect();
            holding.sort_by_key(|c| Reverse(c.message_start_time));
            // (log time, chunk, offset in the chunk's content)
            let mut best: Option<(u64, &ChunkIndex, u64)> = None;
            for index in holding {
                if best.is_some_and(|(time, ..)| index.message_end_time < time) {
                    continue;
                }
                let entries = self.message_index(index, id)?;
                let last = entries
                    .into_iter()
                    .filter(|&(time, _)| time < start)
                    .max_by_key(|&(time, offset)| (time, offset));
                if let Some((time, offset)) = last {
                    if best.is_none_or(|(known, ..)| time > known) {
                        best = Some((time, index, offset));
                    }
                }
            }
            let Some((_, index, offset)) = best else {
                continue;
            };
            let chunk = match cache.entry(index.chunk_start_offset) {
                Entry::Occupied(known) => known.into_mut(),
                Entry::Vacant(vacant) => vacant.insert(self.chunk(index)?),
            };
            let content = chunk.content();
            let message = usize::try_from(offset)
                .ok()
                .and_then(|offset| content.get(offset..))
                .and_then(|rest| crate::parse::framed_records(rest).next())
                .and_then(Result::ok)
                .and_then(|(opcode, body)| crate::parse::parse_record(opcode, body).ok());
            let Some(Record::Message { header, data }) = message else {
                return Err(fallback(format!(
                    "the message index of channel {id} points at no message in the chunk at {}",
                    index.chunk_start_offset
                )));
            };
            latched.push(Latched {
                channel: Arc::clone(&channels[&id]),
                sequence: header.sequence,
                log_time: header.log_time,
                publish_time: header.publish_time,
                data: data.into_owned(),
            });
        }
        Ok(latched)
    }

    /// The (log time, offset in content) entries of channel `id`'s message index in the
    /// chunk of `index`.
    fn message_index(&mut self, index: &ChunkIndex, id: u16) -> Result<Vec<(u64, u64)>, Stop> {
        let start = index.message_index_offsets[&id];
        let indexes_end = index
            .chunk_start_offset
            .saturating_add(index.chunk_length)
            .saturating_add(index.message_index_length);
        let end = index
            .message_index_offsets
            .values()
            .copied()
            .filter(|&offset| offset > start)
            .min()
            .unwrap_or(indexes_end);
        if end <= start.saturating_add(9) || end > self.size.min(indexes_end) {
            return Err(fallback(format!(
                "the message index of channel {id} at {start} lies outside the file"
            )));
        }
        let record = self
            .input
            .read_range(start, end - start)
            .map_err(Stop::Read)?;
        self.ctx.paced(end - start);
        match crate::parse::parse_record(record[0], &record[9..]) {
            Ok(Record::MessageIndex(message_index)) if record[0] == op::MESSAGE_INDEX => {
                Ok(message_index
                    .records
                    .into_iter()
                    .map(|entry| (entry.log_time, entry.offset))
                    .collect())
            }
            _ => Err(fallback(format!(
                "no message index of channel {id} at {start}"
            ))),
        }
    }

    /// The chunk of `index`, read in one positioned read and decompressed.
    fn chunk(&mut self, index: &ChunkIndex) -> Result<Chunk, Stop> {
        let at = index.chunk_start_offset;
        if index.chunk_length < 9
            || index.chunk_length > 2 * crate::chunk::MAX_CHUNK_BYTES
            || at.saturating_add(index.chunk_length) > self.size
        {
            return Err(fallback(format!(
                "the chunk index at {at} points outside the file"
            )));
        }
        let bytes = self
            .input
            .read_range(at, index.chunk_length)
            .map_err(Stop::Read)?;
        self.ctx.paced(index.chunk_length);
        let decoded = match crate::parse::parse_record(bytes[0], &bytes[9..]) {
            Ok(Record::Chunk {
                header,
                data: Cow::Borrowed(data),
            }) if bytes[0] == op::CHUNK => crate::chunk::decompress(
                &header.compression,
                data,
                header.uncompressed_size,
                header.uncompressed_crc,
            ),
            _ => Err("no chunk record".to_string()),
        };
        let content = match decoded {
            Ok(Cow::Borrowed(content)) => {
                let start = content.as_ptr() as usize - bytes.as_ptr() as usize;
                Ok(start..start + content.len())
            }
            Ok(Cow::Owned(content)) => Err(Ok(content)),
            Err(reason) => Err(Err(reason)),
        };
        match content {
            Ok(content) => Ok(Chunk { bytes, content }),
            Err(Ok(owned)) => Ok(Chunk {
                content: 0..owned.len(),
                bytes: owned,
            }),
            Err(Err(reason)) => Err(fallback(format!("chunk at {at}: {reason}"))),
        }
    }
}

/// The marker and health records of `input` (of `size` bytes), each read where the
/// metadata indexes of its `summary` say.
pub(super) fn read_notes(
    input: &Pread<'_>,
    size: u64,
    summary: &mcap::Summary,
    ctx: Context<'_>,
) -> io::Result<Notes> {
    let mut notes = Notes::default();
    for index in &summary.metadata_indexes {
        if !Notes::wants(&index.name)
            || index.length < 9
            || index.offset.saturating_add(index.length) > size
        {
            continue;
        }
        let record = input.read_range(index.offset, index.length)?;
        ctx.paced(index.length);
        if let Ok(Record::Metadata(metadata)) = crate::parse::parse_record(record[0], &record[9..])
        {
            notes.add(metadata, ctx.window);
        }
    }
    Ok(notes)
}

/// Whether the chunk of `index` may hold a message of a `kept` channel: its message
/// indexes name one, or it has none to say (a writer need not write them).
fn holds_kept(index: &ChunkIndex, kept: &HashSet<u16>) -> bool {
    index.message_index_offsets.is_empty()
        || (index.message_index_offsets.keys()).any(|id| kept.contains(id))
}

fn fallback(reason: String) -> Stop {
    Stop::Fallback(Fallback {
        reason,
        ready_sent: false,
        sent_chunks: HashSet::new(),
    })
}
