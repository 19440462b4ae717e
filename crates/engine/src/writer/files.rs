//! The files a recording writes: naming, splitting by size or duration, finishing a file
//! with its `recorder` metadata (on a thread of its own after a split), and ending one
//! early (a full disk, a write error).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use recd_health::{FileHealthSummary, HealthEvent, Verdict};
use recd_storage::iceoryx2 as keys;
use recd_storage::{
    Attachment, Durability, FileSummary, IoMode, StreamWriter, WriteError, WriterOptions,
};

use super::closing::Closing;
use super::WriterProgress;
use crate::config::{RecordingConfig, SplitPolicy};
use crate::source::stats::ReceiveStats;
use crate::topic::{ChannelSpec, Topic, TopicCounts};

/// A file the recording finished: on disk, synced, with what it really holds.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ClosedFile {
    /// Where it is.
    pub path: PathBuf,
    /// Its size in bytes.
    pub bytes: u64,
    /// Messages in it.
    pub messages: u64,
    /// It ends with its summary (false: a write error left no room; `rec reindex` indexes
    /// it).
    #[serde(default = "indexed_by_default")]
    pub indexed: bool,
    /// The verdict of its health record (`None`: a file written before recd kept one).
    #[serde(default)]
    pub health: Option<Verdict>,
    /// The earliest and latest log time of its messages, ns since the Unix epoch (`None`:
    /// it holds none).
    #[serde(default)]
    pub time_range: Option<(u64, u64)>,
    /// Its size and the SHA-256 of its bytes as the writer stored them, taken as they
    /// were written ([`RecordingConfig::stored_digest`](crate::RecordingConfig)); `None`
    /// when not asked for, or when a write error ended the file (it was cut and partly
    /// rewritten, and must be read back). Not serialized.
    #[serde(skip)]
    pub stored: Option<(u64, [u8; 32])>,
}

fn indexed_by_default() -> bool {
    true
}

/// Hears of a recording's files as they come and go, and of its topics' health as it
/// changes, on the writer's threads: the daemon keeps its catalog and its log with it.
pub trait RecordingObserver: Send + Sync {
    /// `path` is about to be created: nothing of it is on disk yet.
    fn creating(&self, path: &Path);
    /// A file was finished (split, paused, failed or stopped).
    fn ended(&self, file: &ClosedFile);
    /// A topic's health changed (it stalled, became slow, went missing, or came back).
    fn health_changed(&self, _event: &HealthEvent) {}
    /// A file told of by [`Self::creating`] was removed: the recording stopped before
    /// any message reached it (the file after a split).
    fn removed(&self, _path: &Path) {}
    /// Whether the samples of the recording's topic number `index`, called `name` and
    /// described by `channel`, go to [`Self::sample`]; asked once as the topic is
    /// announced (recd's rules watch the topics they name). Topics not taken cost
    /// nothing more.
    fn taps(&self, _index: u32, _name: &str, _channel: &ChannelSpec) -> bool {
        false
    }
    /// A sample of a topic [`Self::taps`] took, on the writer thread as it is written
    /// (or kept by a pre-trigger buffer): its log time and its recorded bytes in parts
    /// (an iceoryx2 sample's user header, then its payload). It must not block.
    fn sample(&self, _index: u32, _log_time_ns: u64, _parts: &[&[u8]]) {}
}

/// An observer that does nothing.
pub(crate) struct Unobserved;

impl RecordingObserver for Unobserved {
    fn creating(&self, _: &Path) {}
    fn ended(&self, _: &ClosedFile) {}
}

/// The key of the `recorder` record's entry with the receive thread's report as JSON
/// (scheduling, lateness p99.9 and max, loans taken back), as of the file's end.
pub const RECEIVE_THREAD: &str = "receive_thread";

/// What ending a file needs from the writer: the counts for its `recorder` metadata, and
/// the topics, whose counts a write error may correct.
pub(crate) struct Ending<'a> {
    pub counts: BTreeMap<&'a str, TopicCounts>,
    pub topics: Vec<Arc<Topic>>,
    /// The file's health record.
    pub health: FileHealthSummary,
}

