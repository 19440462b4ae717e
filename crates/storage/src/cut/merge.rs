//! Writes what the inputs' readers send into the output: the latched messages first, then
//! the window's messages merged by log time across the inputs (a message two inputs
//! hold, as a latched repeat at the start of a split file, once), then the markers and
//! the health record.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap, HashMap};
use std::io::Write;
use std::path::Path;
use std::sync::mpsc::Receiver;
use std::sync::Arc;

use mcap::records::{Channel, Header, MessageHeader, Metadata, SchemaHeader};

use super::health::SpanHealth;
use super::source::{Batch, ChannelDef, ChannelKey, Done, Event, Latched, SchemaDef};
use super::{CutError, CutOptions, CutReport};
use crate::chunked::ChunkedWriter;

/// One input as the merge sees it.
struct Input {
    path: std::path::PathBuf,
    events: Receiver<Event>,
    channels: HashMap<u16, Arc<ChannelDef>>,
    /// Input channel id to output channel id, once written to.
    mapped: HashMap<u16, u16>,
    /// The batch being merged and its next message.
    head: Option<(Batch, usize)>,
    done: Option<Box<Done>>,
}

/// A message written at the latest log time of its channel: the input it came from,
/// the CRC-32 of its data, its publish time and length. Not its sequence: a writer
/// numbers a latched message it repeats at the start of a split file anew.
type Written = (usize, u32, u64, usize);

/// The output file as it is written.
struct Output<W: Write> {
    writer: ChunkedWriter<W>,
    schemas: HashMap<SchemaDef, u16>,
    channels: HashMap<ChannelKey, u16>,
    /// Per output channel: the log time last written and the messages written at it
    /// (input, sequence, publish time, length), to know a repeat of one.
    recent: HashMap<u16, (u64, Vec<Written>)>,
    health: SpanHealth,
    /// What was written so far (its size is filled in once the output is synced).
    merged: CutReport,
}

/// Merges the events of `receivers` (one per input, in the inputs' order) into `out`;
/// gives back `out` unflushed and what was written.
pub(super) fn merge<W: Write>(
    paths: &[std::path::PathBuf],
    receivers: Vec<Receiver<Event>>,
    options: &CutOptions,
    output: &Path,
    out: W,
) -> Result<(W, CutReport), CutError> {
    let encode = |source| encode_error(output, source);
    let mut inputs: Vec<Input> = paths
        .iter()
        .zip(receivers)
        .map(|(path, events)| Input {
            path: path.clone(),
            events,
            channels: HashMap::new(),
            mapped: HashMap::new(),
            head: None,
            done: None,
        })
        .collect();
    let mut profiles = Vec::new();
    let mut latched = Vec::new();
    for input in &mut inputs {
        let (profile, found) = input.ready(options)?;
        profiles.push(profile);
        latched.push(found);
    }
    let header = Header {
        profile: options
            .profile
            .clone()
            .unwrap_or_else(|| profiles.swap_remove(0)),
        library: crate::LIBRARY.to_string(),
    };
    let writer = ChunkedWriter::new(out, &header, super::chunk_options(options)).map_err(encode)?;
    let mut file = Output {
        writer,
        schemas: HashMap::new(),
        channels: HashMap::new(),
        recent: HashMap::new(),
        health: SpanHealth::default(),
        merged: CutReport {
            output: output.to_path_buf(),
            output_bytes: 0,
            messages: 0,
            latched: 0,
            markers: 0,
            duplicates: 0,
            topics: BTreeMap::new(),
            inputs: Vec::new(),
        },
    };
    for metadata in &options.metadata {
        file.writer.write_metadata(metadata).map_err(encode)?;
    }
    for message in latest_latched(latched) {
        let channel = file.channel(&message.channel).map_err(encode)?;
        let header = MessageHeader {
            channel_id: channel,
            sequence: message.sequence,
            log_time: message.log_time,
            publish_time: message.publish_time,
        };
        file.writer
            .write_message(&header, &message.data)
            .map_err(encode)?;
        file.merged.latched += 1;
    }

    let mut heap = BinaryHeap::new();
    for (i, input) in inputs.iter_mut().enumerate() {
        if let Some(time) = input.next_batch(options)? {
            heap.push(Reverse((time, i)));
        }
    }
    while let Some(Reverse((_, i))) = heap.pop() {
        let input = &mut inputs[i];
        file.write(i, input).map_err(encode)?;
        if let Some(time) = input.advance(options)? {
            heap.push(Reverse((time, i)));
        }
    }

    let mut expected = BTreeMap::new();
    let mut markers: Vec<Metadata> = Vec::new();
    for input in inputs {
        let Some(done) = input.done else { continue };
        for (topic, expectation) in done.notes.expected {
            if !options.keeps(&topic) {
                continue;
            }
            expected.entry(topic).or_insert(expectation);
        }
        for marker in done.notes.markers {
            if !markers.contains(&marker) {
                markers.push(marker);
            }
        }
        file.merged.inputs.push(done.read);
    }
    for marker in &markers {
        file.writer.write_metadata(marker).map_err(encode)?;
        file.merged.markers += 1;
    }
    let file_name = output
        .file_name()
        .map_or_else(String::new, |name| name.to_string_lossy().into_owned());
    let health = Metadata {
        name: crate::iceoryx2::health_metadata_name(&file_name),
        metadata: file.health.summary(&expected).to_metadata(),
    };
    file.writer.write_metadata(&health).map_err(encode)?;
    let (out, _) = file.writer.finish().map_err(encode)?;
    Ok((out, file.merged))
}

