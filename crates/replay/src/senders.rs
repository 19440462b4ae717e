//! The threads that send: one for topics of large messages and one for the others, so
//! that copying a camera frame into its loan (or handing it to DDS) does not hold up a
//! 1 kHz topic, as the
//! recorded publishers did not hold each other up. A topic stays on one thread, so its
//! messages keep their order.

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{sync_channel, SyncSender};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Instant;

use bytes::Bytes;
use recd_storage::RecordedChannel;

use crate::outputs::Output;
use crate::pacing::{wait_until, LATE_AFTER};
use crate::PlayedTopic;
use recd_engine::LatenessHistogram;

/// Messages at least this large go to the thread for large messages.
const LARGE: usize = 64 << 10;

/// Messages queued per thread: few large ones (each may be megabytes), more small ones.
const QUEUED_LARGE: usize = 4;
const QUEUED_SMALL: usize = 256;

/// Messages sent and late so far, over every thread.
#[derive(Debug, Default)]
pub struct Totals {
    pub sent: AtomicU64,
    pub late: AtomicU64,
}

/// One message of `channel` for a sending thread: leave at `due`.
struct Job {
    channel: Arc<RecordedChannel>,
    due: Instant,
    data: Bytes,
}

struct Sender {
    queue: SyncSender<Job>,
    thread: JoinHandle<BTreeMap<String, PlayedTopic>>,
}

/// The sending threads and which topic goes to which.
pub struct Senders {
    threads: Vec<Sender>,
    route: HashMap<String, usize>,
}

impl Senders {
    /// Starts the threads; they send on `outputs` until [`Self::finish`].
    pub fn start(
        outputs: Arc<BTreeMap<String, Output>>,
        cancel: Arc<AtomicBool>,
        totals: Arc<Totals>,
    ) -> std::io::Result<Self> {
        let mut threads = Vec::new();
        for (name, depth) in [
            ("recd-play-small", QUEUED_SMALL),
            ("recd-play-large", QUEUED_LARGE),
        ] {
            let (queue, jobs) = sync_channel::<Job>(depth);
            let outputs = outputs.clone();
            let cancel = cancel.clone();
            let totals = totals.clone();
            let thread = std::thread::Builder::new()
                .name(name.into())
                .spawn(move || {
                    let mut played: BTreeMap<String, (PlayedTopic, LatenessHistogram)> =
                        BTreeMap::new();
                    let mut last_due: Option<Instant> = None;
                    for job in jobs {
                        // Never before the message queued ahead of it.
                        let due = last_due.map_or(job.due, |last| last.max(job.due));
                        last_due = Some(due);
                        let lateness = wait_until(due, &cancel);
                        if cancel.load(Ordering::Relaxed) {
                            break;
                        }
                        let topic = job.channel.topic.as_str();
                        if !played.contains_key(topic) {
                            let first = PlayedTopic {
                                name: topic.to_string(),
                                ..PlayedTopic::default()
                            };
                            played.insert(topic.to_string(), (first, LatenessHistogram::default()));
                        }
                        let (stats, lateness_of_topic) =
                            played.get_mut(topic).expect("inserted above");
                        match outputs[topic].send(job.data) {
                            Ok(()) => {
                                stats.sent += 1;
                                totals.sent.fetch_add(1, Ordering::Relaxed);
                                lateness_of_topic.add(lateness);
                                if lateness > LATE_AFTER {
                                    stats.late += 1;
                                    totals.late.fetch_add(1, Ordering::Relaxed);
                                }
                            }
                            Err(reason) => {
                                stats.failed += 1;
                                stats.error.get_or_insert(reason);
                            }
                        }
                    }
                    (played.into_iter())
                        .map(|(name, (topic, lateness))| (name, topic.with_lateness(&lateness)))
                        .collect::<BTreeMap<_, _>>()
                })?;
            threads.push(Sender { queue, thread });
        }
        Ok(Self {
            threads,
            route: HashMap::new(),
        })
    }

    /// Queues a message of `channel` to leave at `due`; a topic's first message decides
    /// its thread. Waits while that thread's queue is full.
    pub fn send(&mut self, channel: Arc<RecordedChannel>, due: Instant, data: Bytes) {
        let thread = match self.route.get(&channel.topic) {
            Some(&thread) => thread,
            None => {
                let thread = usize::from(data.len() >= LARGE);
                self.route.insert(channel.topic.clone(), thread);
                thread
            }
        };
        // A thread ends early only when cancelled; the message is then not wanted.
        let _ = self.threads[thread].queue.send(Job { channel, due, data });
    }

    /// Lets the threads send what is queued, and returns what each topic sent.
    pub fn finish(self) -> BTreeMap<String, PlayedTopic> {
        let mut played = BTreeMap::new();
        for sender in self.threads {
            drop(sender.queue);
            played.extend(
                sender
                    .thread
                    .join()
                    .expect("a sending thread does not panic"),
            );
        }
        played
    }
}
