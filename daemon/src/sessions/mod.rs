//! The running sessions and their record in the catalog.

use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::sync::Mutex;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use recd_catalog::{
    file_state_text, session_state_text, Catalog, CatalogError, File, FileState, SessionId,
    SessionState, TopicCounts,
};
use recd_control::{
    ErrorKind, ErrorReply, FileEntry, ListedSession, SessionStarted, SessionStatus, SessionStopped,
    StartRequest, TopicEntry, TopicStats,
};
use recd_engine::{
    DdsConfig, Recording, RecordingConfig, RecordingStatus, RingConfig, SplitPolicy, TopicFilter,
    TopicSelection, TopicStatus,
};

use crate::config::DaemonConfig;
use crate::names;

/// One running session.
struct Running {
    id: SessionId,
    directory: PathBuf,
    recording: Recording,
    known_files: Vec<PathBuf>,
    /// Files a split closed that the catalog has as complete.
    completed_files: Vec<PathBuf>,
    rates: Rates,
}

/// A session's counts at one moment: when, bytes in all, and per service the messages
/// and bytes written.
type Sample = (Instant, u64, HashMap<String, (u64, u64)>);

/// Rates over the last sampling period.
#[derive(Default)]
struct Rates {
    last: Option<Sample>,
    bytes_per_s: f64,
    /// Per service: messages and bytes per second.
    per_topic: HashMap<String, (f64, f64)>,
}

impl Rates {
    fn update(&mut self, status: &RecordingStatus) {
        let now = Instant::now();
        let counts: HashMap<String, (u64, u64)> = status
            .topics
            .iter()
            .map(|t| {
                (
                    t.service.clone(),
                    (t.counts.written, t.counts.bytes_written),
                )
            })
            .collect();
        if let Some((then, bytes, previous)) = &self.last {
            let seconds = now.duration_since(*then).as_secs_f64().max(1e-3);
            self.bytes_per_s = status.bytes_written.saturating_sub(*bytes) as f64 / seconds;
            self.per_topic = counts
                .iter()
                .map(|(service, &(messages, bytes))| {
                    let (messages_before, bytes_before) =
                        previous.get(service).copied().unwrap_or_default();
                    let rate = |now: u64, before: u64| now.saturating_sub(before) as f64 / seconds;
                    (
                        service.clone(),
                        (rate(messages, messages_before), rate(bytes, bytes_before)),
                    )
                })
                .collect();
        }
        self.last = Some((now, status.bytes_written, counts));
    }

    /// Messages and bytes per second of one service lately.
    fn of(&self, service: &str) -> (f64, f64) {
        self.per_topic.get(service).copied().unwrap_or_default()
    }
}

/// What the periodic sample found, for systemd's status line.
#[derive(Debug, Default, Clone, Copy)]
pub struct Load {
    /// Sessions recording.
    pub sessions: usize,
    /// Bytes per second over all sessions.
    pub bytes_per_s: f64,
    /// Messages dropped or lost over all sessions so far.
    pub dropped: u64,
    /// Every session's receive and writer threads are running.
    pub healthy: bool,
}

/// The daemon's sessions.
pub struct Sessions {
    config: DaemonConfig,
    catalog: Mutex<Catalog>,
    running: Mutex<BTreeMap<String, Running>>,
}

fn reply(kind: ErrorKind, message: impl Into<String>) -> ErrorReply {
    ErrorReply {
        kind,
        message: message.into(),
    }
}

fn catalog_failure(error: CatalogError) -> ErrorReply {
    reply(ErrorKind::Failed, error.to_string())
}

fn now_ns() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as i64)
}

impl Sessions {
    /// Sessions recorded under `config`, with the catalog opened.
    pub fn new(config: DaemonConfig, catalog: Catalog) -> Self {
        Self {
            config,
            catalog: Mutex::new(catalog),
            running: Mutex::new(BTreeMap::new()),
        }
    }