/// Of the latched messages every input found, each output channel's latest, in log-time
/// order (the first input's where two are as late).
fn latest_latched(found: Vec<Vec<Latched>>) -> Vec<Latched> {
    let mut latest: HashMap<ChannelKey, Latched> = HashMap::new();
    for message in found.into_iter().flatten() {
        let key = message.channel.key();
        if latest
            .get(&key)
            .is_none_or(|known| message.log_time > known.log_time)
        {
            latest.insert(key, message);
        }
    }
    let mut latest: Vec<Latched> = latest.into_values().collect();
    latest.sort_by(|a, b| (a.log_time, &a.channel).cmp(&(b.log_time, &b.channel)));
    latest
}

impl Input {
    /// Waits for the input's latched messages.
    fn ready(&mut self, options: &CutOptions) -> Result<(String, Vec<Latched>), CutError> {
        match self.events.recv() {
            Ok(Event::Ready { profile, latched }) => Ok((profile, latched)),
            Ok(Event::Failed(error)) => Err(error),
            Ok(_) | Err(_) => Err(self.stopped(options)),
        }
    }

    /// Takes the input's next batch; the log time of its first message, or `None` once
    /// the input is done.
    fn next_batch(&mut self, options: &CutOptions) -> Result<Option<u64>, CutError> {
        self.head = None;
        if options.cancelled() {
            return Err(CutError::Cancelled);
        }
        loop {
            match self.events.recv() {
                Ok(Event::Batch(mut batch)) => {
                    self.channels.extend(batch.channels.drain(..));
                    if let Some(first) = batch.messages.first() {
                        let time = first.log_time;
                        self.head = Some((batch, 0));
                        return Ok(Some(time));
                    }
                }
                Ok(Event::Done(done)) => {
                    self.done = Some(done);
                    return Ok(None);
                }
                Ok(Event::Failed(error)) => return Err(error),
                Ok(Event::Ready { .. }) | Err(_) => return Err(self.stopped(options)),
            }
        }
    }

