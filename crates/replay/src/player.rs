//! One playback's passes: the messages the reader queues, numbered in play order and
//! handed to the sending threads; the timeline starts once the read-ahead is full.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{channel, RecvTimeoutError};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::reader::{read_pass, Queued, ReadPlan, ReadState};
use crate::senders::{Job, Senders, Totals};
use crate::timeline::{Steered, Timeline};
use crate::{PlayError, PlayOptions, PlayReport, PlayedTopic, Progress};

/// The longest the first message waits for the read-ahead to fill.
const LONGEST_PRE_ROLL: Duration = Duration::from_secs(1);

/// How long after the read-ahead is full the first message leaves: time for the sending
/// threads to copy their first messages into their loans.
const START_LEAD: Duration = Duration::from_millis(20);

/// How often the progress callback is called.
const PROGRESS_EVERY: Duration = Duration::from_millis(250);

/// The pacing and the sending threads, across passes.
pub struct Player<'a> {
    senders: Senders,
    totals: Arc<Totals>,
    timeline: &'a Timeline,
    options: &'a PlayOptions,
    topics: HashSet<String>,
    /// The next message's number in play order.
    next_index: u64,
    /// Where the last message queued was, from the start of the pass.
    last_position: Duration,
    /// Per topic, where its last message queued was in this pass.
    topic_positions: HashMap<String, Duration>,
    /// Messages queued in this pass.
    queued_in_pass: u64,
    /// Where this pass starts on the timeline: after the passes before it.
    played_before: Duration,
    /// The pass now, from 0.
    pass: u32,
    /// Per topic, messages the reader skipped unread (`--on-late drop`).
    dropped_unread: BTreeMap<String, u64>,
    last_progress: Instant,
    /// How long a pass is.
    length: Duration,
}

impl<'a> Player<'a> {
    /// A player handing messages to `senders`, paced by `timeline`.
    pub fn new(
        senders: Senders,
        totals: Arc<Totals>,
        timeline: &'a Timeline,
        options: &'a PlayOptions,
        length: Duration,
    ) -> Self {
        Self {
            topics: senders.topics(),
            senders,
            totals,
            timeline,
            options,
            next_index: 0,
            last_position: Duration::ZERO,
            topic_positions: HashMap::new(),
            queued_in_pass: 0,
            played_before: Duration::ZERO,
            pass: 0,
            dropped_unread: BTreeMap::new(),
            last_progress: Instant::now(),
            length,
        }
    }

    /// The next pass starts one mean message interval after this one's last message.
    pub fn next_pass(&mut self) {
        let gap = match u32::try_from(self.queued_in_pass) {
            Ok(n) if n > 0 => self.last_position / n,
            _ => Duration::ZERO,
        };
        self.played_before += self.last_position + gap;
        self.pass = self.pass.wrapping_add(1);
        self.last_position = Duration::ZERO;
        self.topic_positions.clear();
        self.queued_in_pass = 0;
    }

