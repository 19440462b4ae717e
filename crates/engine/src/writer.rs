//! The writer thread: takes messages off the handoff and streams them into MCAP files.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use recd_storage::iceoryx2 as keys;
use recd_storage::{
    ChannelId, Durability, FileSummary, MessageHeader, StreamWriter, WriteError, WriterOptions,
};

use crate::config::{RecordingConfig, SplitPolicy};
use crate::handoff::{Item, Receiver, Stamps};
use crate::held::LoanedBytes;
use crate::topic::{Topic, TopicCounts};

/// What the writer shows of itself while it runs.
#[derive(Debug, Default)]
pub(crate) struct WriterProgress {
    pub current_file: Mutex<Option<PathBuf>>,
    pub bytes_written: AtomicU64,
    /// Files split off and closed (summary written, synced), in order.
    pub closed_files: Mutex<Vec<ClosedFile>>,
    pub error: Mutex<Option<String>>,
}

/// A file a split finished: complete, with its summary, on disk.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ClosedFile {
    /// Where it is.
    pub path: PathBuf,
    /// Its size in bytes.
    pub bytes: u64,
    /// Messages in it.
    pub messages: u64,
}

/// What the writer thread leaves behind.
pub(crate) struct WriterReport {
    pub files: Vec<FileSummary>,
    pub error: Option<WriteError>,
}

/// How the writer names, splits and fills files.
pub(crate) struct FilePlan {
    dir: PathBuf,
    prefix: String,
    split: SplitPolicy,
    options: WriterOptions,
    metadata: BTreeMap<String, String>,
    writer_delay: Option<Duration>,
}

impl FilePlan {
    pub fn new(config: &RecordingConfig, metadata: BTreeMap<String, String>) -> Self {
        Self {
            dir: config.output_dir.clone(),
            prefix: config.file_prefix.clone(),
            split: config.split.clone(),
            options: WriterOptions {
                data_crc: config.crc,
                zero_copy_threshold: config.zero_copy_threshold,
                direct_io: config.direct_io,
                // rosbag2's readers (rosbags among them) require the profile; DDS topics
                // follow it, shared-memory channels keep their own encoding beside them.
                profile: if config.dds.is_some() {
                    "ros2".to_string()
                } else {
                    String::new()
                },
                durability: Durability {
                    sync_period: config.sync_period,
                    ..Durability::default()
                },
                ..WriterOptions::default()
            },
            metadata,
            writer_delay: config.writer_delay,
        }
    }

    fn path(&self, index: u32) -> PathBuf {
        self.dir.join(format!("{}_{index:04}.mcap", self.prefix))
    }
}

struct LatchedMessage {
    stamps: Stamps,
    bytes: Vec<u8>,
}

struct TopicSlot {
    topic: Arc<Topic>,
    /// The topic's channel in the current file, once its first message went there.
    channel: Option<ChannelId>,
    sequence: u32,
    latched: Option<LatchedMessage>,
}

/// The writer thread's state.
pub(crate) struct Writer<S> {
    /// One handoff per source thread; each ends with its own [`Item::Stop`].
    rxs: Vec<Receiver<S>>,
    plan: FilePlan,
    progress: Arc<WriterProgress>,
    topics: Vec<Option<TopicSlot>>,
    file: Option<StreamWriter>,
    file_index: u32,
    file_started: Instant,
    bytes_before_file: u64,
    closing: Vec<JoinHandle<Result<FileSummary, WriteError>>>,
    error: Option<WriteError>,
    last_flush: Instant,
}

/// With direct I/O, how often batched messages are flushed when the writer runs out of
/// work: each such flush pads the file to a whole block.
const DIRECT_FLUSH_INTERVAL: Duration = Duration::from_millis(20);

/// Items taken from one handoff before looking at the next.
const BATCH_PER_RING: usize = 256;

impl<S: LoanedBytes> Writer<S> {
    /// Creates the first file, so that a recording that cannot write fails at its start.
    pub fn create(
        rxs: Vec<Receiver<S>>,
        plan: FilePlan,
        progress: Arc<WriterProgress>,
    ) -> Result<Self, WriteError> {
        let path = plan.path(0);
        let file = StreamWriter::create(&path, plan.options.clone())?;
        *progress.current_file.lock().expect("progress lock") = Some(path);
        Ok(Self {
            rxs,
            plan,
            progress,
            topics: Vec::new(),
            file: Some(file),
            file_index: 0,
            file_started: Instant::now(),
            bytes_before_file: 0,
            closing: Vec::new(),
            error: None,
            last_flush: Instant::now(),
        })
    }

    /// Writes until every handoff delivered [`Item::Stop`], then finishes the last file.
    pub fn run(mut self) -> WriterReport {
        let mut running = vec![true; self.rxs.len()];
        while running.iter().any(|&r| r) {
            let mut worked = false;
            for (ring, open) in running.iter_mut().enumerate() {
                // A bounded batch per ring, so that one busy source cannot starve another.
                for _ in 0..BATCH_PER_RING {
                    if !*open {
                        break;
                    }
                    let Some(item) = self.rxs[ring].pop() else {
                        break;
                    };
                    worked = true;
                    *open = self.handle(ring, item);
                }
            }
            if !worked {
                self.flush();
                self.split_if_due(0);
                std::thread::park_timeout(self.idle_wait());
            }
        }
        self.finish()
    }

