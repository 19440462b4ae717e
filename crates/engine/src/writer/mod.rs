//! The writer thread: takes messages off every source's handoff and streams them into
//! MCAP files ([`files`] names, splits and finishes them; [`space_guard`] pauses them
//! while the disk is nearly full; [`requests`] carries the session's pause, markers and
//! triggers; a pre-trigger session keeps its messages in a [`buffer`] and writes the
//! [`window`] around each trigger; [`health`] keeps each topic's health and writes it).

mod buffer;
mod closing;
mod files;
mod health;
mod parameters;
mod requests;
mod space_guard;
mod window;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use recd_storage::{ChannelId, FileSummary, MessageHeader, StreamWriter, WriteError};

use recd_health::{FileHealth, HealthTally};

use crate::handoff::{Item, LoanedBytes, Receiver, Stamps};
use crate::health::HealthMonitor;
use crate::parameters::ParameterBoard;
use crate::topic::Topic;
pub use files::{ClosedFile, RecordingObserver, RECEIVE_THREAD};
use files::{Ending, Files};
pub(crate) use files::{FilePlan, SourceFamily, Unobserved};
pub(crate) use requests::WriterRequests;
pub use space_guard::DiskFull;
use space_guard::SpaceChange;
pub(crate) use space_guard::SpaceGuard;
pub(crate) use window::PreTriggerState;

/// What the writer shows of itself while it runs.
#[derive(Debug, Default)]
pub(crate) struct WriterProgress {
    pub current_file: Mutex<Option<PathBuf>>,
    pub bytes_written: AtomicU64,
    /// Files split off and closed (summary written, synced): a count, for the files
    /// themselves go to the observer and the stop's report (a list here would grow
    /// with each file for as long as the session runs).
    pub files_closed: AtomicU64,
    pub error: Mutex<Option<String>>,
    /// Set while writing is paused for want of disk space.
    pub disk_full: Mutex<Option<DiskFull>>,
    /// A pre-trigger session's buffer: messages, bytes and the ns between the oldest
    /// and the newest.
    pub buffered_messages: AtomicU64,
    pub buffered_bytes: AtomicU64,
    pub buffered_span_ns: AtomicU64,
    /// The health of the files ended so far.
    pub health: Mutex<HealthTally>,
    /// The newest log time handed to the kernel with every message before it (at an idle
    /// flush), ns since the Unix epoch; 0 before the first.
    pub flushed_log_ns: AtomicU64,
}

/// What the writer thread leaves behind.
pub(crate) struct WriterReport {
    pub files: Vec<FileSummary>,
    pub error: Option<WriteError>,
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
    /// Its samples in the current file, for the file's health record.
    file_health: FileHealth,
    /// The longest silence expected of it now: a longer one in a file is a gap.
    max_gap_ns: Option<u64>,
    /// The observer that asked for its samples ([`RecordingObserver::taps`]).
    tap: Option<Arc<dyn RecordingObserver>>,
}

/// What a writer is given besides its handoffs, its files and its progress.
pub(crate) struct WriterSetup {
    /// Pauses writing while the file system is nearly full.
    pub guard: Option<SpaceGuard>,
    /// Testing aid: a sleep before each message (see `TestHooks::writer_delay`).
    pub delay: Option<Duration>,
    /// The session's pause, markers and triggers.
    pub requests: Arc<WriterRequests>,
    /// A pre-trigger session's buffer; `None` writes everything.
    pub pre_trigger: Option<PreTriggerState>,
    /// The watch over its topics' health.
    pub health: HealthMonitor,
    /// Whether the files get a `recd/health` channel (DDS files hold ROS 2 channels only,
    /// as ROS 2 readers require; their health is in the health record alone).
    pub health_channel: bool,
    /// Where the nodes' parameters for each file are posted (`rec start --parameters`).
    pub parameters: Option<Arc<ParameterBoard>>,
}

