//! Plays recorded MCAP files back (`rec play`): every message of the selected channels,
//! each at its recorded time relative to the first divided by the rate, to the transport
//! it was recorded from. Split files of a session play as one stream; the iceoryx2, DDS
//! and Zenoh files of a mixed session are merged by time.
//!
//! iceoryx2 channels go to services of the same name with the recorded type details
//! ([`shm`]); each message is copied from the file straight into a loaned sample, user
//! header included. DDS channels go to rustdds writers with the recorded DDS names, key
//! kind and QoS ([`dds`]); each message leaves as the CDR it was recorded as. Zenoh
//! channels (ROS 2 over rmw_zenoh) go to Zenoh publishers on the recorded key, announced
//! and attached as rmw_zenoh's publishers are ([`zenoh`]). With
//! [`PlayOptions::services_as_calls`], a DDS service's recorded introspection events are
//! not played: their requests are sent as calls to the service ([`calls`]).

#![warn(missing_docs)]
#![warn(clippy::undocumented_unsafe_blocks)]

pub mod calls;
mod clock;
pub mod dds;
mod dds_node;
mod discovery;
mod outputs;
mod player;
mod reader;
mod senders;
pub mod shm;
mod timeline;
pub mod zenoh;

use std::collections::{BTreeMap, HashMap, HashSet};
use std::net::IpAddr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use outputs::{check_remaps, Outputs, Planned};
use player::Player;
use reader::first_representations;
use recd_engine::{TopicFilter, TopicSelection};
use recd_storage::{Damage, MessagesError, RecordedChannel};

pub use discovery::{SubscriberWait, DISCOVERY_BOUND, DISCOVERY_SETTLED};
use senders::{Senders, Shared, Totals};
use timeline::Timeline;
pub use timeline::LATE_AFTER;

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
    /// How to wait for subscribers before the first message.
    pub wait_subscribers: SubscriberWait,
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
    /// Play Zenoh (rmw_zenoh) channels.
    pub zenoh: bool,
    /// How to join Zenoh; its `domain` is the ROS 2 domain played into (the first chunk
    /// of every key), whatever the recorded one was.
    pub zenoh_config: recd_engine::ZenohConfig,
    /// What to do with messages it cannot send on time.
    pub on_late: OnLate,
    /// Start paused (steer with a [`Steering`]).
    pub start_paused: bool,
    /// Wait this long before the first message (after the subscribers).
    pub delay: Duration,
    /// Publish the recording's time on `/clock` this many times a second.
    pub clock: Option<f64>,
    /// Send the requests recorded in DDS services' introspection events as calls to the
    /// services, instead of playing the events topics.
    pub services_as_calls: bool,
}

/// What a playback does with a message it cannot send on time (`--on-late`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum OnLate {
    /// Send it late.
    #[default]
    Keep,
    /// Skip it when it is later than its topic's interval to its previous message
    /// (a frame period), and count it.
    Drop,
    /// Slow the whole timeline down by how late it is, so relative timing holds.
    Stretch,
}

impl OnLate {
    /// Its name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Self::Keep => "keep",
            Self::Drop => "drop",
            Self::Stretch => "stretch",
        }
    }
}

impl std::str::FromStr for OnLate {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        [Self::Keep, Self::Drop, Self::Stretch]
            .into_iter()
            .find(|policy| policy.name() == text)
            .ok_or_else(|| format!("`{text}` is not keep, drop or stretch"))
    }
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
            wait_subscribers: SubscriberWait::Settled,
            remap: BTreeMap::new(),
            iceoryx2: true,
            dds: true,
            dds_domain: 0,
            dds_interfaces: Vec::new(),
            zenoh: true,
            zenoh_config: recd_engine::ZenohConfig::new(0),
            on_late: OnLate::Keep,
            start_paused: false,
            delay: Duration::ZERO,
            clock: None,
            services_as_calls: false,
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
    /// What it did with messages it could not send on time.
    pub on_late: OnLate,
    /// How much longer than the recording (divided by the rate) the timeline ran because
    /// `--on-late stretch` slowed it: 1 when it did not.
    pub stretch_factor: f64,
    /// Seconds spent paused.
    pub paused_s: f64,
    /// Per service played as calls (`--services-as-calls`).
    pub calls: Vec<PlayedCalls>,
}

/// The calls one service got (`--services-as-calls`).
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct PlayedCalls {
    /// The service called.
    pub service: String,
    /// Its type (`pkg/srv/S`).
    pub service_type: String,
    /// Calls sent: one per recorded request.
    pub sent: u64,
    /// Calls a server answered, by the end of the playback (which waits up to
    /// [`calls::REPLY_WAIT`] after the last).
    pub answered: u64,
    /// Requests recorded without their contents (introspection `METADATA`), not sent.
    pub without_contents: u64,
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
    /// Messages left out because they were too late (`--on-late drop`).
    pub dropped: u64,
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
    /// Messages dropped for being late so far.
    pub dropped: u64,
    /// Paused now.
    pub paused: bool,
    /// The rate now.
    pub rate: f64,
    /// How much `--on-late stretch` has slowed the timeline so far (1: not at all).
    pub stretch_factor: f64,
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
    /// Zenoh could not be set up.
    #[error("{0}")]
    Zenoh(String),
    /// A sending thread could not be started.
    #[error("cannot start a sending thread: {0}")]
    Thread(std::io::Error),
}