    /// Acts on one item of ring `ring`; false once the ring delivered its stop mark.
    fn handle(&mut self, ring: usize, item: Item<S>) -> bool {
        match item {
            Item::Announce(topic) => self.announce(topic),
            Item::Copied { topic, stamps, len } => self.write_copied(ring, topic, stamps, len),
            Item::Loaned {
                topic,
                stamps,
                len,
                sample,
            } => self.write_loaned(ring, topic, stamps, len, sample),
            Item::Retire(topic) => self.retire(topic),
            Item::Stop => return false,
        }
        true
    }

    fn announce(&mut self, topic: Arc<Topic>) {
        let index = topic.index as usize;
        if self.topics.len() <= index {
            self.topics.resize_with(index + 1, || None);
        }
        self.topics[index] = Some(TopicSlot {
            topic,
            channel: None,
            sequence: 0,
            latched: None,
        });
    }

    fn retire(&mut self, topic: u32) {
        if let Some(slot) = self.topics.get_mut(topic as usize).and_then(Option::as_mut) {
            slot.latched = None;
        }
    }

    fn write_copied(&mut self, ring: usize, topic: u32, stamps: Stamps, len: usize) {
        self.delay();
        let Self {
            rxs, file, topics, ..
        } = self;
        let slot = topics[topic as usize]
            .as_mut()
            .expect("announced before its messages");
        let result = rxs[ring].with_copied(len, |parts| {
            if slot.topic.latched {
                keep_latched(slot, stamps, parts);
            }
            write_to(file, slot, stamps, parts)
        });
        self.account(topic, len, result);
        self.split_if_due(len);
    }

    fn write_loaned(&mut self, ring: usize, topic: u32, stamps: Stamps, len: usize, sample: S) {
        self.delay();
        let parts = [sample.user_header(), sample.payload()];
        let slot = self.topics[topic as usize]
            .as_mut()
            .expect("announced before its messages");
        if slot.topic.latched {
            keep_latched(slot, stamps, &parts);
        }
        let result = write_to(&mut self.file, slot, stamps, &parts);
        // The bytes reached the kernel (or the write failed): the publisher gets its
        // shared memory back now.
        drop(sample);
        self.rxs[ring].release_loaned(len);
        self.account(topic, len, result);
        self.split_if_due(len);
    }

    fn account(&mut self, topic: u32, len: usize, result: Result<(), NotWritten>) {
        let counters = &self.topics[topic as usize]
            .as_ref()
            .expect("announced")
            .topic
            .counters;
        match result {
            Ok(()) => {
                counters.add_written(len as u64);
                self.progress.bytes_written.store(
                    self.bytes_before_file + self.file_bytes(),
                    Ordering::Relaxed,
                );
            }
            Err(error) => {
                counters.add_dropped();
                if let Some(error) = error {
                    self.fail(error);
                }
            }
        }
    }

    fn file_bytes(&self) -> u64 {
        self.file.as_ref().map_or(0, StreamWriter::bytes_written)
    }

    fn fail(&mut self, error: WriteError) {
        if self.error.is_none() {
            *self.progress.error.lock().expect("progress lock") = Some(error.to_string());
            self.error = Some(error);
        }
    }

    fn delay(&self) {
        if let Some(delay) = self.plan.writer_delay {
            std::thread::sleep(delay);
        }
    }

    fn flush(&mut self) {
        if self.plan.options.direct_io {
            if self.last_flush.elapsed() < DIRECT_FLUSH_INTERVAL {
                return;
            }
            self.last_flush = Instant::now();
        }
        if let Some(file) = &mut self.file {
            if let Err(error) = file.flush() {
                self.fail(error);
            }
        }
    }

    /// How long to sleep with nothing to write: the receive thread wakes the writer when
    /// it hands something over, so only a split by duration needs a timer.
    fn idle_wait(&self) -> Duration {
        let longest = if self.plan.options.direct_io {
            DIRECT_FLUSH_INTERVAL
        } else {
            Duration::from_millis(250)
        };
        match (&self.file, self.plan.split.max_duration) {
            (Some(file), Some(max)) if file.message_count() > 0 => max
                .saturating_sub(self.file_started.elapsed())
                .clamp(Duration::from_millis(1), longest),
            _ => longest,
        }
    }

    fn split_if_due(&mut self, just_written: usize) {
        let Some(file) = &self.file else { return };
        let split = &self.plan.split;
        let by_size = just_written > 0
            && split
                .max_bytes
                .is_some_and(|max| file.bytes_written() >= max);
        let by_time = split
            .max_duration
            .is_some_and(|max| self.file_started.elapsed() >= max && file.message_count() > 0);
        if by_size || by_time {
            self.start_next_file();
        }
    }

