//! The messages to play, read ahead on threads of their own so that reading a large
//! message from disk does not make the ones after it late: selected channels only, from
//! `--start` to `--until`.
//!
//! Each stream reads ahead of the playback by at most [`AHEAD_TIME`] of the recording and
//! [`AHEAD_BYTES`] (whichever is less), and asks the kernel for the next
//! [`PREFETCH_BYTES`] of the file before it needs them, so that several requests are in
//! flight and the disk runs at its speed rather than one page fault at a time. With
//! `--on-late drop`, a message the playback is already past by more than its topic's
//! interval is skipped unread.
//!
//! The files are read as streams: a stream is the files of one source family (a mixed
//! session writes iceoryx2 and DDS files side by side), read one after the other in the
//! order given, a latched topic's repeat at the start of a split file left out. Each
//! stream is read on a thread of its own and the streams are merged by time.

use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::ops::ControlFlow;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use bytes::Bytes;
use recd_storage::iceoryx2 as keys;
use recd_storage::{
    for_each_message, for_each_message_skipping, Damage, MessagesError, RecordedChannel,
    RecordedMessage,
};

use crate::timeline::{nanos, Timeline};
use crate::OnLate;

/// How far ahead of the playback a stream reads, in recorded time ...
pub const AHEAD_TIME: Duration = Duration::from_millis(500);
/// ... and in bytes of messages not yet sent.
pub const AHEAD_BYTES: u64 = 512 << 20;
/// How far ahead of the message it reads a stream asks the kernel to read the file.
pub const PREFETCH_BYTES: usize = 64 << 20;
/// A stream asks again after reading this many bytes.
const PREFETCH_EVERY: usize = 8 << 20;
/// How often a stream that is far enough ahead looks again.
const AHEAD_POLL: Duration = Duration::from_millis(1);

/// What the reader hands the player, in order.
pub enum Queued {
    /// A message of `channel` to play at `position` (its recorded time after the first
    /// message's, `--start` taken off; in the pass, not on the timeline).
    Message {
        channel: Arc<RecordedChannel>,
        position: Duration,
        data: Bytes,
        held: Held,
    },
    /// A message of `channel` skipped unread by `--on-late drop`.
    Dropped(Arc<RecordedChannel>),
    /// A file's readable records end early; what came before it was queued.
    Damaged(PathBuf, Damage),
    /// A file could not be read.
    Failed(MessagesError),
    /// The pass ended: at the end of the last file (true) or at `--until` (false).
    End(bool),
}

/// Which messages a pass reads.
pub struct ReadPlan<'a> {
    /// Each stream's files, in the order they play.
    pub streams: &'a [Vec<PathBuf>],
    pub topics: &'a HashSet<String>,
    pub start: Duration,
    pub until: Option<Duration>,
    pub use_publish_time: bool,
    pub on_late: OnLate,
    pub timeline: &'a Timeline,
    /// Where the pass starts on the timeline (after the passes before it, `--loop`).
    pub offset: Duration,
}

/// How a pass's reading is going, shared by its threads and the player.
#[derive(Debug, Default)]
pub struct ReadState {
    /// The recorded time (ns since the epoch) of position 0, once the merge knows it.
    origin: OnceLock<u64>,
    /// Streams that are as far ahead as they may be, or ended.
    filled: AtomicUsize,
    /// The pass is over: stream threads stop.
    stop: AtomicBool,
}

impl ReadState {
    /// Streams that are as far ahead as they may be, or ended, so far.
    pub fn filled(&self) -> usize {
        self.filled.load(Ordering::Relaxed)
    }
}

/// A message's bytes counted against its stream's read-ahead until dropped.
#[derive(Debug)]
pub struct Held {
    bytes: u64,
    in_flight: Arc<AtomicU64>,
}

impl Drop for Held {
    fn drop(&mut self) {
        self.in_flight.fetch_sub(self.bytes, Ordering::Relaxed);
    }
}

