//! The threads that send: each topic of large messages has one of its own (up to
//! [`LARGE_THREADS`], then they share), the small topics share one, so that copying one
//! camera's frame into its loan never delays another camera, nor a 1 kHz topic, as the
//! recorded publishers did not hold each other up. A topic stays on one thread, so its
//! messages keep their order.
//!
//! A thread makes its next message ready (copied into its iceoryx2 loan) as soon as it
//! has it, then waits on the [`Timeline`] and sends it when due. Paused, it gives the
//! loan back and waits.

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{channel, Receiver, Sender as Queue};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use bytes::Bytes;
use recd_engine::LatenessHistogram;
use recd_storage::RecordedChannel;

use crate::outputs::Output;
use crate::reader::Held;
use crate::timeline::{Timeline, Wait, LATE_AFTER};
use crate::{OnLate, PlayedTopic};

/// Messages at least this large get a thread of their topic's own.
const LARGE: usize = 64 << 10;

/// Threads for topics of large messages at most; more such topics share them.
const LARGE_THREADS: usize = 16;

/// Messages sent, late and dropped so far, over every thread.
#[derive(Debug, Default)]
pub struct Totals {
    pub sent: AtomicU64,
    pub late: AtomicU64,
    pub dropped: AtomicU64,
}

/// One message for a sending thread.
pub struct Job {
    /// Its number in play order.
    pub index: u64,
    pub channel: Arc<RecordedChannel>,
    /// Its position on the timeline.
    pub position: Duration,
    /// The recorded time since the topic's previous message (`--on-late drop`).
    pub period: Option<Duration>,
    /// The pass of the playback (`--loop`) it belongs to, from 0.
    pub pass: u32,
    pub data: Bytes,
    /// Its place in the read-ahead, given back when the job is done.
    pub _held: Held,
}

/// What every sending thread shares.
#[derive(Clone)]
pub struct Shared {
    pub outputs: Arc<BTreeMap<String, Output>>,
    pub timeline: Arc<Timeline>,
    pub cancel: Arc<AtomicBool>,
    pub totals: Arc<Totals>,
    pub on_late: OnLate,
}

struct Thread {
    queue: Queue<Job>,
    handle: JoinHandle<BTreeMap<String, PlayedTopic>>,
}

/// The sending threads and which topic goes to which.
pub struct Senders {
    shared: Shared,
    /// The thread of small topics first, then the large topics' ones.
    threads: Vec<Thread>,
    route: HashMap<String, usize>,
}

impl Senders {
    /// Starts the thread for small topics; the others start with their topic's first
    /// message. They send until [`Self::finish`].
    pub fn start(shared: Shared) -> std::io::Result<Self> {
        let small = spawn("recd-play-small".into(), shared.clone(), true)?;
        Ok(Self {
            shared,
            threads: vec![small],
            route: HashMap::new(),
        })
    }

    /// Hands a message to its topic's thread; a topic's first message decides which.
    pub fn send(&mut self, job: Job) -> std::io::Result<()> {
        let thread = match self.route.get(&job.channel.topic) {
            Some(&thread) => thread,
            None => {
                let thread = if job.data.len() < LARGE {
                    0
                } else if self.threads.len() <= LARGE_THREADS {
                    let name = format!("recd-play-{}", self.threads.len());
                    self.threads.push(spawn(name, self.shared.clone(), false)?);
                    self.threads.len() - 1
                } else {
                    1 + self.route.len() % LARGE_THREADS
                };
                self.route.insert(job.channel.topic.clone(), thread);
                thread
            }
        };
        // A thread ends early only when cancelled; the message is then not wanted.
        let _ = self.threads[thread].queue.send(job);
        Ok(())
    }

    /// The topics they send.
    pub fn topics(&self) -> std::collections::HashSet<String> {
        self.shared.outputs.keys().cloned().collect()
    }

    /// Lets the threads send what is queued, and returns what each topic sent.
    pub fn finish(&mut self) -> BTreeMap<String, PlayedTopic> {
        let mut played = BTreeMap::new();
        for thread in std::mem::take(&mut self.threads) {
            drop(thread.queue);
            played.extend(
                thread
                    .handle
                    .join()
                    .expect("a sending thread does not panic"),
            );
        }
        played
    }
}

