//! What a recording shows of itself: the live status (per topic, files, buffer, receive
//! threads) and the summary of a finished recording.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use recd_health::{HealthTally, Requirement, TopicHealth};
use recd_storage::{FileSummary, IoMode, WriteError};

use super::Recording;
use crate::registry::TopicRegistry;
use crate::source::stats::{ReceiveStats, ReceiveThreadStatus};
use crate::topic::TopicCounts;
use crate::writer::{DiskFull, WriterProgress};

/// One topic in a status or summary.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct TopicStatus {
    /// Channel name in the file.
    pub name: String,
    /// Where it is recorded from: the iceoryx2 service, or `dds:` and the DDS topic.
    pub service: String,
    /// Counts so far.
    pub counts: TopicCounts,
    /// The subscriber's queue, in samples, where the source has one (iceoryx2's
    /// `subscriber_max_buffer_size`).
    #[serde(default)]
    pub queue_depth: Option<u64>,
    /// Its health: state, since when, and what is expected of it.
    #[serde(default)]
    pub health: TopicHealth,
    /// When its newest sample was received, ns since the Unix epoch (renewed every
    /// 20 ms by the health watch); `None` before the first.
    #[serde(default)]
    pub last_sample_ns: Option<u64>,
}

/// A live view of a recording.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct RecordingStatus {
    /// Paused (`rec pause`): messages are counted, not written.
    #[serde(default)]
    pub paused: bool,
    /// When the recording started, ns since the Unix epoch.
    pub started_ns: u64,
    /// Time since the start.
    pub elapsed: Duration,
    /// The files being written: one, or one per source family when the recording has
    /// both (none while paused or after a write error).
    pub current_files: Vec<PathBuf>,
    /// Files split off and closed so far (the current one is not among them); each one's
    /// summary is in the observer's `ended` and the stop's report.
    #[serde(default)]
    pub files_closed: u64,
    /// Every message up to this log time, ns since the Unix epoch, is in the files (in the
    /// kernel's hands), as far as the writers that wrote any know: the oldest of their
    /// newest flushed log times. `None` before any was written.
    #[serde(default)]
    pub written_until_ns: Option<u64>,
    /// Bytes written to all files.
    pub bytes_written: u64,
    /// Per topic, in the order found.
    pub topics: Vec<TopicStatus>,
    /// Services that match the selection but could not be recorded, with the reason.
    pub problems: BTreeMap<String, String>,
    /// The first write error, after which messages are dropped.
    pub write_error: Option<String>,
    /// Set while writing is paused because the disk is nearly full (`min_free_space`);
    /// messages are dropped and counted meanwhile.
    #[serde(default)]
    pub disk_full: Option<DiskFull>,
    /// How the files are written: direct or buffered (what `auto` chose).
    pub io_mode: IoMode,
    /// A pre-trigger session's buffer; `None` for a session that writes everything.
    #[serde(default)]
    pub buffer: Option<BufferStatus>,
    /// Each source's receive thread: its scheduling and how late its passes came.
    #[serde(default)]
    pub receive_threads: Vec<ReceiveThreadStatus>,
    /// The required rules, and whether a topic each names has come.
    #[serde(default)]
    pub required: Vec<Requirement>,
}

/// What a pre-trigger session's buffer holds (its let-go messages are each topic's
/// `evicted` count).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct BufferStatus {
    /// The time it keeps (`--pre-trigger`).
    pub duration: Duration,
    /// Its memory (`--buffer-size`).
    pub capacity_bytes: u64,
    /// Messages held.
    pub messages: u64,
    /// Their bytes.
    pub bytes: u64,
    /// The time between the oldest and the newest held.
    pub span: Duration,
}