    /// Starts a session.
    pub fn start(&self, request: &StartRequest) -> Result<SessionStarted, ErrorReply> {
        let started_at = SystemTime::now();
        let name = match &request.name {
            Some(name) => name.clone(),
            None => format!("session-{}", names::timestamp(started_at)),
        };
        names::validate(&name).map_err(|m| reply(ErrorKind::InvalidArgument, m))?;
        let mut running = self.running.lock().expect("sessions lock");
        if running.contains_key(&name) {
            return Err(reply(
                ErrorKind::AlreadyRunning,
                format!(
                    "session {name:?} is already recording; stop it first or pick another name"
                ),
            ));
        }
        if running.len() >= self.config.max_sessions {
            return Err(reply(
                ErrorKind::Failed,
                format!(
                    "{} sessions are recording, the most recd allows (max_sessions)",
                    running.len()
                ),
            ));
        }
        let directory = self.config.data_dir.join(&name);
        let mut config = self.recording_config(request, &name, started_at);
        TopicFilter::new(&config.topics)
            .map_err(|e| reply(ErrorKind::InvalidArgument, e.to_string()))?;
        config.output_dir = directory.clone();
        let config_json = serde_json::to_string(&config).expect("config serializes");
        let id = self
            .catalog()
            .begin_session(&name, &directory, &config_json, now_ns())
            .map_err(catalog_failure)?;
        config.metadata.insert("session".into(), name.clone());
        config.metadata.insert("session_id".into(), id.to_string());
        let recording = match Recording::start(config) {
            Ok(recording) => recording,
            Err(error) => {
                let _ = self.catalog.lock().expect("catalog lock").finish_session(
                    id,
                    SessionState::Failed,
                    now_ns(),
                    &[],
                );
                return Err(reply(
                    ErrorKind::Failed,
                    format!("cannot start session {name:?}: {error}"),
                ));
            }
        };
        let mut session = Running {
            id,
            directory: directory.clone(),
            recording,
            known_files: Vec::new(),
            completed_files: Vec::new(),
            rates: Rates::default(),
        };
        let status = session.recording.status();
        self.note_files(&mut session, &status);
        tracing::info!(session = %name, id, directory = %directory.display(), "session started");
        running.insert(name.clone(), session);
        Ok(SessionStarted {
            name,
            id,
            directory,
        })
    }

    /// Stops the named session, the only one running, or all; finalizes their files.
    pub fn stop(&self, name: Option<&str>, all: bool) -> Result<Vec<SessionStopped>, ErrorReply> {
        let taken: Vec<(String, Running)> = {
            let mut running = self.running.lock().expect("sessions lock");
            let names: Vec<String> = if all {
                running.keys().cloned().collect()
            } else {
                vec![self.resolve(&running, name)?]
            };
            names
                .into_iter()
                .filter_map(|n| running.remove(&n).map(|s| (n, s)))
                .collect()
        };
        Ok(taken
            .into_iter()
            .map(|(name, session)| self.finish(name, session))
            .collect())
    }

    /// Live status of one running session or of all.
    pub fn status(&self, name: Option<&str>) -> Result<Vec<SessionStatus>, ErrorReply> {
        let running = self.running.lock().expect("sessions lock");
        let names: Vec<&String> = match name {
            Some(name) => vec![running
                .get_key_value(name)
                .map(|(k, _)| k)
                .ok_or_else(|| unknown_session(name))?],
            None => running.keys().collect(),
        };
        Ok(names
            .into_iter()
            .map(|name| {
                let session = &running[name];
                let status = session.recording.status();
                SessionStatus {
                    name: name.clone(),
                    id: session.id,
                    directory: session.directory.clone(),
                    current_file: status.current_file.clone(),
                    elapsed_s: status.elapsed.as_secs_f64(),
                    bytes_written: status.bytes_written,
                    bytes_per_s: session.rates.bytes_per_s,
                    topics: status
                        .topics
                        .iter()
                        .map(|t| topic_stats(t, session.rates.of(&t.service)))
                        .collect(),
                    write_error: status.write_error.clone(),
                    problems: status.problems.into_iter().collect(),
                }
            })
            .collect())
    }