/// What a stream's thread hands the merge, in order.
enum Streamed {
    /// A message recorded at `time` (ns since the epoch).
    Message {
        channel: Arc<RecordedChannel>,
        time: u64,
        data: Bytes,
        held: Held,
    },
    Dropped(Arc<RecordedChannel>),
    Damaged(PathBuf, Damage),
    Failed(MessagesError),
}

/// Reads one pass into `queue`, stopping early when the player hangs up.
pub fn read_pass(plan: &ReadPlan<'_>, state: &ReadState, queue: &Sender<Queued>) {
    std::thread::scope(|scope| {
        let mut streams = Vec::new();
        for files in plan.streams {
            let (tx, rx) = channel();
            scope.spawn(move || read_stream(files, plan, state, &tx));
            streams.push(Head { rx, next: None });
        }
        merge(&mut streams, plan, state, queue);
        // Stops the stream threads, also those waiting to read ahead.
        state.stop.store(true, Ordering::Relaxed);
    });
}

/// A stream in the merge: its channel and its next message, once received.
struct Head {
    rx: Receiver<Streamed>,
    next: Option<(u64, Arc<RecordedChannel>, Bytes, Held)>,
}

/// Queues the streams' messages by time; what is not a message is passed on at once.
fn merge(streams: &mut Vec<Head>, plan: &ReadPlan<'_>, state: &ReadState, queue: &Sender<Queued>) {
    let mut origin = None;
    loop {
        let mut index = 0;
        while index < streams.len() {
            let head = &mut streams[index];
            while head.next.is_none() {
                match head.rx.recv() {
                    Ok(Streamed::Message {
                        channel,
                        time,
                        data,
                        held,
                    }) => head.next = Some((time, channel, data, held)),
                    Ok(Streamed::Dropped(channel)) => {
                        if queue.send(Queued::Dropped(channel)).is_err() {
                            return;
                        }
                    }
                    Ok(Streamed::Damaged(file, damage)) => {
                        if queue.send(Queued::Damaged(file, damage)).is_err() {
                            return;
                        }
                    }
                    Ok(Streamed::Failed(error)) => {
                        let _ = queue.send(Queued::Failed(error));
                        return;
                    }
                    // The stream ended.
                    Err(_) => break,
                }
            }
            if head.next.is_none() {
                streams.remove(index);
            } else {
                index += 1;
            }
        }
        let Some(earliest) = streams
            .iter()
            .enumerate()
            .min_by_key(|(_, head)| head.next.as_ref().map(|next| next.0))
            .map(|(index, _)| index)
        else {
            let _ = queue.send(Queued::End(true));
            return;
        };
        let (time, channel, data, held) = streams[earliest].next.take().expect("filled above");
        let origin = *origin.get_or_insert_with(|| {
            state.origin.get_or_init(|| time);
            plan.timeline
                .set_recorded_time(time.saturating_add(nanos(plan.start)), plan.offset);
            time
        });
        let position = Duration::from_nanos(time.saturating_sub(origin));
        if position < plan.start {
            continue;
        }
        if plan.until.is_some_and(|until| position > until) {
            let _ = queue.send(Queued::End(false));
            return;
        }
        let queued = Queued::Message {
            channel,
            position: position - plan.start,
            data,
            held,
        };
        if queue.send(queued).is_err() {
            return;
        }
    }
}