/// What a finished recording holds.
#[derive(Debug)]
pub struct RecordingSummary {
    /// Every file, in order.
    pub files: Vec<FileSummary>,
    /// Per topic, final counts.
    pub topics: Vec<TopicStatus>,
    /// Wall-clock duration.
    pub duration: Duration,
    /// The first write error, if any; the files hold every message written before it.
    pub write_error: Option<WriteError>,
    /// Each source's receive thread: its scheduling and how late its passes came.
    pub receive_threads: Vec<ReceiveThreadStatus>,
    /// The required rules, and whether a topic each names came.
    pub required: Vec<Requirement>,
    /// The health of its files together: the worst verdict, each topic's gaps.
    pub health: HealthTally,
}

impl Recording {
    /// A pre-trigger session's buffer as of now.
    fn buffer_status(&self) -> Option<BufferStatus> {
        let pre_trigger = self.pre_trigger.as_ref()?;
        let sum = |value: fn(&WriterProgress) -> &AtomicU64| {
            self.progresses()
                .map(|p| value(p).load(Ordering::Relaxed))
                .sum::<u64>()
        };
        Some(BufferStatus {
            duration: pre_trigger.duration,
            capacity_bytes: pre_trigger.buffer_bytes,
            messages: sum(|p| &p.buffered_messages),
            bytes: sum(|p| &p.buffered_bytes),
            span: Duration::from_nanos(
                self.progresses()
                    .map(|p| p.buffered_span_ns.load(Ordering::Relaxed))
                    .max()
                    .unwrap_or(0),
            ),
        })
    }

    /// The recording as of now.
    pub fn status(&self) -> RecordingStatus {
        RecordingStatus {
            buffer: self.buffer_status(),
            paused: self.paused.load(Ordering::Relaxed),
            started_ns: self.started_ns,
            elapsed: self.started.elapsed(),
            current_files: self.current_files(),
            files_closed: self
                .progresses()
                .map(|p| p.files_closed.load(Ordering::Relaxed))
                .sum(),
            written_until_ns: self
                .progresses()
                .map(|p| p.flushed_log_ns.load(Ordering::Relaxed))
                .filter(|&ns| ns > 0)
                .min(),
            bytes_written: self
                .progresses()
                .map(|p| p.bytes_written.load(Ordering::Relaxed))
                .sum(),
            topics: topic_statuses(&self.registry),
            problems: self
                .registry
                .problems
                .lock()
                .expect("problems lock")
                .clone(),
            write_error: self
                .progresses()
                .find_map(|p| p.error.lock().expect("progress lock").clone()),
            disk_full: self
                .progresses()
                .find_map(|p| *p.disk_full.lock().expect("progress lock")),
            io_mode: self.io_mode,
            receive_threads: self.receive_threads(),
            required: self.registry.required(),
        }
    }

    /// Each receive thread's report as of now.
    fn receive_threads(&self) -> Vec<ReceiveThreadStatus> {
        receive_thread_statuses(&self.receive_stats)
    }

    /// The files being written now (none while paused for disk space).
    pub fn current_files(&self) -> Vec<PathBuf> {
        self.progresses()
            .filter_map(|p| p.current_file.lock().expect("progress lock").clone())
            .collect()
    }

    fn progresses(&self) -> impl Iterator<Item = &WriterProgress> {
        self.writers.iter().map(|w| w.progress.as_ref())
    }
}

/// Every topic of `registry` with its counts as of now, in the order found.
pub(super) fn topic_statuses(registry: &TopicRegistry) -> Vec<TopicStatus> {
    registry
        .topics
        .lock()
        .expect("topics lock")
        .iter()
        .map(|topic| TopicStatus {
            name: topic.name.clone(),
            service: topic.service.clone(),
            counts: topic.counters.snapshot(),
            queue_depth: (topic.channel.metadata)
                .get(recd_storage::iceoryx2::SUBSCRIBER_MAX_BUFFER_SIZE)
                .and_then(|depth| depth.parse().ok()),
            health: topic.health.lock().expect("health lock").clone(),
            last_sample_ns: topic.counters.last_sample_ns(),
        })
        .collect()
}

/// Each receive thread's report as of now.
pub(super) fn receive_thread_statuses(stats: &[Arc<ReceiveStats>]) -> Vec<ReceiveThreadStatus> {
    stats.iter().map(|s| s.snapshot()).collect()
}