    /// Sessions and files from the catalog, newest first.
    pub fn list(&self) -> Result<Vec<ListedSession>, ErrorReply> {
        let catalog = self.catalog();
        let sessions = catalog.sessions().map_err(catalog_failure)?;
        sessions
            .into_iter()
            .map(|session| listed(&catalog, session).map_err(catalog_failure))
            .collect()
    }

    /// The newest session of that name, with its files.
    pub fn files(&self, name: &str) -> Result<ListedSession, ErrorReply> {
        let catalog = self.catalog();
        let session = catalog
            .session_by_name(name)
            .map_err(catalog_failure)?
            .ok_or_else(|| unknown_session(name))?;
        listed(&catalog, session).map_err(catalog_failure)
    }

    /// Marks a catalog file that `rec reindex` rewrote as complete.
    pub fn mark_reindexed(
        &self,
        path: &std::path::Path,
        bytes: u64,
        messages: u64,
    ) -> Result<(), ErrorReply> {
        let catalog = self.catalog();
        let file = catalog
            .file(path)
            .map_err(catalog_failure)?
            .ok_or_else(|| {
                reply(
                    ErrorKind::InvalidArgument,
                    format!("{} is not a file of any session", path.display()),
                )
            })?;
        catalog
            .upsert_file(&File {
                bytes,
                messages,
                state: FileState::Complete,
                ..file
            })
            .map_err(catalog_failure)
    }

    /// Updates rates and the catalog's file list; returns the load for systemd's status.
    pub fn sample(&self) -> Load {
        let mut running = self.running.lock().expect("sessions lock");
        let mut load = Load {
            sessions: running.len(),
            healthy: true,
            ..Load::default()
        };
        for (name, session) in running.iter_mut() {
            if !session.recording.threads_alive() {
                tracing::error!(session = %name, "a recording thread ended unexpectedly");
                load.healthy = false;
            }
            let status = session.recording.status();
            session.rates.update(&status);
            load.bytes_per_s += session.rates.bytes_per_s;
            load.dropped += status
                .topics
                .iter()
                .map(|t| t.counts.dropped + t.counts.lost)
                .sum::<u64>();
            self.note_files(session, &status);
        }
        load
    }

    fn finish(&self, name: String, session: Running) -> SessionStopped {
        let Running {
            id,
            recording,
            known_files,
            ..
        } = session;
        // Files are complete after a clean stop; after a panicked thread they may lack
        // their summary.
        let (state, file_state, stopped) = match recording.stop() {
            Ok(summary) => {
                let files: Vec<FileEntry> = summary
                    .files
                    .iter()
                    .map(|f| FileEntry {
                        path: f.path.clone(),
                        bytes: f.bytes,
                        messages: f.message_count,
                        state: file_state_text(FileState::Complete).into(),
                    })
                    .collect();
                let write_error = summary.write_error.as_ref().map(|e| e.to_string());
                let state = if write_error.is_some() {
                    SessionState::Failed
                } else {
                    SessionState::Stopped
                };
                let stopped = SessionStopped {
                    name: name.clone(),
                    files,
                    duration_s: summary.duration.as_secs_f64(),
                    topics: summary
                        .topics
                        .iter()
                        .map(|t| topic_stats(t, (0.0, 0.0)))
                        .collect(),
                    write_error,
                };
                (state, FileState::Complete, stopped)
            }
            Err(error) => {
                let stopped = SessionStopped {
                    name: name.clone(),
                    files: known_files
                        .iter()
                        .map(|path| FileEntry {
                            path: path.clone(),
                            bytes: 0,
                            messages: 0,
                            state: file_state_text(FileState::NeedsReindex).into(),
                        })
                        .collect(),
                    duration_s: 0.0,
                    topics: Vec::new(),
                    write_error: Some(error.to_string()),
                };
                (SessionState::Failed, FileState::NeedsReindex, stopped)
            }
        };
        if let Err(error) = self.record_stop(id, state, file_state, &stopped) {
            tracing::error!(session = %name, "cannot record the stop in the catalog: {error}");
        }
        tracing::info!(
            session = %name,
            files = stopped.files.len(),
            messages = stopped.topics.iter().map(|t| t.written).sum::<u64>(),
            "session stopped"
        );
        stopped
    }