/// Starts a sending thread; `boost` for the small topics' one, which does little but must
/// wake on time for each of many messages, beside the large topics' copies and the
/// subscribers (where permitted: a nice boost, not real time).
fn spawn(name: String, shared: Shared, boost: bool) -> std::io::Result<Thread> {
    let (queue, jobs) = channel::<Job>();
    let handle = std::thread::Builder::new().name(name).spawn(move || {
        if boost {
            recd_engine::nice_this_thread();
        }
        send_all(&jobs, &shared)
    })?;
    Ok(Thread { queue, handle })
}

/// A topic's counts and lateness on one thread.
#[derive(Default)]
struct Tally {
    topic: PlayedTopic,
    lateness: LatenessHistogram,
}

/// Sends every job of `jobs` when due, until they end or the playback is cancelled.
fn send_all(jobs: &Receiver<Job>, shared: &Shared) -> BTreeMap<String, PlayedTopic> {
    let mut tallies: BTreeMap<String, Tally> = BTreeMap::new();
    for job in jobs {
        if shared.cancel.load(Ordering::Relaxed) {
            break;
        }
        let topic = job.channel.topic.as_str();
        if !tallies.contains_key(topic) {
            let mut tally = Tally::default();
            tally.topic.name = topic.to_string();
            tallies.insert(topic.to_string(), tally);
        }
        let tally = tallies.get_mut(topic).expect("inserted above");
        match send_one(&job, shared) {
            Sent::Yes(lateness) => {
                tally.topic.sent += 1;
                shared.totals.sent.fetch_add(1, Ordering::Relaxed);
                tally.lateness.add(lateness);
                if lateness > LATE_AFTER {
                    tally.topic.late += 1;
                    shared.totals.late.fetch_add(1, Ordering::Relaxed);
                }
            }
            Sent::Dropped => {
                tally.topic.dropped += 1;
                shared.totals.dropped.fetch_add(1, Ordering::Relaxed);
            }
            Sent::Failed(reason) => {
                tally.topic.failed += 1;
                tally.topic.error.get_or_insert(reason);
            }
            Sent::Nothing => {}
            Sent::Cancelled => break,
        }
    }
    (tallies.into_iter())
        .map(|(name, tally)| (name, tally.topic.with_lateness(&tally.lateness)))
        .collect()
}

/// How a job ended.
enum Sent {
    /// Sent, this late.
    Yes(Duration),
    /// Left out by `--on-late drop`.
    Dropped,
    Failed(String),
    /// Nothing to send: a service event that is no new request (`--services-as-calls`).
    Nothing,
    Cancelled,
}

/// Makes the job's message ready, waits until it is due and sends it.
fn send_one(job: &Job, shared: &Shared) -> Sent {
    let timeline = &shared.timeline;
    let output = &shared.outputs[&job.channel.topic];
    loop {
        if shared.on_late == OnLate::Drop
            && job
                .period
                .is_some_and(|period| timeline.behind(job.position) > period)
        {
            return Sent::Dropped;
        }
        let prepared = match output.prepare(&job.channel, &job.data, job.pass) {
            Ok(prepared) => prepared,
            Err(reason) => return Sent::Failed(reason),
        };
        match timeline.wait(job.index, job.position, &shared.cancel) {
            Wait::Due(lateness) => {
                match shared.on_late {
                    OnLate::Stretch if lateness > LATE_AFTER => timeline.stretch_to(job.position),
                    // Later than a period after the copy: not sent after all.
                    OnLate::Drop
                        if job
                            .period
                            .is_some_and(|period| lateness > period.div_f64(timeline.rate())) =>
                    {
                        return Sent::Dropped;
                    }
                    _ => {}
                }
                return match prepared.send() {
                    Ok(true) => Sent::Yes(lateness),
                    Ok(false) => Sent::Nothing,
                    Err(reason) => Sent::Failed(reason),
                };
            }
            Wait::Cancelled => return Sent::Cancelled,
            Wait::Paused => {
                // A paused player holds no loans.
                drop(prepared);
                if !timeline.wait_resumed(job.index, &shared.cancel) {
                    return Sent::Cancelled;
                }
            }
        }
    }
}