/// The sources whose topics share files. A session recording both writes a file of each
/// per split, so that its DDS files hold ROS 2 channels only, as ROS 2 readers require.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SourceFamily {
    /// iceoryx2 shared-memory services.
    Iceoryx2,
    /// DDS / ROS 2 topics.
    Dds,
    /// ROS 2 topics over Zenoh (rmw_zenoh).
    Zenoh,
}

impl SourceFamily {
    /// The families of sources `config` records, each writing files of its own, in the
    /// order of their receive threads: iceoryx2, DDS, Zenoh.
    pub fn recorded(config: &RecordingConfig) -> Vec<Self> {
        [
            (config.iceoryx2, Self::Iceoryx2),
            (config.dds.is_some(), Self::Dds),
            (config.zenoh.is_some(), Self::Zenoh),
        ]
        .into_iter()
        .filter_map(|(on, family)| on.then_some(family))
        .collect()
    }

    /// What it is called in file names: `<file_prefix>_<family>_<NNNN>.mcap` when a
    /// recording has both families.
    fn name(self) -> &'static str {
        match self {
            SourceFamily::Iceoryx2 => "iceoryx2",
            SourceFamily::Dds => "dds",
            SourceFamily::Zenoh => "zenoh",
        }
    }
}

/// How the writer names, splits and fills files.
pub(crate) struct FilePlan {
    dir: PathBuf,
    prefix: String,
    split: SplitPolicy,
    options: WriterOptions,
    metadata: BTreeMap<String, String>,
    /// What every file starts with: the session's own metadata and attachments.
    user_metadata: BTreeMap<String, String>,
    attachments: Vec<Attachment>,
    /// The log time of the attachments: the recording's start.
    started_ns: u64,
    observer: Arc<dyn RecordingObserver>,
    /// The receive thread of the family's source, whose report goes into each file's
    /// `recorder` record at its end.
    receive: Option<Arc<ReceiveStats>>,
}

impl FilePlan {
    /// The plan of `config` for the topics of `family`, started at `started_ns`;
    /// `metadata` goes into every file's `recorder` record, and `observer` hears of each
    /// file.
    pub fn new(
        config: &RecordingConfig,
        family: SourceFamily,
        started_ns: u64,
        metadata: BTreeMap<String, String>,
        observer: Arc<dyn RecordingObserver>,
        receive: Option<Arc<ReceiveStats>>,
    ) -> Self {
        let both_families = SourceFamily::recorded(config).len() > 1;
        Self {
            dir: config.output_dir.clone(),
            prefix: if both_families {
                format!("{}_{}", config.file_prefix, family.name())
            } else {
                config.file_prefix.clone()
            },
            split: config.split.clone(),
            options: WriterOptions {
                data_crc: config.crc,
                zero_copy_threshold: match family {
                    SourceFamily::Dds | SourceFamily::Zenoh => {
                        config.zero_copy_threshold.max(DDS_IN_PLACE_MIN)
                    }
                    SourceFamily::Iceoryx2 => config.zero_copy_threshold,
                },
                io_mode: config.io_mode,
                // rosbag2's readers (rosbags among them) require the profile.
                profile: match family {
                    SourceFamily::Dds | SourceFamily::Zenoh => "ros2".to_string(),
                    SourceFamily::Iceoryx2 => String::new(),
                },
                durability: Durability {
                    sync_period: config.sync_period,
                    ..Durability::default()
                },
                sealing: config.sealing.clone(),
                stored_digest: config.stored_digest,
                checkpoints: config.checkpoints.clone(),
                ..WriterOptions::default()
            },
            metadata,
            user_metadata: config.user_metadata.clone(),
            attachments: config.attachments.clone(),
            started_ns,
            observer,
            receive,
        }
    }

    fn path(&self, index: u32) -> PathBuf {
        let sealed = if self.options.sealing.is_some() {
            recd_storage::SEALED_SUFFIX
        } else {
            ""
        };
        self.dir
            .join(format!("{}_{index:04}.mcap{sealed}", self.prefix))
    }

