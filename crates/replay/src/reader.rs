//! The messages to play, read ahead on a thread of their own so that reading a large
//! message from disk does not make the ones after it late: selected channels only, from
//! `--start` to `--until`, split files as one stream (a latched topic's repeat at the start
//! of a split file is left out).

use std::collections::{BTreeMap, HashSet};
use std::ops::ControlFlow;
use std::path::PathBuf;
use std::sync::mpsc::SyncSender;
use std::sync::Arc;
use std::time::Duration;

use recd_storage::iceoryx2 as keys;
use recd_storage::{for_each_message, Damage, MessagesError, RecordedChannel};

/// Messages read ahead of the one being played.
pub const READ_AHEAD: usize = 32;

/// What the reader hands the player, in order.
pub enum Queued {
    /// A message of `channel` to play at `position` (its recorded time after the first
    /// message's, `--start` taken off).
    Message {
        channel: Arc<RecordedChannel>,
        position: Duration,
        data: Vec<u8>,
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
    pub files: &'a [PathBuf],
    pub topics: &'a HashSet<String>,
    pub start: Duration,
    pub until: Option<Duration>,
    pub use_publish_time: bool,
}

/// Reads one pass into `queue`, stopping early when the player hangs up.
pub fn read_pass(plan: &ReadPlan<'_>, queue: &SyncSender<Queued>) {
    let mut origin = None;
    // Per latched topic: the time and CRC of the last message queued, to recognize its
    // repeat at the start of the next split file.
    let mut last_latched: BTreeMap<String, (u64, u32)> = BTreeMap::new();
    let mut hung_up = false;
    let mut at_until = false;
    for (index, file) in plan.files.iter().enumerate() {
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
            let origin = *origin.get_or_insert(time);
            let position = Duration::from_nanos(time.saturating_sub(origin));
            if position < plan.start {
                return ControlFlow::Continue(());
            }
            if plan.until.is_some_and(|until| position > until) {
                at_until = true;
                return ControlFlow::Break(());
            }
            let queued = Queued::Message {
                channel: message.channel.clone(),
                position: position - plan.start,
                data: message.data.to_vec(),
            };
            if queue.send(queued).is_err() {
                hung_up = true;
                return ControlFlow::Break(());
            }
            ControlFlow::Continue(())
        });
        match read {
            Ok(read) => {
                if let Some(damage) = read.damage {
                    hung_up |= queue.send(Queued::Damaged(file.clone(), damage)).is_err();
                }
            }
            Err(error) => {
                let _ = queue.send(Queued::Failed(error));
                return;
            }
        }
        if hung_up {
            return;
        }
        if at_until {
            let _ = queue.send(Queued::End(false));
            return;
        }
    }
    let _ = queue.send(Queued::End(true));
}

/// Whether the recorder repeats the channel's last message at the start of each split
/// file (an iceoryx2 service with a history).
fn is_latched(channel: &RecordedChannel) -> bool {
    channel
        .metadata
        .get(keys::HISTORY_SIZE)
        .is_some_and(|h| h != "0")
}