/// Reads one stream's files in order into `queue`, until the end or until the merge hangs
/// up.
fn read_stream(
    files: &[PathBuf],
    plan: &ReadPlan<'_>,
    state: &ReadState,
    queue: &Sender<Streamed>,
) {
    // Per latched topic: the time and CRC of the last message queued, to recognize its
    // repeat at the start of the next split file.
    let mut last_latched: BTreeMap<String, (u64, u32)> = BTreeMap::new();
    let mut ahead = ReadAhead {
        plan,
        state,
        in_flight: Arc::new(AtomicU64::new(0)),
        filled: false,
        previous: HashMap::new(),
        reads: VecDeque::new(),
    };
    for (index, file) in files.iter().enumerate() {
        let mut hung_up = false;
        // Latched topics met in this file so far.
        let mut seen_in_file: HashSet<String> = HashSet::new();
        let mut read_since_prefetch = usize::MAX;
        let visit = |message: RecordedMessage<'_>| {
            let topic = &message.channel.topic;
            if !plan.topics.contains(topic) {
                return ControlFlow::Continue(());
            }
            let time = if plan.use_publish_time && message.publish_time != 0 {
                message.publish_time
            } else {
                message.log_time
            };
            if is_latched(message.channel) {
                let first_in_file = seen_in_file.insert(topic.clone());
                let stamp = (time, crc32fast::hash(message.data));
                let repeat =
                    index > 0 && first_in_file && last_latched.get(topic.as_str()) == Some(&stamp);
                last_latched.insert(topic.clone(), stamp);
                if repeat {
                    return ControlFlow::Continue(());
                }
            }
            let streamed = match ahead.admit(topic, time, message.data.len()) {
                Admit::Stop => {
                    hung_up = true;
                    return ControlFlow::Break(());
                }
                Admit::Drop => Streamed::Dropped(message.channel.clone()),
                Admit::Read(held) => {
                    if plan.on_late == OnLate::Drop {
                        // Only what it sends: reading ahead would read what it skips.
                        message.read_ahead(0);
                    } else if read_since_prefetch >= PREFETCH_EVERY {
                        message.read_ahead(PREFETCH_BYTES);
                        read_since_prefetch = 0;
                    }
                    read_since_prefetch = read_since_prefetch.saturating_add(message.data.len());
                    let reading = Instant::now();
                    let data = message.to_bytes();
                    ahead.took(data.len(), reading.elapsed());
                    Streamed::Message {
                        channel: message.channel.clone(),
                        time,
                        data,
                        held,
                    }
                }
            };
            if queue.send(streamed).is_err() {
                hung_up = true;
                return ControlFlow::Break(());
            }
            ControlFlow::Continue(())
        };
        // Dropping reads only what it sends.
        let read = match plan.on_late {
            OnLate::Drop => for_each_message_skipping(file, visit),
            _ => for_each_message(file, visit),
        };
        let sent = match read {
            Ok(read) => match read.damage {
                Some(damage) => queue.send(Streamed::Damaged(file.clone(), damage)),
                None => Ok(()),
            },
            Err(error) => {
                let _ = queue.send(Streamed::Failed(error));
                return;
            }
        };
        if hung_up || sent.is_err() {
            return;
        }
    }
}

/// A stream's read-ahead: how far it may read before the playback catches up.
struct ReadAhead<'a> {
    plan: &'a ReadPlan<'a>,
    state: &'a ReadState,
    /// Bytes read and not yet sent.
    in_flight: Arc<AtomicU64>,
    /// It said once that it is as far ahead as it may be.
    filled: bool,
    /// Per topic, the recorded time of its previous message.
    previous: HashMap<String, u64>,
    /// The last large messages read: their sizes and how long each took.
    reads: VecDeque<(usize, Duration)>,
}

/// Large messages whose reading tells how fast the disk reads now.
const READS_MEASURED: usize = 16;

/// The lead a stream keeps over the playback with `--on-late drop`, beyond twice the time
/// a large message takes to read: a disk shared or throttled reads in bursts (a cgroup's
/// limit, in slices of 100 ms), so a message may take that much longer than the mean.
const DROP_MARGIN: Duration = Duration::from_millis(120);

/// Messages at least this large tell how fast the disk reads.
const MEASURED_READ: usize = 64 << 10;

/// What to do with the next message of a stream.
enum Admit {
    /// Read it; its bytes count until `Held` is dropped.
    Read(Held),
    /// Skip it (`--on-late drop`).
    Drop,
    /// The pass is over.
    Stop,
}