    /// How often a sealed file's open chunk is padded and sealed: half the sync period,
    /// so that what a power cut can take stays about what it is unsealed.
    fn seal_interval(&self) -> Option<Duration> {
        self.options.sealing.as_ref()?;
        Some(match self.options.durability.sync_period {
            Some(period) => (period / 2).max(MIN_SEAL_INTERVAL),
            None => Duration::from_secs(1),
        })
    }

    /// Creates the file at `path`, starting with the session's metadata and attachments.
    fn create(&self, path: &Path) -> Result<StreamWriter, WriteError> {
        self.observer.creating(path);
        let mut file = StreamWriter::create(path, self.options.clone())?;
        if !self.user_metadata.is_empty() {
            let name = keys::per_file_name(keys::USER_METADATA, &file_name(path));
            file.add_metadata(&name, &self.user_metadata)?;
        }
        for attachment in &self.attachments {
            file.add_attachment(attachment, self.started_ns)?;
        }
        Ok(file)
    }
}

/// The current file, the ones being finished, and where the next one goes.
pub(crate) struct Files {
    plan: FilePlan,
    /// Where the status sees the current and the closed files.
    progress: Arc<WriterProgress>,
    /// The file being written; `None` after a new one could not be created.
    pub current: Option<StreamWriter>,
    /// The number of the next file; the current one's is one less.
    next_index: u32,
    started: Instant,
    bytes_before: u64,
    closing: Closing,
    last_flush: Instant,
}

/// The smallest DDS sample written straight from its own buffer rather than batched. A
/// DDS sample is a copy out of rustdds already, so a second copy into the batch costs
/// less than a direct-I/O request per sample (64 KiB × 1 kHz: 1,000 requests a second,
/// the virtio notification alone 12 % of recd); shared-memory samples keep the
/// configured threshold, for them staying in place saves the only copy.
const DDS_IN_PLACE_MIN: usize = 1 << 20;

/// With direct I/O, how often batched messages are flushed when the writer runs out of
/// work: each such flush pads the file to a whole block.
const DIRECT_FLUSH_INTERVAL: Duration = Duration::from_millis(20);

/// The shortest time between two seals of a sealed file's open chunk: each may pad up to
/// 64 KiB.
const MIN_SEAL_INTERVAL: Duration = Duration::from_millis(50);

impl Files {
    /// Creates the first file, so that a recording that cannot write fails at its start.
    /// Its I/O mode, once `auto` is resolved, is the one of every later file, and goes
    /// into their `recorder` metadata as `io_mode`.
    pub fn create(plan: FilePlan, progress: Arc<WriterProgress>) -> Result<Self, WriteError> {
        let path = plan.path(0);
        let file = plan.create(&path)?;
        let mut files = Self::new(plan, progress, file.io_mode());
        files.current = Some(file);
        files.next_index = 1;
        *files.progress.current_file.lock().expect("progress lock") = Some(path);
        Ok(files)
    }

    /// Creates no file until [`Self::open_next`] (a pre-trigger session's first trigger);
    /// a probe file in the directory still makes a recording that cannot write fail at
    /// its start, and resolves `auto`.
    pub fn deferred(plan: FilePlan, progress: Arc<WriterProgress>) -> Result<Self, WriteError> {
        let io_mode = recd_storage::probe_io_mode(&plan.dir, plan.options.io_mode)?;
        Ok(Self::new(plan, progress, io_mode))
    }

    fn new(mut plan: FilePlan, progress: Arc<WriterProgress>, io_mode: IoMode) -> Self {
        plan.options.io_mode = io_mode;
        plan.metadata
            .insert("io_mode".to_string(), io_mode.to_string());
        Self {
            plan,
            progress,
            current: None,
            next_index: 0,
            started: Instant::now(),
            bytes_before: 0,
            closing: Closing::default(),
            last_flush: Instant::now(),
        }
    }

    /// The I/O path the files are written with: direct or buffered.
    pub fn io_mode(&self) -> IoMode {
        self.plan.options.io_mode
    }

    fn direct_io(&self) -> bool {
        self.io_mode() == IoMode::Direct
    }