/// Steers a playback while it plays (pause, step, rate); made before [`play_steered`]
/// starts, used from any thread.
#[derive(Debug, Clone)]
pub struct Steering {
    timeline: Arc<Timeline>,
}

impl Steering {
    /// Steering for a playback with `options` (its rate, whether it starts paused).
    pub fn new(options: &PlayOptions) -> Self {
        Self {
            timeline: Arc::new(Timeline::new(options.rate, options.start_paused)),
        }
    }

    /// Pauses when playing, resumes when paused; true when paused now.
    pub fn toggle_pause(&self) -> bool {
        self.timeline.toggle()
    }

    /// While paused, sends exactly the next message.
    pub fn step(&self) {
        self.timeline.step();
    }

    /// Plays at `rate` from where the playback is.
    pub fn set_rate(&self, rate: f64) {
        self.timeline.set_rate(rate);
    }

    /// The rate now.
    pub fn rate(&self) -> f64 {
        self.timeline.rate()
    }
}

/// Plays `files` (in this order, as one stream) as `options` say, calling `progress`
/// now and then, until the end or until `cancel` is set.
pub fn play(
    files: &[PathBuf],
    options: &PlayOptions,
    cancel: &Arc<AtomicBool>,
    progress: impl FnMut(Progress),
) -> Result<PlayReport, PlayError> {
    play_steered(files, options, &Steering::new(options), cancel, progress)
}

/// [`play`], steered by `steering` while it plays.
pub fn play_steered(
    files: &[PathBuf],
    options: &PlayOptions,
    steering: &Steering,
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
    let stopped = || cancel.load(Ordering::Relaxed);
    outputs.wait_for_subscribers(options.wait_subscribers, stopped);
    sleep_unless(options.delay, stopped);

    let timeline = steering.timeline.clone();
    let totals = Arc::new(Totals::default());
    let senders = Senders::start(Shared {
        outputs: outputs.topics.clone(),
        timeline: timeline.clone(),
        cancel: cancel.clone(),
        totals: totals.clone(),
        on_late: options.on_late,
    })
    .map_err(PlayError::Thread)?;
    let mut player = Player::new(senders, totals, &timeline, options, length);
    let clock_stop = AtomicBool::new(false);
    let (outcome, (played, last)) = std::thread::scope(|scope| {
        if let (Some(topic), Some(hz)) = (&outputs.clock, options.clock) {
            let (timeline, stop) = (&timeline, &clock_stop);
            scope.spawn(move || clock::publish(topic, hz, timeline, stop));
        }
        let outcome = loop {
            match player.play_pass(&streams, cancel, &mut report, &mut progress) {
                Ok(ended) if ended && options.repeat && !stopped() => player.next_pass(),
                other => break other,
            }
        };
        // The reader ends its pass as far ahead of the playback as it reads (all of a
        // short file before it starts): /clock runs until the senders sent the last
        // message.
        let finished = player.finish();
        clock_stop.store(true, Ordering::Relaxed);
        (outcome, finished)
    });
    if !stopped() {
        outputs.flush(FLUSH_LIMIT);
    }
    report.calls = outputs.calls();
    progress(last);
    drop(outputs);
    outcome?;
    report.cancelled = stopped();
    report.topics = played.into_values().collect();
    report.duration_s = started.elapsed().as_secs_f64();
    report.on_late = options.on_late;
    report.stretch_factor = last.stretch_factor;
    report.paused_s = timeline.steered().paused.as_secs_f64();
    Ok(report)
}

/// Sleeps `duration`, or until `stop` says so.
fn sleep_unless(duration: Duration, stop: impl Fn() -> bool) {
    let until = Instant::now() + duration;
    while !stop() {
        let now = Instant::now();
        if now >= until {
            break;
        }
        std::thread::sleep((until - now).min(Duration::from_millis(50)));
    }
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
    // Files by their channels' message encodings (and whether they came from Zenoh, CDR
    // as DDS's): one stream per source family.
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
        let mut from_zenoh = false;
        for channel in info.channels {
            from_zenoh |= channel.metadata.contains_key(recd_storage::zenoh::KEY_EXPR);
            if !encodings.contains(&channel.message_encoding) {
                encodings.push(channel.message_encoding.clone());
            }
            channels
                .entry(channel.topic.clone())
                .or_insert_with(|| RecordedChannel {
                    topic: channel.topic,
                    message_encoding: channel.message_encoding,
                    schema_name: channel.schema_name.unwrap_or_default(),
                    schema_encoding: channel.schema_encoding.unwrap_or_default(),
                    schema_data: Vec::new(),
                    metadata: channel.metadata,
                });
        }
        encodings.sort();
        if from_zenoh {
            encodings.push("(zenoh)".into());
        }
        if !from_zenoh
            && encodings
                .iter()
                .any(|e| e == recd_storage::dds::MESSAGE_ENCODING)
        {
            dds_files.push(file.clone());
        }
        streams.entry(encodings).or_default().push(file.clone());
    }
    check_remaps(&options.remap, &channels)?;
    // recd's own account of the topics' health is no topic to play back.
    let selected: Vec<&RecordedChannel> = channels
        .values()
        .filter(|c| filter.matches(&c.topic) && c.topic != recd_engine::recd_health::HEALTH_CHANNEL)
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