    /// Queues every message of one pass for the sending threads, reading ahead on
    /// threads of their own; false when cancelled or stopped at `--until`.
    pub fn play_pass(
        &mut self,
        streams: &[Vec<PathBuf>],
        cancel: &AtomicBool,
        report: &mut PlayReport,
        progress: &mut impl FnMut(Progress),
    ) -> Result<bool, PlayError> {
        let topics = self.topics.clone();
        let plan = ReadPlan {
            streams,
            topics: &topics,
            start: self.options.start,
            until: self.options.until,
            use_publish_time: self.options.use_publish_time,
            on_late: self.options.on_late,
            timeline: self.timeline,
            offset: self.played_before,
        };
        let state = ReadState::default();
        let (queue, queued) = channel();
        std::thread::scope(|scope| {
            let (plan, state) = (&plan, &state);
            scope.spawn(move || read_pass(plan, state, &queue));
            let mut first_read: Option<Instant> = None;
            let ended = loop {
                if cancel.load(Ordering::Relaxed) {
                    break false;
                }
                if let Some(first) = first_read {
                    let full = state.filled() >= streams.len();
                    if !self.timeline.started() && (full || first.elapsed() >= LONGEST_PRE_ROLL) {
                        self.timeline.start(Instant::now() + START_LEAD);
                    }
                }
                if self.last_progress.elapsed() >= PROGRESS_EVERY {
                    self.last_progress = Instant::now();
                    progress(self.progress());
                }
                let item = match queued.recv_timeout(Duration::from_millis(10)) {
                    Ok(item) => item,
                    Err(RecvTimeoutError::Timeout) => continue,
                    Err(RecvTimeoutError::Disconnected) => break false,
                };
                match item {
                    Queued::Message {
                        channel,
                        position,
                        data,
                        held,
                    } => {
                        first_read.get_or_insert_with(Instant::now);
                        // A message recorded before the one queued last leaves right
                        // after it.
                        let position = position.max(self.last_position);
                        self.last_position = position;
                        self.queued_in_pass += 1;
                        let period = self
                            .topic_positions
                            .insert(channel.topic.clone(), position)
                            .map(|previous| position - previous);
                        let job = Job {
                            index: self.next_index,
                            channel,
                            position: self.played_before + position,
                            period,
                            pass: self.pass,
                            data,
                            _held: held,
                        };
                        self.next_index += 1;
                        self.senders.send(job).map_err(PlayError::Thread)?;
                    }
                    Queued::Dropped(channel) => {
                        *self
                            .dropped_unread
                            .entry(channel.topic.clone())
                            .or_default() += 1;
                        self.totals.dropped.fetch_add(1, Ordering::Relaxed);
                    }
                    Queued::Damaged(file, damage) => report.damaged.push((file, damage)),
                    Queued::Failed(error) => return Err(PlayError::Read(error)),
                    Queued::End(complete) => break complete,
                }
            };
            // Dropping the receiving end stops the reader at its next message.
            drop(queued);
            // A pass shorter than the read-ahead starts when it has been read.
            self.timeline.start(Instant::now() + START_LEAD);
            Ok(ended)
        })
    }

    /// Where the playback is.
    fn progress(&self) -> Progress {
        let steered = self.timeline.steered();
        Progress {
            position: self.timeline.position().min(self.length),
            length: self.length,
            sent: self.totals.sent.load(Ordering::Relaxed),
            late: self.totals.late.load(Ordering::Relaxed),
            dropped: self.totals.dropped.load(Ordering::Relaxed),
            paused: self.timeline.paused(),
            rate: steered.rate,
            stretch_factor: self.stretch_factor(&steered),
        }
    }

    /// How much `--on-late stretch` slowed the timeline: the time it took over the time
    /// the recording played so far (divided by the rate) takes.
    fn stretch_factor(&self, steered: &Steered) -> f64 {
        let nominal = (self.played_before + self.last_position).div_f64(steered.rate);
        if nominal.is_zero() {
            return 1.0;
        }
        (nominal + steered.stretched).as_secs_f64() / nominal.as_secs_f64()
    }

    /// Lets the sending threads send what is queued; what each topic sent (every played
    /// topic, also those that sent nothing) and the last progress.
    pub fn finish(mut self) -> (BTreeMap<String, PlayedTopic>, Progress) {
        let mut played = self.senders.finish();
        let mut last = self.progress();
        for topic in &self.topics {
            let entry = played.entry(topic.clone()).or_insert_with(|| PlayedTopic {
                name: topic.clone(),
                ..PlayedTopic::default()
            });
            entry.dropped += self.dropped_unread.get(topic).copied().unwrap_or(0);
        }
        last.sent = played.values().map(|t| t.sent).sum();
        last.late = played.values().map(|t| t.late).sum();
        last.dropped = played.values().map(|t| t.dropped).sum();
        (played, last)
    }
}