    /// Continues in a new file and finishes the old one on a thread of its own, so that
    /// its summary and sync do not hold up the handoff.
    fn start_next_file(&mut self) {
        let Some(old) = self.file.take() else { return };
        self.bytes_before_file += old.bytes_written();
        let mut old = old;
        let counts = self.recorder_metadata();
        let progress = self.progress.clone();
        self.closing.push(std::thread::spawn(move || {
            old.add_metadata(keys::RECORDER_METADATA, &counts)?;
            let summary = old.close()?;
            progress
                .closed_files
                .lock()
                .expect("progress lock")
                .push(ClosedFile {
                    path: summary.path.clone(),
                    bytes: summary.bytes,
                    messages: summary.message_count,
                });
            Ok(summary)
        }));
        self.file_index += 1;
        let path = self.plan.path(self.file_index);
        match StreamWriter::create(&path, self.plan.options.clone()) {
            Ok(file) => {
                self.file = Some(file);
                self.file_started = Instant::now();
                *self.progress.current_file.lock().expect("progress lock") = Some(path);
                self.repeat_latched();
            }
            Err(error) => self.fail(error),
        }
    }

    /// Writes the last message of every latched topic first in a new file, so the file
    /// stands alone.
    fn repeat_latched(&mut self) {
        for slot in self.topics.iter_mut().flatten() {
            slot.channel = None;
        }
        let mut failure = None;
        for slot in self.topics.iter_mut().flatten() {
            let Some(latched) = slot.latched.take() else {
                continue;
            };
            if let Err(Some(error)) =
                write_to(&mut self.file, slot, latched.stamps, &[&latched.bytes])
            {
                failure.get_or_insert(error);
            }
            slot.latched = Some(latched);
        }
        if let Some(error) = failure {
            self.fail(error);
        }
    }

    fn recorder_metadata(&self) -> BTreeMap<String, String> {
        let counts: BTreeMap<&str, TopicCounts> = self
            .topics
            .iter()
            .flatten()
            .map(|slot| (slot.topic.name.as_str(), slot.topic.counters.snapshot()))
            .collect();
        let mut metadata = self.plan.metadata.clone();
        metadata.insert(
            "topics".to_string(),
            serde_json::to_string(&counts).expect("counts serialize"),
        );
        metadata.insert("file_index".to_string(), self.file_index.to_string());
        metadata
    }

    fn finish(mut self) -> WriterReport {
        let mut files = Vec::new();
        let mut errors = Vec::new();
        if let Some(mut file) = self.file.take() {
            let counts = self.recorder_metadata();
            let closed = file
                .add_metadata(keys::RECORDER_METADATA, &counts)
                .and_then(|()| file.close());
            match closed {
                Ok(summary) => files.push(summary),
                Err(error) => errors.push(error),
            }
        }
        for handle in self.closing.drain(..) {
            match handle.join().expect("file closing thread does not panic") {
                Ok(summary) => files.push(summary),
                Err(error) => errors.push(error),
            }
        }
        files.sort_by(|a, b| a.path.cmp(&b.path));
        *self.progress.current_file.lock().expect("progress lock") = None;
        WriterReport {
            files,
            error: self.error.take().or_else(|| errors.into_iter().next()),
        }
    }
}

fn keep_latched(slot: &mut TopicSlot, stamps: Stamps, parts: &[&[u8]]) {
    let latched = slot.latched.get_or_insert_with(|| LatchedMessage {
        stamps,
        bytes: Vec::new(),
    });
    latched.stamps = stamps;
    latched.bytes.clear();
    parts
        .iter()
        .for_each(|part| latched.bytes.extend_from_slice(part));
}

/// Why a message was not written: a write error, or `None` when there is no file since
/// an earlier error (already recorded).
type NotWritten = Option<WriteError>;

fn write_to(
    file: &mut Option<StreamWriter>,
    slot: &mut TopicSlot,
    stamps: Stamps,
    parts: &[&[u8]],
) -> Result<(), NotWritten> {
    let Some(file) = file.as_mut() else {
        return Err(None);
    };
    let channel = match slot.channel {
        Some(channel) => channel,
        None => {
            let channel = add_channel(file, &slot.topic)?;
            slot.channel = Some(channel);
            channel
        }
    };
    let header = MessageHeader {
        channel,
        sequence: slot.sequence,
        log_time: stamps.log_time,
        publish_time: stamps.publish_time,
    };
    slot.sequence = slot.sequence.wrapping_add(1);
    Ok(file.write_message_parts(&header, parts)?)
}

fn add_channel(file: &mut StreamWriter, topic: &Topic) -> Result<ChannelId, WriteError> {
    let channel = &topic.channel;
    let schema = file.add_schema(
        &channel.schema_name,
        &channel.schema_encoding,
        &channel.schema_data,
    )?;
    file.add_channel(
        Some(schema),
        &topic.name,
        &channel.message_encoding,
        &channel.metadata,
    )
}