    fn record_stop(
        &self,
        id: SessionId,
        state: SessionState,
        file_state: FileState,
        stopped: &SessionStopped,
    ) -> Result<(), CatalogError> {
        let mut catalog = self.catalog();
        for file in &stopped.files {
            catalog.upsert_file(&File {
                session: id,
                path: file.path.clone(),
                bytes: file.bytes,
                messages: file.messages,
                state: file_state,
            })?;
        }
        let topics: Vec<TopicCounts> = stopped
            .topics
            .iter()
            .map(|t| TopicCounts {
                name: t.name.clone(),
                service: t.service.clone(),
                received: t.received,
                written: t.written,
                dropped: t.dropped,
                lost: t.lost,
                bytes_written: t.bytes_written,
            })
            .collect();
        catalog.finish_session(id, state, now_ns(), &topics)
    }

    /// Keeps the catalog's files of a session current: a file it started is recording,
    /// a file a split closed is complete.
    fn note_files(&self, session: &mut Running, status: &RecordingStatus) {
        let catalog = self.catalog();
        for closed in &status.closed_files {
            if session.completed_files.contains(&closed.path) {
                continue;
            }
            let file = File {
                session: session.id,
                path: closed.path.clone(),
                bytes: closed.bytes,
                messages: closed.messages,
                state: FileState::Complete,
            };
            match catalog.upsert_file(&file) {
                Ok(()) => session.completed_files.push(closed.path.clone()),
                Err(error) => {
                    tracing::error!("cannot mark {} complete: {error}", closed.path.display())
                }
            }
        }
        let Some(current) = &status.current_file else {
            return;
        };
        if session.known_files.contains(current) {
            return;
        }
        session.known_files.push(current.clone());
        let file = File {
            session: session.id,
            path: current.clone(),
            bytes: 0,
            messages: 0,
            state: FileState::Recording,
        };
        if let Err(error) = catalog.upsert_file(&file) {
            tracing::error!("cannot add {} to the catalog: {error}", current.display());
        }
    }

    fn resolve(
        &self,
        running: &BTreeMap<String, Running>,
        name: Option<&str>,
    ) -> Result<String, ErrorReply> {
        match name {
            Some(name) if running.contains_key(name) => Ok(name.to_string()),
            Some(name) => Err(unknown_session(name)),
            None => match running.len() {
                0 => Err(reply(ErrorKind::UnknownSession, "no session is recording")),
                1 => Ok(running.keys().next().expect("one session").clone()),
                _ => Err(reply(
                    ErrorKind::InvalidArgument,
                    format!(
                        "{} sessions are recording ({}); name one, or use --all",
                        running.len(),
                        running.keys().cloned().collect::<Vec<_>>().join(", ")
                    ),
                )),
            },
        }
    }

