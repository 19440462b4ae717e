//! The messages to play, read ahead on threads of their own so that reading a large
//! message from disk does not make the ones after it late: selected channels only, from
//! `--start` to `--until`.
//!
//! The files are read as streams: a stream is the files of one source family (a mixed
//! session writes iceoryx2 and DDS files side by side), read one after the other in the
//! order given, a latched topic's repeat at the start of a split file left out. Each
//! stream is read on a thread of its own and the streams are merged by time.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::ops::ControlFlow;
use std::path::PathBuf;
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use recd_storage::iceoryx2 as keys;
use recd_storage::{for_each_message, Damage, MessagesError, RecordedChannel};

/// Messages read ahead of the one being played, per stream.
pub const READ_AHEAD: usize = 32;

/// What the reader hands the player, in order.
pub enum Queued {
    /// A message of `channel` to play at `position` (its recorded time after the first
    /// message's, `--start` taken off).
    Message {
        channel: Arc<RecordedChannel>,
        position: Duration,
        data: Bytes,
    },
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
}

/// What a stream's thread hands the merge, in order.
enum Streamed {
    /// A message recorded at `time` (ns since the epoch).
    Message {
        channel: Arc<RecordedChannel>,
        time: u64,
        data: Bytes,
    },
    Damaged(PathBuf, Damage),
    Failed(MessagesError),
}

/// Reads one pass into `queue`, stopping early when the player hangs up.
pub fn read_pass(plan: &ReadPlan<'_>, queue: &SyncSender<Queued>) {
    std::thread::scope(|scope| {
        let mut streams = Vec::new();
        for files in plan.streams {
            let (tx, rx) = sync_channel(READ_AHEAD);
            scope.spawn(move || read_stream(files, plan, &tx));
            streams.push(Head { rx, next: None });
        }
        merge(&mut streams, plan, queue);
        // Dropping the receiving ends stops the stream threads at their next message.
    });
}

/// A stream in the merge: its channel and its next message, once received.
struct Head {
    rx: Receiver<Streamed>,
    next: Option<(u64, Arc<RecordedChannel>, Bytes)>,
}

/// Queues the streams' messages by time; what is not a message is passed on at once.
fn merge(streams: &mut Vec<Head>, plan: &ReadPlan<'_>, queue: &SyncSender<Queued>) {
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
                    }) => head.next = Some((time, channel, data)),
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
        let (time, channel, data) = streams[earliest].next.take().expect("filled above");
        let origin = *origin.get_or_insert(time);
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
        };
        if queue.send(queued).is_err() {
            return;
        }
    }
}

/// Reads one stream's files in order into `queue`, until the end or until the merge hangs
/// up.
fn read_stream(files: &[PathBuf], plan: &ReadPlan<'_>, queue: &SyncSender<Streamed>) {
    // Per latched topic: the time and CRC of the last message queued, to recognize its
    // repeat at the start of the next split file.
    let mut last_latched: BTreeMap<String, (u64, u32)> = BTreeMap::new();
    for (index, file) in files.iter().enumerate() {
        let mut hung_up = false;
        // Latched topics met in this file so far.
        let mut seen_in_file: HashSet<String> = HashSet::new();
        let read = for_each_message(file, |message| {
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
            let streamed = Streamed::Message {
                channel: message.channel.clone(),
                time,
                data: message.to_bytes(),
            };
            if queue.send(streamed).is_err() {
                hung_up = true;
                return ControlFlow::Break(());
            }
            ControlFlow::Continue(())
        });
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