impl ReadAhead<'_> {
    /// Waits until a message of `topic` recorded at `time`, `len` bytes, may be read.
    fn admit(&mut self, topic: &str, time: u64, len: usize) -> Admit {
        let period = self
            .previous
            .insert(topic.to_string(), time)
            .map(|previous| Duration::from_nanos(time.saturating_sub(previous)));
        let bytes = len as u64;
        // Its position in the pass, once the merge knows where the pass starts.
        let position = self.state.origin.get().and_then(|origin| {
            Duration::from_nanos(time.saturating_sub(*origin))
                .checked_sub(self.plan.start)
                .map(|position| position + self.plan.offset)
        });
        let timeline = self.plan.timeline;
        if let (OnLate::Drop, Some(position)) = (self.plan.on_late, position) {
            if self.too_late(position, period, len) {
                return Admit::Drop;
            }
        }
        loop {
            if self.state.stop.load(Ordering::Relaxed) {
                return Admit::Stop;
            }
            let in_flight = self.in_flight.load(Ordering::Relaxed);
            let too_many_bytes = in_flight > 0 && in_flight + bytes > AHEAD_BYTES;
            let too_early = in_flight > 0
                && position.is_some_and(|position| position > timeline.position() + AHEAD_TIME);
            if !too_many_bytes && !too_early {
                break;
            }
            self.say_filled();
            std::thread::sleep(AHEAD_POLL);
        }
        self.in_flight.fetch_add(bytes, Ordering::Relaxed);
        Admit::Read(Held {
            bytes,
            in_flight: self.in_flight.clone(),
        })
    }
}

impl ReadAhead<'_> {
    /// Whether a message at `position`, `len` bytes, `period` after its topic's previous
    /// one, is to be skipped (`--on-late drop`): the playback is past it by more than
    /// its period, or reading it at the speed the disk reads would leave too little time
    /// before it is due.
    fn too_late(&self, position: Duration, period: Option<Duration>, len: usize) -> bool {
        let timeline = self.plan.timeline;
        if !timeline.started() {
            return false;
        }
        let now = timeline.position();
        if period.is_some_and(|period| now.saturating_sub(position) > period) {
            return true;
        }
        let left = position.saturating_sub(now).div_f64(timeline.rate());
        let reading = if len >= MEASURED_READ {
            self.reading_time(len)
        } else {
            Duration::ZERO
        };
        // Reading it must leave the stream a lead, or the small messages after it in the
        // file would be late in turn.
        !reading.is_zero() && left < reading * 2 + DROP_MARGIN
    }

    /// Notes that reading `len` bytes took `took`.
    fn took(&mut self, len: usize, took: Duration) {
        if len < MEASURED_READ {
            return;
        }
        if self.reads.len() == READS_MEASURED {
            self.reads.pop_front();
        }
        self.reads.push_back((len, took));
    }

    /// How long reading `len` bytes takes at the speed the last large messages were read
    /// (zero before the first).
    fn reading_time(&self, len: usize) -> Duration {
        let bytes: usize = self.reads.iter().map(|(bytes, _)| bytes).sum();
        let took: Duration = self.reads.iter().map(|(_, took)| *took).sum();
        if bytes == 0 {
            return Duration::ZERO;
        }
        took.mul_f64(len as f64 / bytes as f64)
    }

    /// Says once that the stream is as far ahead as it may be.
    fn say_filled(&mut self) {
        if !self.filled {
            self.filled = true;
            self.state.filled.fetch_add(1, Ordering::Relaxed);
        }
    }
}

impl Drop for ReadAhead<'_> {
    /// A stream that ended is as far ahead as it gets.
    fn drop(&mut self) {
        self.say_filled();
    }
}

/// Whether the recorder repeats the channel's last message at the start of each split
/// file (an iceoryx2 service with a history).
fn is_latched(channel: &RecordedChannel) -> bool {
    channel
        .metadata
        .get(keys::HISTORY_SIZE)
        .is_some_and(|h| h != "0")
}

