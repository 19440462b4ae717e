//! A recording: start it, watch it, stop it. This module starts and stops its threads;
//! `status` assembles what it shows of itself.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use recd_health::{ExpectError, Expectations, HealthTally};
use recd_storage::{IoMode, LogWindow, Marker, WriteError};

use crate::allocator::KeptFreedMemory;
use crate::config::{PreTrigger, RecordingConfig, TopicSelection};
use crate::handoff::now_ns;
use crate::health::HealthMonitor;
use crate::live_selection::LiveSelection;
use crate::registry::TopicRegistry;
use crate::select::{PatternError, TopicFilter};
use crate::source::dds::{DdsError, DdsSource, DdsStopper};
use crate::source::shm::{ShmError, ShmSource};
use crate::source::stats::{BehindProbe, ReceiveStats};
#[cfg(feature = "zenoh")]
use crate::source::zenoh::{ZenohError, ZenohSource};
use crate::trigger::{TriggerError, TriggerRequest, TriggerWindow, Triggered};
use crate::writer::{
    FilePlan, PreTriggerState, RecordingObserver, SourceFamily, SpaceGuard, Unobserved, Writer,
    WriterProgress, WriterReport, WriterRequests, WriterSetup,
};

mod metadata;
mod sources;
mod status;

pub(crate) use sources::Sources;

use metadata::recorder_metadata;
use status::{receive_thread_statuses, topic_statuses};
pub use status::{BufferStatus, RecordingStatus, RecordingSummary, TopicStatus};

/// How long a trigger waits for the writers to create its files.
const TRIGGER_ANSWER_TIMEOUT: Duration = Duration::from_secs(10);

/// How far ahead of now a trigger's moment may be when it arrives (a caller's sleep
/// until the moment can wake a little early).
const TRIGGER_AHEAD_SLACK_NS: u64 = 20_000_000;

