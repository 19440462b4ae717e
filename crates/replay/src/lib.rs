//! Plays recorded MCAP files back (`rec play`): every message of the selected channels,
//! each at its recorded time relative to the first divided by the rate, to the transport
//! it was recorded from. Split files of a session play as one stream; the iceoryx2 and DDS
//! files of a mixed session are merged by time.
//!
//! iceoryx2 channels go to services of the same name with the recorded type details
//! ([`shm`]); each message is copied from the file straight into a loaned sample, user
//! header included. DDS channels go to rustdds writers with the recorded DDS names, key
//! kind and QoS ([`dds`]); each message leaves as the CDR it was recorded as.

#![warn(missing_docs)]
#![warn(clippy::undocumented_unsafe_blocks)]

pub mod dds;
mod outputs;
mod pacing;
mod reader;
mod senders;
pub mod shm;

use std::collections::{BTreeMap, HashMap, HashSet};
use std::net::IpAddr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use outputs::{check_remaps, Outputs, Planned};
use reader::{first_representations, read_pass, Queued, ReadPlan, READ_AHEAD};
use recd_engine::{TopicFilter, TopicSelection};
use recd_storage::{Damage, MessagesError, RecordedChannel};

pub use pacing::{Pacer, LATE_AFTER};
use senders::{Senders, Totals};

/// How to play.
#[derive(Debug, Clone)]
pub struct PlayOptions {
    /// Channels to play (by topic name); empty includes every one.
    pub topics: TopicSelection,
    /// Speed: 2.0 plays twice as fast.
    pub rate: f64,
    /// Start over after the end, until cancelled.
    pub repeat: bool,
    /// Skip what was recorded before this far into the recording.
    pub start: Duration,
    /// Stop this far into the recording.
    pub until: Option<Duration>,
    /// Pace by publish_time instead of log_time.
    pub use_publish_time: bool,
    /// The iceoryx2 domain (`global.prefix`); `None` is iceoryx2's default.
    pub iceoryx2_prefix: Option<String>,
    /// Wait up to this long for every service to have a subscriber before playing.
    pub wait_subscribers: Duration,
    /// Topics played under another name: recorded name → played name.
    pub remap: BTreeMap<String, String>,
    /// Play iceoryx2 channels.
    pub iceoryx2: bool,
    /// Play DDS channels.
    pub dds: bool,
    /// The DDS domain to play into.
    pub dds_domain: u16,
    /// The addresses DDS may use; every interface when empty.
    pub dds_interfaces: Vec<IpAddr>,
}

impl Default for PlayOptions {
    fn default() -> Self {
        Self {
            topics: TopicSelection::default(),
            rate: 1.0,
            repeat: false,
            start: Duration::ZERO,
            until: None,
            use_publish_time: false,
            iceoryx2_prefix: None,
            wait_subscribers: Duration::ZERO,
            remap: BTreeMap::new(),
            iceoryx2: true,
            dds: true,
            dds_domain: 0,
            dds_interfaces: Vec::new(),
        }
    }
}

/// What a playback sent.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct PlayReport {
    /// Per played topic.
    pub topics: Vec<PlayedTopic>,
    /// Topics of the recording that were not played, with the reason.
    pub skipped: BTreeMap<String, String>,
    /// Files whose readable records ended early (a crash cut them), with where.
    pub damaged: Vec<(PathBuf, Damage)>,
    /// Wall-clock seconds the playback took.
    pub duration_s: f64,
    /// It was stopped before its end (Ctrl-C).
    pub cancelled: bool,
}

/// One played topic.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct PlayedTopic {
    /// Its name.
    pub name: String,
    /// Messages sent.
    pub sent: u64,
    /// Messages that left more than [`LATE_AFTER`] after they were due.
    pub late: u64,
    /// How late the sent messages left after they were due, µs: the median ...
    pub lateness_p50_us: f64,
    /// ... the 99th percentile (both to a quarter octave) ...
    pub lateness_p99_us: f64,
    /// ... and the largest.
    pub lateness_max_us: f64,
    /// Messages that could not be sent, with the first reason.
    pub failed: u64,
    /// Why the first failed message failed.
    pub error: Option<String>,
}

impl PlayedTopic {
    /// This topic with the quantiles of how late its messages left.
    fn with_lateness(self, lateness: &recd_engine::LatenessHistogram) -> Self {
        let micros = |d: std::time::Duration| d.as_secs_f64() * 1e6;
        Self {
            lateness_p50_us: micros(lateness.quantile(0.5)),
            lateness_p99_us: micros(lateness.quantile(0.99)),
            lateness_max_us: micros(lateness.max()),
            ..self
        }
    }
}

/// Where a playback is, for a progress line.
#[derive(Debug, Clone, Copy, Default)]
pub struct Progress {
    /// Position in the recording.
    pub position: Duration,
    /// How long the recording (from --start to --until) is.
    pub length: Duration,
    /// Messages sent so far.
    pub sent: u64,
    /// Late ones among them.
    pub late: u64,
}