/// The writer thread's state.
pub(crate) struct Writer<S> {
    /// One handoff per source thread; each ends with its own [`Item::Stop`].
    rxs: Vec<Receiver<S>>,
    files: Files,
    progress: Arc<WriterProgress>,
    topics: Vec<Option<TopicSlot>>,
    error: Option<WriteError>,
    /// Pauses writing while the file system is nearly full.
    guard: Option<SpaceGuard>,
    /// Testing aid: a sleep before each message (see `TestHooks::writer_delay`).
    delay: Option<Duration>,
    /// The session's pause, markers and triggers.
    requests: Arc<WriterRequests>,
    /// A pre-trigger session's buffer and its open window; `None` writes everything.
    pre_trigger: Option<PreTriggerState>,
    health: HealthMonitor,
    /// The `recd/health` channel: `None` when the files get none, else its id in the
    /// file of that number, once the file has it.
    health_channel: Option<Option<(u32, ChannelId)>>,
    /// Whether the session was paused at the last look (a pause is no gap).
    was_paused: bool,
    /// The nodes' parameters each file starts with, when read.
    parameters: Option<parameters::FileParameters>,
}

/// Items taken from one handoff before looking at the next.
const BATCH_PER_RING: usize = 256;

impl<S: LoanedBytes> Writer<S> {
    /// The I/O path the files are written with (`auto` resolved).
    pub fn io_mode(&self) -> recd_storage::IoMode {
        self.files.io_mode()
    }

    /// Creates the first file, so that a recording that cannot write fails at its start
    /// (a pre-trigger session's writer creates none until triggered, but checks that it
    /// could).
    pub fn create(
        rxs: Vec<Receiver<S>>,
        plan: FilePlan,
        progress: Arc<WriterProgress>,
        setup: WriterSetup,
    ) -> Result<Self, WriteError> {
        let WriterSetup {
            guard,
            delay,
            requests,
            pre_trigger,
            health,
            health_channel,
            parameters,
        } = setup;
        let was_paused = requests.paused();
        let files = match pre_trigger {
            Some(_) => Files::deferred(plan, progress.clone())?,
            None => Files::create(plan, progress.clone())?,
        };
        Ok(Self {
            rxs,
            files,
            progress,
            topics: Vec::new(),
            error: None,
            guard,
            delay,
            requests,
            pre_trigger,
            health,
            health_channel: health_channel.then_some(None),
            was_paused,
            parameters: parameters.map(parameters::FileParameters::new),
        })
    }