    fn recording_config(
        &self,
        request: &StartRequest,
        name: &str,
        started_at: SystemTime,
    ) -> RecordingConfig {
        let defaults = &self.config.recording;
        RecordingConfig {
            topics: TopicSelection {
                include: request.topics.clone(),
                exclude: request.exclude.clone(),
            },
            file_prefix: format!("{name}_{}", names::timestamp(started_at)),
            split: SplitPolicy {
                max_bytes: request
                    .max_file_size
                    .or(defaults.max_file_size.map(|s| s.as_u64())),
                max_duration: request
                    .max_duration_ms
                    .map(Duration::from_millis)
                    .or(defaults.max_duration),
            },
            crc: request.crc || defaults.crc,
            direct_io: defaults.direct_io,
            zero_copy_threshold: defaults.zero_copy_threshold.as_u64() as usize,
            ring: RingConfig {
                items: defaults.ring_items,
                copy_bytes: defaults.ring_copy_bytes.as_u64() as usize,
                loaned_bytes: defaults.ring_loaned_bytes.as_u64() as usize,
            },
            sync_period: defaults.sync_period,
            discovery_interval: defaults.discovery_interval,
            min_poll_interval: defaults.min_poll_interval,
            max_poll_interval: defaults.max_poll_interval,
            iceoryx2_prefix: defaults.iceoryx2_prefix.clone(),
            iceoryx2: defaults.iceoryx2 && !request.no_iceoryx2,
            dds: request
                .dds_domain
                .or(defaults.dds_domain)
                .map(|domain| DdsConfig {
                    domain,
                    interfaces: defaults.dds_interfaces.clone(),
                    message_dirs: defaults.dds_message_dirs.clone(),
                    history_depth: defaults.dds_history_depth,
                    receive_buffer_bytes: defaults.dds_receive_buffer.as_u64() as usize,
                }),
            ..RecordingConfig::default()
        }
    }

    fn catalog(&self) -> std::sync::MutexGuard<'_, Catalog> {
        self.catalog.lock().expect("catalog lock")
    }
}

fn unknown_session(name: &str) -> ErrorReply {
    reply(
        ErrorKind::UnknownSession,
        format!("no session named {name:?} (see `rec status` and `rec list`)"),
    )
}

fn topic_stats(topic: &TopicStatus, (messages_per_s, bytes_per_s): (f64, f64)) -> TopicStats {
    TopicStats {
        name: topic.name.clone(),
        service: topic.service.clone(),
        received: topic.counts.received,
        written: topic.counts.written,
        dropped: topic.counts.dropped,
        lost: topic.counts.lost,
        bytes_written: topic.counts.bytes_written,
        messages_per_s,
        bytes_per_s,
    }
}

fn listed(
    catalog: &Catalog,
    session: recd_catalog::Session,
) -> Result<ListedSession, CatalogError> {
    let files = catalog.files(session.id)?;
    let topics = catalog.topics(session.id)?;
    Ok(ListedSession {
        name: session.name,
        id: session.id,
        state: session_state_text(session.state).into(),
        directory: session.directory,
        started_ns: session.started_ns,
        stopped_ns: session.stopped_ns,
        files: files
            .into_iter()
            .map(|f| FileEntry {
                path: f.path,
                bytes: f.bytes,
                messages: f.messages,
                state: file_state_text(f.state).into(),
            })
            .collect(),
        topics: topics
            .into_iter()
            .map(|t| TopicEntry {
                name: t.name,
                written: t.written,
                dropped: t.dropped,
                lost: t.lost,
            })
            .collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use recd_engine::TopicCounts as Counts;

    fn status(bytes: u64, written: u64) -> RecordingStatus {
        RecordingStatus {
            started_ns: 0,
            elapsed: Duration::ZERO,
            current_file: None,
            closed_files: Vec::new(),
            bytes_written: bytes,
            topics: vec![TopicStatus {
                name: "/imu".into(),
                service: "imu".into(),
                counts: Counts {
                    written,
                    bytes_written: written * 100,
                    ..Counts::default()
                },
            }],
            problems: BTreeMap::new(),
            write_error: None,
        }
    }

    #[test]
    fn rates_are_the_growth_since_the_last_sample() {
        let mut rates = Rates::default();
        rates.update(&status(1000, 10));
        assert_eq!(rates.of("imu"), (0.0, 0.0), "one sample gives no rate");
        std::thread::sleep(Duration::from_millis(200));
        rates.update(&status(21_000, 210));
        let (messages, bytes) = rates.of("imu");
        // 200 messages and 20 000 bytes in at least 0.2 s (more on a busy machine).
        assert!((10.0..=1000.0).contains(&messages), "{messages}");
        assert!((bytes - messages * 100.0).abs() < 1e-6, "{bytes}");
        assert!((bytes - rates.bytes_per_s).abs() < 1e-6);
        assert_eq!(rates.of("unknown"), (0.0, 0.0));
    }
}