/// Why a playback could not start.
#[derive(Debug, thiserror::Error)]
pub enum PlayError {
    /// A topic pattern is not a valid glob.
    #[error(transparent)]
    Pattern(#[from] recd_engine::PatternError),
    /// A file could not be read.
    #[error(transparent)]
    Read(#[from] MessagesError),
    /// A file could not be summarized for its channels.
    #[error(transparent)]
    Info(#[from] recd_storage::InfoError),
    /// No channel of the recording matches the selection.
    #[error("no topic of the recording matches the selection")]
    NothingSelected,
    /// Every selected topic was left out.
    #[error("nothing to play: {0}")]
    OnlySkipped(String),
    /// A `--remap` names no recorded topic, or makes two topics one.
    #[error("{0}")]
    Remap(String),
    /// iceoryx2 could not be set up.
    #[error("{0}")]
    Shm(String),
    /// DDS could not be set up.
    #[error("{0}")]
    Dds(String),
    /// A sending thread could not be started.
    #[error("cannot start a sending thread: {0}")]
    Thread(std::io::Error),
}

/// Plays `files` (in this order, as one stream) as `options` say, calling `progress`
/// now and then, until the end or until `cancel` is set.
pub fn play(
    files: &[PathBuf],
    options: &PlayOptions,
    cancel: &Arc<AtomicBool>,
    mut progress: impl FnMut(Progress),
) -> Result<PlayReport, PlayError> {
    let started = Instant::now();
    let filter = TopicFilter::new(&options.topics)?;
    let mut report = PlayReport::default();
    let Opened {
        outputs,
        streams,
        length,
    } = open_outputs(files, &filter, options, &mut report)?;
    outputs.wait_for_subscribers(options.wait_subscribers, || cancel.load(Ordering::Relaxed));

    let topics: HashSet<String> = outputs.topics.keys().cloned().collect();
    let totals = Arc::new(Totals::default());
    let senders = Senders::start(outputs.topics.clone(), cancel.clone(), totals.clone())
        .map_err(PlayError::Thread)?;
    let mut player = Player {
        senders,
        totals,
        pacer: None,
        options,
        topics,
        last_position: Duration::ZERO,
        queued_in_pass: 0,
        last_progress: Instant::now(),
        length,
    };
    let outcome = loop {
        match player.play_pass(&streams, cancel, &mut report, &mut progress) {
            Ok(ended) if ended && options.repeat && !cancel.load(Ordering::Relaxed) => {
                player.next_pass()
            }
            other => break other,
        }
    };
    let mut played = player.senders.finish();
    if !cancel.load(Ordering::Relaxed) {
        outputs.flush(FLUSH_LIMIT);
    }
    progress(progress_of(
        &player.totals,
        player.last_position,
        player.length,
    ));
    drop(outputs);
    outcome?;
    // Topics that sent nothing (all before --start, say) are listed too.
    for topic in &player.topics {
        played.entry(topic.clone()).or_insert_with(|| PlayedTopic {
            name: topic.clone(),
            ..PlayedTopic::default()
        });
    }
    report.cancelled = cancel.load(Ordering::Relaxed);
    report.topics = played.into_values().collect();
    report.duration_s = started.elapsed().as_secs_f64();
    Ok(report)
}

/// How long the end of a playback waits for reliable DDS readers to acknowledge what was
/// sent, per topic.
const FLUSH_LIMIT: Duration = Duration::from_secs(2);

/// What a playback plays, and where to.
struct Opened {
    /// The selected channels' outputs.
    outputs: Outputs,
    /// The files as streams (see [`reader`]).
    streams: Vec<Vec<PathBuf>>,
    /// How long a pass is: the recording from `--start` to `--until`.
    length: Duration,
}

/// The selected channels' outputs, by topic, and the files as streams; the channels left
/// out go to `report.skipped`.
fn open_outputs(
    files: &[PathBuf],
    filter: &TopicFilter,
    options: &PlayOptions,
    report: &mut PlayReport,
) -> Result<Opened, PlayError> {
    let mut first: Option<u64> = None;
    let mut last: Option<u64> = None;
    let mut channels: BTreeMap<String, RecordedChannel> = BTreeMap::new();
    // Files by their channels' message encodings: one stream per source family.
    let mut streams: BTreeMap<Vec<String>, Vec<PathBuf>> = BTreeMap::new();
    // The files holding DDS channels, where their first messages are looked for.
    let mut dds_files = Vec::new();
    for file in files {
        let info = recd_storage::summarize(file)?;
        if let Some(start) = info.start_time {
            first = Some(first.map_or(start, |first| first.min(start)));
        }
        last = last.max(info.end_time);
        let mut encodings: Vec<String> = Vec::new();
        for channel in info.channels {
            if !encodings.contains(&channel.message_encoding) {
                encodings.push(channel.message_encoding.clone());
            }
            channels
                .entry(channel.topic.clone())
                .or_insert_with(|| RecordedChannel {
                    topic: channel.topic,
                    message_encoding: channel.message_encoding,
                    schema_name: channel.schema_name.unwrap_or_default(),
                    metadata: channel.metadata,
                });
        }
        encodings.sort();
        if encodings
            .iter()
            .any(|e| e == recd_storage::dds::MESSAGE_ENCODING)
        {
            dds_files.push(file.clone());
        }
        streams.entry(encodings).or_default().push(file.clone());
    }
    check_remaps(&options.remap, &channels)?;
    let selected: Vec<&RecordedChannel> = channels
        .values()
        .filter(|c| filter.matches(&c.topic))
        .collect();
    if selected.is_empty() {
        return Err(PlayError::NothingSelected);
    }
    let dds_topics: HashSet<String> = selected
        .iter()
        .filter(|c| options.dds && dds::is_dds(c))
        .map(|c| c.topic.clone())
        .collect();
    let representations = if dds_topics.is_empty() {
        HashMap::new()
    } else {
        first_representations(&dds_files, &dds_topics)?
    };
    let planned: Vec<Planned<'_>> = selected
        .iter()
        .map(|channel| Planned {
            channel,
            representation: representations.get(&channel.topic).copied(),
        })
        .collect();
    let outputs = Outputs::open(&planned, options, &mut report.skipped)?;
    if outputs.topics.is_empty() {
        let skipped: Vec<String> = report
            .skipped
            .iter()
            .map(|(topic, why)| format!("{topic} ({why})"))
            .collect();
        return Err(PlayError::OnlySkipped(skipped.join(", ")));
    }
    let recorded = Duration::from_nanos(last.unwrap_or(0).saturating_sub(first.unwrap_or(0)));
    let length = options
        .until
        .map_or(recorded, |until| until.min(recorded))
        .saturating_sub(options.start);
    Ok(Opened {
        outputs,
        streams: streams.into_values().collect(),
        length,
    })
}

/// How long after the first message is read it leaves: time for the reader to get ahead
/// of the sending threads, so that reading a large message from disk makes none late.
const PRE_ROLL: Duration = Duration::from_millis(100);

/// The pacing and the sending threads, across passes.
struct Player<'a> {
    senders: Senders,
    totals: Arc<Totals>,
    /// Set when the first message is read, [`PRE_ROLL`] before it leaves.
    pacer: Option<Pacer>,
    options: &'a PlayOptions,
    topics: HashSet<String>,
    /// Where the last message queued was, from the start of the pass.
    last_position: Duration,
    /// Messages queued in this pass.
    queued_in_pass: u64,
    last_progress: Instant,
    /// How long a pass is.
    length: Duration,
}

impl Player<'_> {
    /// The next pass starts one mean message interval after this one's last message.
    fn next_pass(&mut self) {
        let gap = match u32::try_from(self.queued_in_pass) {
            Ok(n) if n > 0 => self.last_position / n,
            _ => Duration::ZERO,
        };
        if let Some(pacer) = &mut self.pacer {
            pacer.restart_after(self.last_position, gap);
        }
        self.last_position = Duration::ZERO;
        self.queued_in_pass = 0;
    }

    /// Queues every message of one pass for the sending threads, reading ahead on a
    /// thread of its own; false when cancelled or stopped at `--until`.
    fn play_pass(
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
        };
        let (queue, queued) = std::sync::mpsc::sync_channel(READ_AHEAD);
        std::thread::scope(|scope| {
            scope.spawn(move || read_pass(&plan, &queue));
            let mut ended = false;
            for item in &queued {
                if cancel.load(Ordering::Relaxed) {
                    break;
                }
                match item {
                    Queued::Message {
                        channel,
                        position,
                        data,
                    } => {
                        // A message recorded before the one queued last leaves right
                        // after it.
                        let position = position.max(self.last_position);
                        self.last_position = position;
                        self.queued_in_pass += 1;
                        let rate = self.options.rate;
                        let pacer = self
                            .pacer
                            .get_or_insert_with(|| Pacer::new(rate, Instant::now() + PRE_ROLL));
                        self.senders.send(channel, pacer.due(position), data);
                        if self.last_progress.elapsed() >= Duration::from_millis(250) {
                            self.last_progress = Instant::now();
                            progress(progress_of(&self.totals, position, self.length));
                        }
                    }
                    Queued::Damaged(file, damage) => report.damaged.push((file, damage)),
                    Queued::Failed(error) => return Err(PlayError::Read(error)),
                    Queued::End(complete) => {
                        ended = complete;
                        break;
                    }
                }
            }
            // Dropping the receiving end stops the reader at its next message.
            drop(queued);
            Ok(ended)
        })
    }
}

/// Where the playback is: `position` of `length`, and what the sending threads sent so far.
fn progress_of(totals: &Totals, position: Duration, length: Duration) -> Progress {
    Progress {
        position,
        length,
        sent: totals.sent.load(Ordering::Relaxed),
        late: totals.late.load(Ordering::Relaxed),
    }
}