    /// The number of the current file (or of the next, with none open): changes with
    /// every file opened.
    pub fn file_number(&self) -> u32 {
        self.next_index
    }

    /// The current file's name, when one is open.
    pub fn current_name(&self) -> Option<String> {
        self.current.as_ref()?;
        Some(file_name(&self.plan.path(self.next_index.checked_sub(1)?)))
    }

    /// Who hears of the files and the topics' health.
    pub fn observer(&self) -> &Arc<dyn RecordingObserver> {
        &self.plan.observer
    }

    /// Bytes written to all files so far.
    pub fn bytes_written(&self) -> u64 {
        self.bytes_before + self.current.as_ref().map_or(0, StreamWriter::bytes_written)
    }

    /// Whether the current file is due to be split, `just_written` bytes after the last
    /// message (0 when checking while idle).
    pub fn split_due(&self, just_written: usize) -> bool {
        let Some(file) = &self.current else {
            return false;
        };
        let split = &self.plan.split;
        let by_size = just_written > 0
            && split
                .max_bytes
                .is_some_and(|max| file.bytes_written() >= max);
        let by_time = split
            .max_duration
            .is_some_and(|max| self.started.elapsed() >= max && file.message_count() > 0);
        by_size || by_time
    }

    /// Continues in a new file and finishes the old one (see [`Self::end_current`]). An
    /// error means there is no current file any more.
    pub fn start_next(&mut self, ending: Ending<'_>) -> Result<(), WriteError> {
        if self.current.is_none() {
            return Ok(());
        }
        self.end_current(ending);
        self.open_next().map(drop)
    }

    /// Finishes the current file, with the `recorder` metadata of `ending`, on a thread of
    /// its own, so that its summary and sync do not hold up the handoff; after a write
    /// error it ends on its last complete record. Messages go nowhere until
    /// [`Self::open_next`].
    pub fn end_current(&mut self, ending: Ending<'_>) {
        let Some(old) = self.current.take() else {
            return;
        };
        self.bytes_before += old.bytes_written();
        let metadata = self.recorder_metadata(ending.counts);
        let progress = self.progress.clone();
        let observer = self.plan.observer.clone();
        let (topics, health) = (ending.topics, ending.health);
        self.closing.start(move || {
            end_file(
                old,
                &metadata,
                &health,
                &topics,
                &progress,
                observer.as_ref(),
            )
        });
        *self.progress.current_file.lock().expect("progress lock") = None;
    }

    /// Starts the next file, and says where it is.
    pub fn open_next(&mut self) -> Result<PathBuf, WriteError> {
        let path = self.plan.path(self.next_index);
        self.next_index += 1;
        self.current = Some(self.plan.create(&path)?);
        self.started = Instant::now();
        *self.progress.current_file.lock().expect("progress lock") = Some(path.clone());
        Ok(path)
    }

    /// Hands batched small messages to the kernel (with direct I/O at most every
    /// [`DIRECT_FLUSH_INTERVAL`], as each flush pads to a block; a sealed file's open
    /// chunk is padded and sealed at most every [`FilePlan::seal_interval`]).
    pub fn flush(&mut self) -> Result<(), WriteError> {
        if let Some(interval) = self.plan.seal_interval() {
            if self.last_flush.elapsed() < interval {
                return Ok(());
            }
            self.last_flush = Instant::now();
        } else if self.direct_io() {
            if self.last_flush.elapsed() < DIRECT_FLUSH_INTERVAL {
                return Ok(());
            }
            self.last_flush = Instant::now();
        }
        let Some(file) = &mut self.current else {
            return Ok(());
        };
        file.flush()?;
        if let Some((_, newest)) = file.time_range() {
            self.progress
                .flushed_log_ns
                .fetch_max(newest, std::sync::atomic::Ordering::Relaxed);
        }
        Ok(())
    }