/// The first two bytes of each of `topics`' first message (a DDS sample's representation
/// identifier), reading `files` only as far as needed.
pub fn first_representations(
    files: &[PathBuf],
    topics: &HashSet<String>,
) -> Result<HashMap<String, [u8; 2]>, MessagesError> {
    let mut found = HashMap::new();
    for file in files {
        if found.len() == topics.len() {
            break;
        }
        for_each_message(file, |message| {
            let topic = &message.channel.topic;
            if topics.contains(topic) && !found.contains_key(topic) {
                if let [first, second, ..] = *message.data {
                    found.insert(topic.clone(), [first, second]);
                }
            }
            if found.len() == topics.len() {
                ControlFlow::Break(())
            } else {
                ControlFlow::Continue(())
            }
        })?;
    }
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Instant;

    const MS: Duration = Duration::from_millis(1);

    fn plan<'a>(timeline: &'a Timeline, topics: &'a HashSet<String>) -> ReadPlan<'a> {
        ReadPlan {
            streams: &[],
            topics,
            start: Duration::ZERO,
            until: None,
            use_publish_time: false,
            on_late: OnLate::Drop,
            timeline,
            offset: Duration::ZERO,
        }
    }

    /// A started timeline standing (paused) about 1 s into the recording, so that the
    /// checks do not race the clock.
    fn standing_at_one_second() -> Timeline {
        let timeline = Timeline::new(1.0, false);
        timeline.start(Instant::now() - Duration::from_secs(1));
        timeline.pause();
        timeline
    }

    fn ahead<'a>(plan: &'a ReadPlan<'a>, state: &'a ReadState) -> ReadAhead<'a> {
        ReadAhead {
            plan,
            state,
            in_flight: Arc::new(AtomicU64::new(0)),
            filled: true,
            previous: HashMap::new(),
            reads: VecDeque::new(),
        }
    }

    #[test]
    fn nothing_is_too_late_before_the_playback_starts() {
        let timeline = Timeline::new(1.0, false);
        let (topics, state) = (HashSet::new(), ReadState::default());
        let plan = plan(&timeline, &topics);
        let mut reader = ahead(&plan, &state);
        reader.took(6 << 20, 100 * MS);
        assert!(!reader.too_late(Duration::ZERO, Some(MS), 6 << 20));
    }

    #[test]
    fn a_message_the_playback_is_past_by_more_than_its_period_is_skipped() {
        let timeline = standing_at_one_second();
        let (topics, state) = (HashSet::new(), ReadState::default());
        let plan = plan(&timeline, &topics);
        let reader = ahead(&plan, &state);
        assert!(reader.too_late(900 * MS, Some(50 * MS), 100));
        assert!(!reader.too_late(990 * MS, Some(50 * MS), 100));
        // Small messages are not measured: one due soon is read.
        assert!(!reader.too_late(1_010 * MS, Some(50 * MS), 100));
    }

    #[test]
    fn a_large_message_is_skipped_when_reading_it_would_leave_too_little_lead() {
        let timeline = standing_at_one_second();
        let (topics, state) = (HashSet::new(), ReadState::default());
        let plan = plan(&timeline, &topics);
        let mut reader = ahead(&plan, &state);
        // 100 MB/s, in bursts: one read quick, one slow.
        reader.took(10_000_000, MS);
        reader.took(10_000_000, 199 * MS);
        assert_eq!(reader.reading_time(6_000_000), 60 * MS);
        // 6 MB takes 60 ms: it needs 2 × 60 + 120 ms before it is due.
        assert!(reader.too_late(1_200 * MS, None, 6_000_000));
        assert!(!reader.too_late(1_300 * MS, None, 6_000_000));
        // Only the last READS_MEASURED count.
        for _ in 0..READS_MEASURED {
            reader.took(10_000_000, 10 * MS);
        }
        assert_eq!(reader.reading_time(6_000_000), 6 * MS);
    }
}