/// Why a recording could not start.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    /// A topic pattern is not a valid glob.
    #[error(transparent)]
    Pattern(#[from] PatternError),
    /// The file system of the output directory is smaller than `min_free_space`.
    #[error("min_free_space ({}) is larger than the whole file system of {} ({})", bytes(*minimum), dir.display(), bytes(*total))]
    MinFreeSpaceTooLarge {
        /// The output directory.
        dir: PathBuf,
        /// The configured minimum.
        minimum: u64,
        /// The file system's size.
        total: u64,
    },
    /// The file system of the output directory has less than `min_free_space` free.
    #[error("only {} free on the file system of {}, less than min_free_space ({}); free some space (or lower min_free_space) and start again", bytes(*free), dir.display(), bytes(*minimum))]
    DiskFull {
        /// The output directory.
        dir: PathBuf,
        /// Bytes free.
        free: u64,
        /// The configured minimum.
        minimum: u64,
    },
    /// The output directory could not be created.
    #[error("cannot create the output directory {}: {source}", path.display())]
    OutputDir {
        /// The directory.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The first file could not be created.
    #[error(transparent)]
    File(#[from] WriteError),
    /// The shared-memory source could not start.
    #[error(transparent)]
    Shm(#[from] ShmError),
    /// An expectation cannot be used.
    #[error(transparent)]
    Expectation(#[from] ExpectError),
    /// A rate limit or downsampling rule cannot be used.
    #[error(transparent)]
    Throttle(#[from] crate::ThrottleError),
    /// Neither source is enabled.
    #[error("nothing to record: iceoryx2 is switched off and no DDS or Zenoh domain is given")]
    NoSource,
    /// The Zenoh source could not join the network.
    #[cfg(feature = "zenoh")]
    #[error(transparent)]
    Zenoh(#[from] ZenohError),
    /// The Zenoh source is asked for, but recd was built without it.
    #[error("recd was built without the Zenoh source (cargo feature `zenoh`)")]
    ZenohNotBuilt,
    /// The DDS source could not join its domain.
    #[error(transparent)]
    Dds(#[from] DdsError),
    /// A thread could not be started.
    #[error("cannot start the {what} thread: {source}")]
    Thread {
        /// Which thread.
        what: &'static str,
        /// Why.
        source: std::io::Error,
    },
}

/// Why a recording's topics could not be changed.
#[derive(Debug, thiserror::Error)]
pub enum SetTopicsError {
    /// A pattern is not a valid glob; nothing changed.
    #[error(transparent)]
    Pattern(#[from] PatternError),
    /// A receive thread did not take the change in time (it still will).
    #[error("a receive thread did not take the change within {0:?}")]
    NotTaken(Duration),
}

/// How long [`Recording::set_topics`] waits for the receive threads.
const SET_TOPICS_TIMEOUT: Duration = Duration::from_secs(5);

/// Why stopping did not end cleanly; the files written so far stay on disk.
#[derive(Debug, thiserror::Error)]
pub enum StopError {
    /// A recorder thread panicked (a bug).
    #[error("the {0} thread panicked; files written so far are recoverable with `rec reindex`")]
    Panicked(&'static str),
}

/// A running recording of iceoryx2 services and, if configured, DDS topics.
///
/// ```
/// use recd_engine::{Recording, RecordingConfig};
///
/// let dir = tempfile::tempdir()?;
/// let mut config = RecordingConfig::new(dir.path());
/// config.topics.include = vec!["camera/*".into()];
/// // An iceoryx2 domain of its own, so that the example records nobody else's topics.
/// let prefix = format!("recd_doc{}_", std::process::id());
/// config.iceoryx2_prefix = Some(prefix.clone());
/// let recording = Recording::start(config)?;
/// assert_eq!(recording.status().current_files.len(), 1);
/// let summary = recording.stop()?;
/// assert_eq!(summary.files.len(), 1);
/// assert!(summary.topics.is_empty());
/// # // iceoryx2 keeps a domain's management segment after its last node; remove it.
/// # for entry in std::fs::read_dir("/dev/shm")? {
/// #     let entry = entry?;
/// #     if entry.file_name().to_string_lossy().starts_with(&prefix) {
/// #         std::fs::remove_file(entry.path())?;
/// #     }
/// # }
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct Recording {
    stop: Arc<AtomicBool>,
    /// Set while the session is paused (shared with every writer thread).
    paused: Arc<AtomicBool>,
    /// A pre-trigger session's buffer settings.
    pre_trigger: Option<PreTrigger>,
    shm: Option<JoinHandle<()>>,
    dds: Option<(JoinHandle<()>, DdsStopper)>,
    /// The Zenoh source's thread.
    #[cfg(feature = "zenoh")]
    zenoh: Option<JoinHandle<()>>,
    /// One per source family: a session recording both writes files of each.
    writers: Vec<WriterThread>,
    registry: Arc<TopicRegistry>,
    receive_stats: Vec<Arc<ReceiveStats>>,
    /// Changes of the selection, taken by every receive thread.
    selection: Arc<LiveSelection>,
    io_mode: IoMode,
    started_ns: u64,
    started: Instant,
    /// glibc keeps freed memory for reuse until the recording begins to stop.
    kept_memory: KeptFreedMemory,
}

impl Recording {
    /// Creates the first file and starts the receive and writer threads.
    pub fn start(config: RecordingConfig) -> Result<Self, StartError> {
        Self::start_observed(config, Arc::new(Unobserved))
    }

    /// As [`Self::start`], with `observer` told of each file before it is created and
    /// once it is finished.
    pub fn start_observed(
        config: RecordingConfig,
        observer: Arc<dyn RecordingObserver>,
    ) -> Result<Self, StartError> {
        let kept_memory = KeptFreedMemory::hold();
        // The sources join their domains before anything is created on disk, so that a
        // domain one cannot join leaves nothing behind.
        let sources = Sources::open(&config)?;
        std::fs::create_dir_all(&config.output_dir).map_err(|source| StartError::OutputDir {
            path: config.output_dir.clone(),
            source,
        })?;
        let guard = match config.min_free_space {
            Some(minimum) => guard_for(&config.output_dir, minimum)?,
            None => None,
        };
        let Sources {
            stop,
            registry,
            selection,
            dds,
            shm,
            #[cfg(feature = "zenoh")]
            zenoh,
        } = sources;
        let (dds, dds_receivers) = dds.unzip();
        let (shm, shm_receivers) = shm.unzip();
        #[cfg(feature = "zenoh")]
        let (zenoh, zenoh_receivers) = zenoh.unzip();
        #[allow(unused_mut)]
        let mut receive_stats: Vec<_> = (shm.iter().map(ShmSource::stats))
            .chain(dds.iter().map(DdsSource::stats))
            .collect();
        #[cfg(feature = "zenoh")]
        receive_stats.extend(zenoh.iter().map(ZenohSource::stats));
        let started_ns = now_ns();
        let metadata = recorder_metadata(&config, started_ns);
        let paused = Arc::new(AtomicBool::new(config.start_paused));
        let families = SourceFamily::recorded(&config);
        let first_family = families[0];
        let expectations = Arc::new(Expectations::new(&config.expect)?);
        let dds_parameters = dds.as_ref().and_then(DdsSource::parameter_board);
        let create_writer = |family, receivers, receive: Option<Arc<ReceiveStats>>| {
            let pre_trigger = config.pre_trigger.as_ref().map(|pre_trigger| {
                let share = families.len() as u64;
                PreTriggerState::new(pre_trigger, pre_trigger.buffer_bytes / share)
            });
            let requests = Arc::new(WriterRequests::new(paused.clone()));
            let progress = Arc::new(WriterProgress::default());
            // One writer (the first) keeps the required rules, over every topic.
            let keeps_required = family == first_family;
            let health = HealthMonitor::new(
                expectations.clone(),
                registry.clone(),
                started_ns,
                keeps_required,
                !config.test_hooks.no_health,
            );
            let plan = FilePlan::new(
                &config,
                family,
                started_ns,
                metadata.clone(),
                observer.clone(),
                receive,
            );
            let delay = config.test_hooks.writer_delay;
            let setup = WriterSetup {
                guard: guard.clone(),
                delay,
                requests: requests.clone(),
                pre_trigger,
                health,
                health_channel: family == SourceFamily::Iceoryx2,
                parameters: dds_parameters
                    .clone()
                    .filter(|_| family == SourceFamily::Dds),
            };
            let writer = Writer::create(receivers, plan, progress.clone(), setup)?;
            Ok::<_, StartError>((writer, progress, requests))
        };
        let shm_writer = match shm_receivers {
            Some(receivers) => Some(create_writer(
                SourceFamily::Iceoryx2,
                receivers,
                shm.as_ref().map(ShmSource::stats),
            )?),
            None => None,
        };
        let dds_writer = match dds_receivers {
            Some(receivers) => Some(create_writer(
                SourceFamily::Dds,
                receivers,
                dds.as_ref().map(DdsSource::stats),
            )?),
            None => None,
        };
        #[cfg(feature = "zenoh")]
        let zenoh_writer = match zenoh_receivers {
            Some(receivers) => Some(create_writer(
                SourceFamily::Zenoh,
                receivers,
                zenoh.as_ref().map(ZenohSource::stats),
            )?),
            None => None,
        };
        #[allow(unused_mut)]
        let mut io_modes: Vec<IoMode> = (shm_writer.iter().chain(&dds_writer))
            .map(|(writer, _, _)| writer.io_mode())
            .collect();
        #[cfg(feature = "zenoh")]
        io_modes.extend(zenoh_writer.iter().map(|(writer, _, _)| writer.io_mode()));
        let io_mode = io_modes.first().copied().unwrap_or(IoMode::Buffered);
        let mut writers = Vec::new();
        // Should a receive thread not start, its writer waits for a stop mark that will
        // never come; it is detached and ends with the process.
        let dds = match (dds, dds_writer) {
            (Some(mut source), Some((writer, progress, requests))) => {
                let writer = spawn("recd-dds-writer", "DDS writer", move || writer.run())?;
                source.set_consumer_thread(writer.thread().clone());
                writers.push(WriterThread {
                    writer,
                    progress,
                    requests,
                });
                let stopper = source.stopper();
                Some((
                    spawn("recd-dds-receive", "DDS receive", move || source.run())?,
                    stopper,
                ))
            }
            _ => None,
        };
        #[cfg(feature = "zenoh")]
        let zenoh = match (zenoh, zenoh_writer) {
            (Some(mut source), Some((writer, progress, requests))) => {
                let writer = spawn("recd-zenoh-writer", "Zenoh writer", move || writer.run())?;
                source.set_consumer_thread(writer.thread().clone());
                writers.push(WriterThread {
                    writer,
                    progress,
                    requests,
                });
                Some(spawn("recd-zenoh", "Zenoh source", move || source.run())?)
            }
            _ => None,
        };
        let shm = match (shm, shm_writer) {
            (Some(mut source), Some((writer, progress, requests))) => {
                let writer = spawn("recd-writer", "writer", move || writer.run())?;
                source.set_consumer_thread(writer.thread().clone());
                writers.push(WriterThread {
                    writer,
                    progress,
                    requests,
                });
                Some(spawn("recd-shm-receive", "receive", move || source.run())?)
            }
            _ => None,
        };
        // The threads say how they got scheduled as they start; wait for it, so that the
        // caller can tell of a refused priority at once.
        for stats in &receive_stats {
            stats.wait_scheduled(Duration::from_secs(2));
        }
        Ok(Self {
            stop,
            paused,
            pre_trigger: config.pre_trigger.clone(),
            shm,
            dds,
            #[cfg(feature = "zenoh")]
            zenoh,
            writers,
            registry,
            receive_stats,
            selection,
            io_mode,
            started_ns,
            started: Instant::now(),
            kept_memory,
        })
    }

    /// Records what `topics` selects from now on, without a gap in the topics it keeps
    /// (`rec topics-set`). Each receive thread receives the topics it no longer records
    /// one last time and ends them (their counts are final), writes a marker saying
    /// `text` into its files, stamped with that moment, then opens the topics added:
    /// their first samples come after it. Returns the moments, one per receive thread.
    pub fn set_topics(
        &self,
        topics: &TopicSelection,
        text: &str,
    ) -> Result<Vec<u64>, SetTopicsError> {
        let filter = TopicFilter::new(topics)?;
        let version = self.selection.publish(filter, text.to_string());
        if let Some((_, stopper)) = &self.dds {
            stopper.wake();
        }
        (self.selection)
            .wait_taken(version, SET_TOPICS_TIMEOUT)
            .ok_or(SetTopicsError::NotTaken(SET_TOPICS_TIMEOUT))
    }

    /// Stops writing: messages are still taken from the publishers (and released), and
    /// counted as paused; the files stay open. False if it was paused already.
    pub fn pause(&self) -> bool {
        !self.paused.swap(true, Ordering::Relaxed)
    }

    /// Writes again after [`Self::pause`]. False if it was not paused.
    pub fn resume(&self) -> bool {
        self.paused.swap(false, Ordering::Relaxed)
    }

    /// Ends the files being written and continues in new ones (rosbag2's
    /// `split_bagfile`); a pre-trigger session's window stays one file. False for a
    /// pre-trigger session.
    pub fn split(&self) -> bool {
        if self.pre_trigger.is_some() {
            return false;
        }
        for thread in &self.writers {
            thread.requests.split();
            thread.writer.thread().unpark();
        }
        true
    }

    /// Writes a marker with `text`, stamped now, into every file being written (a
    /// Metadata record named [`recd_storage::iceoryx2::MARKER`]).
    pub fn mark(&self, text: &str) -> Marker {
        let marker = Marker {
            time_ns: now_ns(),
            text: text.to_string(),
        };
        for thread in &self.writers {
            thread.requests.mark(marker.clone());
            thread.writer.thread().unpark();
        }
        marker
    }

    /// Writes the window that `window` asks for around `at_ns` (ns since the epoch; now
    /// when `None`) from a pre-trigger session's buffer into a new file (one per source
    /// family), or extends the window being written when they overlap. Returns once the
    /// files are created; their messages after now are written as they arrive. A moment
    /// older than the buffer reaches, or still to come, is refused: the caller waits for
    /// a moment ahead.
    pub fn trigger(
        &self,
        window: &TriggerWindow,
        at_ns: Option<u64>,
    ) -> Result<Triggered, TriggerError> {
        let Some(pre_trigger) = &self.pre_trigger else {
            return Err(TriggerError::NotBuffered);
        };
        let now = now_ns();
        let time_ns = at_ns.unwrap_or(now);
        if time_ns > now.saturating_add(TRIGGER_AHEAD_SLACK_NS) {
            return Err(TriggerError::Ahead {
                ahead: Duration::from_nanos(time_ns - now),
            });
        }
        let reach = now.saturating_sub(recd_storage::window::nanos(pre_trigger.duration));
        let oldest = reach.max(self.started_ns);
        if time_ns < oldest {
            return Err(TriggerError::TooOld {
                age: Duration::from_nanos(now - time_ns),
                holds: Duration::from_nanos(now - oldest),
                since_start: self.started_ns > reach,
            });
        }
        let answers: Vec<_> = self
            .writers
            .iter()
            .map(|thread| {
                let (answer, answered) = std::sync::mpsc::channel();
                thread.requests.trigger(TriggerRequest {
                    time_ns,
                    window: window.clone(),
                    answer,
                });
                thread.writer.thread().unpark();
                answered
            })
            .collect();
        let mut files = Vec::new();
        let mut asked: Option<LogWindow> = None;
        for answered in answers {
            match answered.recv_timeout(TRIGGER_ANSWER_TIMEOUT) {
                Ok(Ok((file, window))) => {
                    files.push(file);
                    asked = Some(asked.map_or(window, |known| known.union(&window)));
                }
                Ok(Err(message)) => return Err(TriggerError::File(message)),
                Err(_) => return Err(TriggerError::NoAnswer(TRIGGER_ANSWER_TIMEOUT)),
            }
        }
        files.sort_by(|a, b| a.path.cmp(&b.path));
        Ok(Triggered {
            time_ns,
            window: asked.unwrap_or(LogWindow {
                start_ns: time_ns,
                end_ns: time_ns,
            }),
            files,
        })
    }

    /// The buffer of a pre-trigger session; `None` for one that writes everything.
    pub fn pre_trigger(&self) -> Option<&PreTrigger> {
        self.pre_trigger.as_ref()
    }

    /// What work that must yield to this recording reads to see its writer fall behind,
    /// between two status samples.
    pub fn behind_probe(&self) -> BehindProbe {
        BehindProbe::new(&self.receive_stats)
    }

    /// Whether the receive and writer threads are still running (they end only at
    /// [`Recording::stop`], or by a bug).
    pub fn threads_alive(&self) -> bool {
        self.writers.iter().all(|w| !w.writer.is_finished())
            && self.shm.as_ref().is_none_or(|thread| !thread.is_finished())
            && self
                .dds
                .as_ref()
                .is_none_or(|(thread, _)| !thread.is_finished())
            && self.zenoh_alive()
    }

    #[cfg(feature = "zenoh")]
    fn zenoh_alive(&self) -> bool {
        self.zenoh
            .as_ref()
            .is_none_or(|thread| !thread.is_finished())
    }

    #[cfg(not(feature = "zenoh"))]
    fn zenoh_alive(&self) -> bool {
        true
    }

    /// Receives what is waiting, writes it, finishes every file and reports.
    pub fn stop(self) -> Result<RecordingSummary, StopError> {
        // Before the sources and writers free their ports and buffers.
        drop(self.kept_memory);
        self.stop.store(true, Ordering::Release);
        if let Some((thread, stopper)) = self.dds {
            stopper.wake();
            thread
                .join()
                .map_err(|_| StopError::Panicked("DDS receive"))?;
        }
        if let Some(thread) = self.shm {
            thread.join().map_err(|_| StopError::Panicked("receive"))?;
        }
        #[cfg(feature = "zenoh")]
        if let Some(thread) = self.zenoh {
            thread
                .join()
                .map_err(|_| StopError::Panicked("Zenoh source"))?;
        }
        let mut files = Vec::new();
        let mut write_error = None;
        let mut health = HealthTally::default();
        for thread in self.writers {
            let report = thread
                .writer
                .join()
                .map_err(|_| StopError::Panicked("writer"))?;
            files.extend(report.files);
            write_error = write_error.or(report.error);
            health.merge(&thread.progress.health.lock().expect("progress lock"));
        }
        files.sort_by(|a, b| a.path.cmp(&b.path));
        Ok(RecordingSummary {
            files,
            topics: topic_statuses(&self.registry),
            duration: self.started.elapsed(),
            write_error,
            receive_threads: receive_thread_statuses(&self.receive_stats),
            required: self.registry.required(),
            health,
        })
    }
}

/// A writer thread and what it shows of itself.
struct WriterThread {
    writer: JoinHandle<WriterReport>,
    progress: Arc<WriterProgress>,
    requests: Arc<WriterRequests>,
}

/// A free-space guard for `dir`, refused when its file system is smaller than `minimum`
/// or has less than that free already; none for a file system that reports no size
/// (ramfs), which has nothing to guard.
fn guard_for(dir: &Path, minimum: u64) -> Result<Option<SpaceGuard>, StartError> {
    let space = recd_storage::space_of(dir).map_err(|source| StartError::OutputDir {
        path: dir.to_path_buf(),
        source,
    })?;
    if space.total == 0 {
        return Ok(None);
    }
    if space.total < minimum {
        return Err(StartError::MinFreeSpaceTooLarge {
            dir: dir.to_path_buf(),
            minimum,
            total: space.total,
        });
    }
    if space.available < minimum {
        return Err(StartError::DiskFull {
            dir: dir.to_path_buf(),
            free: space.available,
            minimum,
        });
    }
    Ok(Some(SpaceGuard::new(dir.to_path_buf(), minimum)))
}

/// A size for people: 1.5 GiB, 30 MiB.
fn bytes(n: u64) -> String {
    bytesize::ByteSize::b(n).to_string()
}

/// Starts a named thread; `what` names it in the error should it not start.
pub(crate) fn spawn<T: Send + 'static>(
    name: &str,
    what: &'static str,
    run: impl FnOnce() -> T + Send + 'static,
) -> Result<JoinHandle<T>, StartError> {
    std::thread::Builder::new()
        .name(name.into())
        .spawn(run)
        .map_err(|source| StartError::Thread { what, source })
}