    /// How long to sleep with nothing to write: the sources wake the writer when they
    /// hand something over, so only a split by duration (or a direct-I/O flush) needs a
    /// timer.
    pub fn idle_wait(&self) -> Duration {
        let longest = if let Some(interval) = self.plan.seal_interval() {
            interval
        } else if self.direct_io() {
            DIRECT_FLUSH_INTERVAL
        } else {
            Duration::from_millis(250)
        };
        match (&self.current, self.plan.split.max_duration) {
            (Some(file), Some(max)) if file.message_count() > 0 => max
                .saturating_sub(self.started.elapsed())
                .clamp(Duration::from_millis(1), longest),
            _ => longest,
        }
    }

    /// Finishes the current file with the `recorder` metadata `counts`, waits for the
    /// files still being finished, and returns every file's summary (in order) and the
    /// errors met.
    pub fn finish(mut self, ending: Ending<'_>) -> (Vec<FileSummary>, Vec<WriteError>) {
        let mut files = Vec::new();
        let mut errors = Vec::new();
        let metadata = self.recorder_metadata(ending.counts);
        let mut current = self.current.take();
        if current.is_some() && self.next_index > 1 && ending.health.holds_nothing() {
            // A split's last file that no message reached before the stop: not kept.
            let file = current.take().expect("a current file");
            let path = file.path().to_path_buf();
            drop(file);
            if std::fs::remove_file(&path).is_ok() {
                self.plan.observer.removed(&path);
            }
        }
        let ended = current.map(|file| {
            let observer = self.plan.observer.as_ref();
            end_file(
                file,
                &metadata,
                &ending.health,
                &ending.topics,
                &self.progress,
                observer,
            )
        });
        let closed = std::mem::take(&mut self.closing).finish();
        for (summary, error) in ended.into_iter().chain(closed) {
            files.push(summary);
            errors.extend(error);
        }
        files.sort_by(|a, b| a.path.cmp(&b.path));
        *self.progress.current_file.lock().expect("progress lock") = None;
        (files, errors)
    }

    /// The `recorder` Metadata record of the current file: the plan's entries, the
    /// per-topic counts and the file's number.
    fn recorder_metadata(&self, counts: BTreeMap<&str, TopicCounts>) -> BTreeMap<String, String> {
        let mut metadata = self.plan.metadata.clone();
        metadata.insert(
            "topics".to_string(),
            serde_json::to_string(&counts).expect("counts serialize"),
        );
        let index = self.next_index.saturating_sub(1);
        metadata.insert("file_index".to_string(), index.to_string());
        if let Some(receive) = &self.plan.receive {
            metadata.insert(
                RECEIVE_THREAD.to_string(),
                serde_json::to_string(&receive.snapshot()).expect("report serializes"),
            );
        }
        metadata
    }
}

/// Ends `file` with `metadata` (after a write error, on its last complete record), moves
/// the messages it acknowledged but could not keep from written to dropped, and tells
/// the status and the observer.
fn end_file(
    mut file: StreamWriter,
    metadata: &BTreeMap<String, String>,
    health: &FileHealthSummary,
    topics: &[Arc<Topic>],
    progress: &WriterProgress,
    observer: &dyn RecordingObserver,
) -> (FileSummary, Option<WriteError>) {
    let name = file
        .path()
        .file_name()
        .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
    // Refused only after a write error, when the file ends without it anyway.
    let _ = file.add_metadata(&keys::recorder_metadata_name(&name), metadata);
    let _ = file.add_metadata(&keys::health_metadata_name(&name), &health.to_metadata());
    progress.health.lock().expect("progress lock").add(health);
    let ended = file.end();
    for (name, (messages, bytes)) in &ended.unwritten {
        if let Some(topic) = topics.iter().find(|t| &t.name == name) {
            topic.counters.unwrite(*messages, *bytes);
        }
    }
    let summary = ended.summary;
    let closed = ClosedFile {
        path: summary.path.clone(),
        bytes: summary.bytes,
        messages: summary.message_count,
        indexed: summary.indexed,
        health: Some(health.verdict),
        time_range: summary.time_range,
        stored: (summary.stored_sha256).map(|sha256| (summary.bytes, sha256)),
    };
    (progress.files_closed).fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    observer.ended(&closed);
    (summary, ended.error)
}

fn file_name(path: &Path) -> String {
    path.file_name()
        .map_or_else(String::new, |n| n.to_string_lossy().into_owned())
}