    /// Writes until every handoff delivered [`Item::Stop`], then finishes the last file.
    pub fn run(mut self) -> WriterReport {
        let mut running = vec![true; self.rxs.len()];
        while running.iter().any(|&r| r) {
            self.write_markers();
            self.write_parameters();
            self.take_triggers();
            if self.requests.take_split() {
                self.split_now();
            }
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
            worked |= self.write_window();
            self.watch_pause();
            if self.health.due() {
                self.check_health(!worked);
            }
            if !worked {
                if let Err(error) = self.files.flush() {
                    self.fail(error);
                }
                self.split_if_due(0);
                self.watch_space();
                self.close_window_if_over();
                std::thread::park_timeout(self.idle_wait());
            }
        }
        self.write_markers();
        self.write_parameters();
        self.take_triggers();
        self.check_health(true);
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
            Item::Unselect(topic) => {
                self.retire(topic);
                self.health.forget(topic);
            }
            Item::Skipped(len) => self.rxs[ring].with_copied(len, |_| ()),
            Item::Mark(marker) => {
                self.requests.mark(marker);
                self.write_markers();
            }
            Item::Stop => return false,
        }
        true
    }

    fn announce(&mut self, topic: Arc<Topic>) {
        let index = topic.index as usize;
        if self.topics.len() <= index {
            self.topics.resize_with(index + 1, || None);
        }
        self.health.announce(&topic);
        let observer = self.files.observer();
        let tap = observer
            .taps(topic.index, &topic.name, &topic.channel)
            .then(|| observer.clone());
        self.topics[index] = Some(TopicSlot {
            max_gap_ns: self.health.max_gap_ns(topic.index),
            tap,
            topic,
            channel: None,
            sequence: 0,
            latched: None,
            file_health: FileHealth::default(),
        });
    }

    fn retire(&mut self, topic: u32) {
        if let Some(slot) = self.topics.get_mut(topic as usize).and_then(Option::as_mut) {
            slot.latched = None;
        }
    }

    fn write_copied(&mut self, ring: usize, topic: u32, stamps: Stamps, len: usize) {
        self.health.saw(topic, stamps.log_time);
        self.delay();
        let paused = self.requests.paused();
        let Self {
            rxs,
            files,
            topics,
            pre_trigger,
            ..
        } = self;
        // A pre-trigger session keeps its latched messages as they leave the buffer.
        let keeps_latched = pre_trigger.is_none();
        if let (Some(pre_trigger), false) = (pre_trigger, paused) {
            let tap = topics[topic as usize].as_ref().and_then(|s| s.tap.clone());
            rxs[ring].with_copied(len, |parts| {
                if let Some(tap) = tap {
                    tap.sample(topic, stamps.log_time, parts);
                }
                pre_trigger.keep(topics, topic, stamps, parts)
            });
            return;
        }
        let slot = topics[topic as usize]
            .as_mut()
            .expect("announced before its messages");
        let result = rxs[ring].with_copied(len, |parts| {
            if let Some(tap) = &slot.tap {
                tap.sample(topic, stamps.log_time, parts);
            }
            if slot.topic.latched && keeps_latched {
                keep_latched(slot, stamps, parts);
            }
            if paused {
                return Ok(());
            }
            write_counted(&mut files.current, slot, stamps, parts)
        });
        if paused {
            slot.topic.counters.add_paused();
            return;
        }
        self.account(topic, len, result);
        self.split_if_due(len);
        self.watch_space();
    }

    fn write_loaned(&mut self, ring: usize, topic: u32, stamps: Stamps, len: usize, mut sample: S) {
        self.health.saw(topic, stamps.log_time);
        let settled = sample.settle();
        self.delay();
        if !settled {
            // Given up by the source to free its loan for a waiting sample, the spill pool
            // being full.
            drop(sample);
            self.rxs[ring].release_loaned(len);
            if let Some(slot) = self.topics[topic as usize].as_ref() {
                slot.topic.counters.add_dropped();
            }
            return;
        }
        let lent = sample.with_parts(|parts| self.take_lent(topic, stamps, parts));
        // The bytes reached the kernel (or the write failed, or they were copied): the
        // source gets its memory back now.
        drop(sample);
        self.rxs[ring].release_loaned(len);
        match lent {
            Lent::Kept => {}
            Lent::Paused => {
                if let Some(slot) = self.topics[topic as usize].as_ref() {
                    slot.topic.counters.add_paused();
                }
            }
            Lent::Written(result) => {
                self.account(topic, len, result);
                self.split_if_due(len);
                self.watch_space();
            }
        }
    }

    /// What becomes of a lent message's `parts` while the source's memory is still lent:
    /// shown to a tap, kept for a pre-trigger window or as a latched message, written.
    fn take_lent(&mut self, topic: u32, stamps: Stamps, parts: &[&[u8]]) -> Lent {
        if let Some(tap) = self.topics[topic as usize]
            .as_ref()
            .and_then(|s| s.tap.as_ref())
        {
            tap.sample(topic, stamps.log_time, parts);
        }
        if let (Some(pre_trigger), false) = (&mut self.pre_trigger, self.requests.paused()) {
            // Copied and released at once: iceoryx2 lends a publisher only a couple of
            // samples.
            pre_trigger.keep(&mut self.topics, topic, stamps, parts);
            return Lent::Kept;
        }
        let keeps_latched = self.pre_trigger.is_none();
        let slot = self.topics[topic as usize]
            .as_mut()
            .expect("announced before its messages");
        if slot.topic.latched && keeps_latched {
            keep_latched(slot, stamps, parts);
        }
        if self.requests.paused() {
            return Lent::Paused;
        }
        Lent::Written(write_counted(&mut self.files.current, slot, stamps, parts))
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
                self.show_bytes_written();
            }
            Err(error) => {
                counters.add_dropped();
                if let Some(error) = error {
                    self.write_failed(error);
                }
            }
        }
    }

    /// Records a write error. After an I/O error the file (a trigger's window with it)
    /// ends on its last complete record; what follows is dropped and counted.
    fn write_failed(&mut self, error: WriteError) {
        let file_failed = matches!(error, WriteError::Io { .. });
        self.fail(error);
        if file_failed {
            self.end_window();
            self.files
                .end_current(ending_of(&self.topics, &self.health));
        }
    }

    fn show_bytes_written(&self) {
        self.progress
            .bytes_written
            .store(self.files.bytes_written(), Ordering::Relaxed);
    }

    /// Pauses writing (the current file finished) when the guard finds the disk nearly
    /// full, and resumes in a new file once there is room again.
    fn watch_space(&mut self) {
        if self.error.is_some() {
            return;
        }
        let Some(guard) = &mut self.guard else {
            return;
        };
        let Some(change) = guard.poll(self.files.bytes_written()) else {
            return;
        };
        match change {
            SpaceChange::Low(full) | SpaceChange::StillLow(full) => {
                self.end_window();
                self.files
                    .end_current(ending_of(&self.topics, &self.health));
                *self.progress.disk_full.lock().expect("progress lock") = Some(full);
            }
            SpaceChange::Back => {
                *self.progress.disk_full.lock().expect("progress lock") = None;
                if self.pre_trigger.is_some() {
                    // The next trigger opens the next file.
                    return;
                }
                match self.files.open_next() {
                    Ok(_) => self.repeat_latched(),
                    Err(error) => self.fail(error),
                }
            }
        }
    }

    fn fail(&mut self, error: WriteError) {
        if self.error.is_none() {
            *self.progress.error.lock().expect("progress lock") = Some(error.to_string());
            self.error = Some(error);
        }
    }

    fn delay(&self) {
        if let Some(delay) = self.delay {
            std::thread::sleep(delay);
        }
    }

    fn split_if_due(&mut self, just_written: usize) {
        // A paused session writes nothing: a split by duration would only give files of
        // latched repeats. A trigger's window is one file.
        if self.requests.paused()
            || self.pre_trigger.is_some()
            || !self.files.split_due(just_written)
        {
            return;
        }
        self.split_now();
    }

    /// Ends the current file and continues in a new one (a pre-trigger session's window
    /// stays one file).
    fn split_now(&mut self) {
        if self.pre_trigger.is_some() {
            return;
        }
        match self.files.start_next(ending_of(&self.topics, &self.health)) {
            Ok(()) => self.repeat_latched(),
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
            if let Err(Some(error)) = write_to(
                &mut self.files.current,
                slot,
                latched.stamps,
                &[&latched.bytes],
            ) {
                failure.get_or_insert(error);
            }
            slot.latched = Some(latched);
        }
        if let Some(error) = failure {
            self.fail(error);
        }
    }

    fn finish(mut self) -> WriterReport {
        self.finish_buffer();
        let (files, errors) = self.files.finish(ending_of(&self.topics, &self.health));
        WriterReport {
            files,
            error: self.error.or_else(|| errors.into_iter().next()),
        }
    }
}