    /// Moves past the message just written; the log time of the next, if any.
    fn advance(&mut self, options: &CutOptions) -> Result<Option<u64>, CutError> {
        let Some((batch, next)) = &mut self.head else {
            return Ok(None);
        };
        *next += 1;
        match batch.messages.get(*next) {
            Some(message) => Ok(Some(message.log_time)),
            None => self.next_batch(options),
        }
    }

    /// The error for a reader that stopped without saying why.
    fn stopped(&self, options: &CutOptions) -> CutError {
        if options.cancelled() {
            return CutError::Cancelled;
        }
        CutError::Read {
            path: self.path.clone(),
            source: std::io::Error::other("its reader stopped unexpectedly"),
        }
    }
}

impl<W: Write> Output<W> {
    /// Writes the head message of input `i`, unless another input's copy of it is
    /// written already.
    fn write(&mut self, i: usize, input: &mut Input) -> mcap::McapResult<()> {
        let Some((batch, next)) = &input.head else {
            return Ok(());
        };
        let message = &batch.messages[*next];
        let Some(channel) = input.channels.get(&message.channel) else {
            return Ok(());
        };
        let id = match input.mapped.get(&message.channel) {
            Some(&id) => id,
            None => {
                let id = self.channel(channel)?;
                input.mapped.insert(message.channel, id);
                id
            }
        };
        let data = &batch.bytes[message.data.clone()];
        let (time, written) = self
            .recent
            .entry(id)
            .or_insert((message.log_time, Vec::new()));
        if *time != message.log_time {
            *time = message.log_time;
            written.clear();
        }
        let seen = (crc32fast::hash(data), message.publish_time, data.len());
        if written
            .iter()
            .any(|&(from, crc, publish, len)| from != i && (crc, publish, len) == seen)
        {
            self.merged.duplicates += 1;
            return Ok(());
        }
        written.push((i, seen.0, seen.1, seen.2));
        let header = MessageHeader {
            channel_id: id,
            sequence: message.sequence,
            log_time: message.log_time,
            publish_time: message.publish_time,
        };
        self.writer.write_message(&header, data)?;
        self.merged.messages += 1;
        match self.merged.topics.get_mut(&channel.topic) {
            Some(count) => *count += 1,
            None => {
                self.merged.topics.insert(channel.topic.clone(), 1);
            }
        }
        self.health.add(&channel.topic, message.log_time);
        Ok(())
    }

    /// The output channel of `channel`, added (with its schema) the first time.
    fn channel(&mut self, channel: &ChannelDef) -> mcap::McapResult<u16> {
        let key = channel.key();
        if let Some(&id) = self.channels.get(&key) {
            return Ok(id);
        }
        let schema_id = match &channel.schema {
            None => 0,
            Some(schema) => match self.schemas.get(schema.as_ref()) {
                Some(&id) => id,
                None => {
                    let id = next_id(self.schemas.len())?;
                    let header = SchemaHeader {
                        id,
                        name: schema.name.clone(),
                        encoding: schema.encoding.clone(),
                    };
                    self.writer.add_schema(header, &schema.data)?;
                    self.schemas.insert(SchemaDef::clone(schema), id);
                    id
                }
            },
        };
        let id = next_id(self.channels.len())?;
        self.writer.add_channel(Channel {
            id,
            topic: channel.topic.clone(),
            schema_id,
            message_encoding: channel.message_encoding.clone(),
            metadata: channel.metadata.clone(),
        })?;
        self.channels.insert(key, id);
        Ok(id)
    }
}

/// The id after `count` ids handed out from 1.
fn next_id(count: usize) -> mcap::McapResult<u16> {
    u16::try_from(count + 1).map_err(|_| mcap::McapError::TooManyChannels)
}

fn encode_error(output: &Path, source: mcap::McapError) -> CutError {
    match source {
        mcap::McapError::Io(source) => CutError::Write {
            path: output.to_path_buf(),
            source,
        },
        source => CutError::Encode {
            path: output.to_path_buf(),
            source,
        },
    }
}