/// What ending a file needs: every announced topic's counts as of now, by channel name,
/// the topics, and the file's health.
fn ending_of<'a>(topics: &'a [Option<TopicSlot>], health: &HealthMonitor) -> Ending<'a> {
    Ending {
        health: health::file_health(topics, health),
        counts: topics
            .iter()
            .flatten()
            .map(|slot| (slot.topic.name.as_str(), slot.topic.counters.snapshot()))
            .collect::<BTreeMap<_, _>>(),
        topics: topics
            .iter()
            .flatten()
            .map(|slot| slot.topic.clone())
            .collect(),
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

/// [`write_to`], counting the message in the topic's health in the file.
fn write_counted(
    file: &mut Option<StreamWriter>,
    slot: &mut TopicSlot,
    stamps: Stamps,
    parts: &[&[u8]],
) -> Result<(), NotWritten> {
    write_to(file, slot, stamps, parts)?;
    slot.file_health.add(stamps.log_time, slot.max_gap_ns);
    Ok(())
}

/// What became of a lent message (see `Writer::take_lent`).
enum Lent {
    /// Copied into a pre-trigger window.
    Kept,
    /// Not written: the session is paused.
    Paused,
    /// Written, or not, as the result says.
    Written(Result<(), NotWritten>),
}

/// Writes one message of `slot`'s topic (its channel first, in a new file); not counted
/// in the file's health (latched repeats are not).
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
            slot.file_health = FileHealth::default();
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
