//! The running sessions: starting, stopping and inspecting them, and their record in the
//! catalog.

mod answer;
mod backlog;
mod catalog_sync;
mod chain;
mod facts;
mod health_log;
mod incidents;
mod incidents_overview;
mod listing;
mod rates;
mod replies;
mod retaining;
mod rules_target;
mod telling;
mod topics;
mod topics_set;
mod triggering;
mod uploading;
mod verdict;

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant, SystemTime};

use recd_catalog::{Catalog, SessionId};
use recd_control::{
    ErrorKind, ErrorReply, SessionMarked, SessionPaused, SessionStarted, SessionState,
    SessionStatus, SessionStopped, StartRequest,
};
use recd_engine::{Recording, TopicFilter, TopicSelection};
use recd_upload::Pressure;

use crate::background::share::Losses;
use crate::background::Background;
use crate::clock::now_ns;
use crate::config::DaemonConfig;
use crate::finishing::{FinishGate, Finisher};
use crate::names;
use crate::uploads::{SessionFiles, Uploads};
use catalog_sync::{add_file_health, mark_gone, record_stop, CatalogObserver};
use rates::Rates;
use replies::{catalog_failure, error, unknown_session};
use telling::{losses_since_last, tell_changes};

/// One running session.
struct Running {
    id: SessionId,
    directory: PathBuf,
    recording: Recording,
    files: Arc<CatalogObserver>,
    rates: Rates,
    /// `--max-files`: the most files the session keeps.
    max_files: Option<u32>,
    /// `--max-age`: files whose newest message is older are deleted, unless pinned.
    max_age: Option<Duration>,
    /// What finishing does to its files.
    finish: recd_control::FinishMode,
    /// `--duration`: when the session stops by itself.
    stop_at: Option<Instant>,
    /// What the log was already told: a pause for disk space, a write error.
    told_disk_full: bool,
    told_write_error: bool,
    /// When the session started, and what its --topic globs were, to warn once when
    /// discovery found nothing they select.
    started: Instant,
    /// The topics it records, as `rec topics-set` last left them.
    topics: TopicSelection,
    told_no_topic: bool,
    /// Topics whose unknown loss was logged.
    told_unknown_loss: HashSet<String>,
    /// Messages dropped or lost, and samples spilled (the writer behind), at the last
    /// sample: what background work is judged by.
    dropped: u64,
    spilled: u64,
}

/// How long discovery has to find a session's first topic before the log warns that its
/// selection matches nothing.
const FIRST_TOPIC_GRACE: Duration = Duration::from_secs(3);

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
    catalog: Arc<Mutex<Catalog>>,
    running: Mutex<BTreeMap<String, Running>>,
    /// The uploader, when `[upload]` is configured.
    uploads: Option<Arc<Uploads>>,
    /// Retention last kept files for upload (logged when it starts).
    kept_for_upload: Mutex<usize>,
    /// Triggers taken by id.
    triggers: triggering::TriggerLedger,
    /// How much of the time uploads and finishing get while recordings lose samples.
    background: Arc<Background>,
    /// When finishing files may run.
    finish_gate: Arc<FinishGate>,
    /// Which delays of background work the log was told of.
    delays: Mutex<backlog::DelayWatch>,
    /// Incidents refused for want of room, by origin.
    refused_incidents: Mutex<incidents::Refused>,
    /// The `[[rule]]`s, which sessions feed with the topics they name.
    rules: Arc<crate::rules::Rules>,
    /// Where `fleet = true` rules' triggers go (remote control's command writer).
    fleet_outbox: rules_target::FleetOutbox,
    /// What files are sealed with, when `[encryption]` is set; the keys of this run's.
    sealing: Option<recd_storage::Sealing>,
    /// Chains and signs closed files, when `[signing]` has a key.
    signing: Option<Arc<crate::signing::Signing>>,
}

impl Sessions {
    /// Sessions recorded under `config`, with the catalog opened and the uploader, if
    /// any; `pressure` tells uploads and finishing what the background policy decides;
    /// `sealing` is `[encryption]`'s, read once at start-up; closed files are chained and
    /// signed with `signing_key`, if any.
    pub fn new(
        config: DaemonConfig,
        catalog: Catalog,
        uploads: Option<Uploads>,
        pressure: Arc<Pressure>,
        sealing: Option<recd_storage::Sealing>,
        signing_key: Option<recd_chain::SigningKey>,
    ) -> Self {
        let background = Arc::new(Background::new(pressure));
        let finish_gate = Arc::new(FinishGate::new(
            config.recording.finish_while_recording,
            background.clone(),
        ));
        let catalog = Arc::new(Mutex::new(catalog));
        let uploads = uploads.map(Arc::new);
        let signing = signing_key
            .map(|key| crate::signing::Signing::start(key, catalog.clone(), uploads.clone()));
        Self {
            catalog,
            running: Mutex::new(BTreeMap::new()),
            uploads,
            signing,
            kept_for_upload: Mutex::new(0),
            triggers: Default::default(),
            background,
            finish_gate,
            delays: Mutex::default(),
            refused_incidents: Mutex::default(),
            rules: rules_target::rules_of(&config),
            fleet_outbox: Mutex::default(),
            sealing,
            config,
        }
    }

    /// Starts finishing closed files in the background, on the sessions' catalog.
    pub fn start_finishing(&self) -> Finisher {
        Finisher::start(
            self.catalog.clone(),
            self.finish_gate.clone(),
            self.config.min_free_space.as_u64(),
            self.sealing.clone(),
            self.signing.clone(),
        )
    }

    /// What files are sealed with, when `[encryption]` is set.
    pub fn sealing(&self) -> Option<&recd_storage::Sealing> {
        self.sealing.as_ref()
    }

    /// recd's configuration.
    pub fn config(&self) -> &DaemonConfig {
        &self.config
    }

    /// Where recordings go.
    pub fn data_dir(&self) -> &Path {
        &self.config.data_dir
    }

    /// Stops the uploader, if any.
    pub fn stop_uploads(&self) {
        if let Some(uploads) = &self.uploads {
            uploads.stop();
        }
    }

    /// Starts a session.
    pub fn start(&self, request: &StartRequest) -> Result<SessionStarted, ErrorReply> {
        let started_at = SystemTime::now();
        let mut running = self.running.lock().expect("sessions lock");
        let name = match &request.name {
            Some(name) => name.clone(),
            None => names::default_name(started_at, |name| {
                running.contains_key(name) || self.config.data_dir.join(name).exists()
            }),
        };
        names::validate(&name).map_err(|m| error(ErrorKind::InvalidArgument, m))?;
        if request.duration_ms == Some(0) {
            return Err(error(
                ErrorKind::InvalidArgument,
                "a session's duration must be more than 0",
            ));
        }
        if running.contains_key(&name) {
            return Err(error(
                ErrorKind::AlreadyRunning,
                format!(
                    "session {name:?} is already recording; stop it first or pick another name"
                ),
            ));
        }
        if running.len() >= self.config.max_sessions {
            return Err(error(
                ErrorKind::Failed,
                format!(
                    "{} sessions are recording, the most recd allows (max_sessions)",
                    running.len()
                ),
            ));
        }
        let directory = names::fresh_directory(&self.config.data_dir, &name);
        let file_prefix = format!("{name}_{}", names::timestamp(started_at));
        let mut config = self
            .config
            .recording
            .recording_config(request, file_prefix, directory.clone())
            .map_err(|e| error(ErrorKind::InvalidArgument, e.to_string()))?;
        TopicFilter::new(&config.topics)
            .map_err(|e| error(ErrorKind::InvalidArgument, e.to_string()))?;
        config.expect = expectations(&request.expect, &self.config.expect)
            .map_err(|e| error(ErrorKind::InvalidArgument, e.to_string()))?;
        config.throttles.extend_from_slice(&self.config.topic);
        config.sealing = self.sealing.clone();
        let upload = match (request.upload, &self.uploads) {
            (Some(true), None) => {
                return Err(error(
                    ErrorKind::InvalidArgument,
                    "rec start --upload: recd's configuration has no [upload] section, so there is nowhere to upload to",
                ))
            }
            (Some(false), _) | (None, None) => None,
            (_, Some(uploads)) => Some(uploads.clone()),
        };
        let topics = config.topics.clone();
        let config_json = serde_json::to_string(&config).expect("config serializes");
        let id = self
            .catalog()
            .begin_session(&name, &directory, &config_json, now_ns())
            .map_err(catalog_failure)?;
        config.metadata.insert("session".into(), name.clone());
        config.metadata.insert("session_id".into(), id.to_string());
        config.min_free_space = Some(self.config.min_free_space.as_u64()).filter(|&m| m > 0);
        let upload = upload.map(|uploads| {
            let files = SessionFiles {
                session: name.clone(),
                started_ns: started_at
                    .duration_since(std::time::UNIX_EPOCH)
                    .map_or(0, |d| d.as_nanos() as i64),
                priority: request.pre_trigger_ms.is_some(),
            };
            (uploads, files)
        });
        let finish = request.finish.unwrap_or(self.config.recording.finish);
        let files = Arc::new(
            CatalogObserver::new(
                self.catalog.clone(),
                (id, &name),
                upload,
                finish,
                (!self.rules.is_empty()).then(|| self.rules.tap(id, &name)),
            )
            .chained(self.session_chain(&directory)),
        );
        // Finishing keeps off the disk from the session's first file on.
        self.finish_gate.set_recording(running.len() + 1);
        // The rules' own subscription stands in for no topic this session records.
        self.rules.session_records(id, &topics);
        let recording = match Recording::start_observed(config, files.clone()) {
            Ok(recording) => recording,
            Err(start_error) => {
                self.rules.session_ended(id);
                self.finish_gate.set_recording(running.len());
                let reason = format!("cannot start session {name:?}: {start_error}");
                let mut catalog = self.catalog();
                for path in files.started() {
                    if !path.exists() {
                        let _ = catalog.forget_file(&path);
                    }
                }
                let _ =
                    catalog.finish_session(id, SessionState::Failed, Some(&reason), now_ns(), &[]);
                return Err(error(ErrorKind::Failed, reason));
            }
        };
        let session = Running {
            id,
            directory: directory.clone(),
            recording,
            files,
            rates: Rates::default(),
            max_files: request.max_files,
            finish,
            max_age: request
                .max_age_ms
                .map(Duration::from_millis)
                .or(self.config.recording.max_age),
            stop_at: request
                .duration_ms
                .map(|ms| Instant::now() + Duration::from_millis(ms)),
            told_disk_full: false,
            told_write_error: false,
            started: Instant::now(),
            topics: topics.clone(),
            told_no_topic: false,
            told_unknown_loss: HashSet::new(),
            dropped: 0,
            spilled: 0,
        };
        let status = session.recording.status();
        tracing::info!(
            session = %name,
            id,
            directory = %directory.display(),
            io_mode = %status.io_mode,
            "session started"
        );
        for thread in &status.receive_threads {
            for warning in thread.priority_warning.iter().chain(&thread.memory_warning) {
                tracing::warn!(session = %name, source = %thread.source, "{warning}");
            }
        }
        self.finish_gate
            .watch(&name, session.recording.behind_probe());
        running.insert(name.clone(), session);
        Ok(SessionStarted {
            name,
            id,
            directory,
            io_mode: status.io_mode.to_string(),
        })
    }

    /// Stops the named session, the only one running, or all; finalizes their files.
    pub fn stop(&self, name: Option<&str>, all: bool) -> Result<Vec<SessionStopped>, ErrorReply> {
        let taken: Vec<(String, Running)> = {
            let mut running = self.running.lock().expect("sessions lock");
            let names: Vec<String> = if all {
                running.keys().cloned().collect()
            } else {
                vec![resolve(&running, name)?]
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

    /// Pauses (`pause`) or resumes a running session.
    pub fn pause(&self, name: Option<&str>, pause: bool) -> Result<SessionPaused, ErrorReply> {
        let running = self.running.lock().expect("sessions lock");
        let name = resolve(&running, name)?;
        let recording = &running[&name].recording;
        let changed = if pause {
            recording.pause()
        } else {
            recording.resume()
        };
        if changed {
            tracing::info!(session = %name, "{}", if pause { "paused" } else { "resumed" });
        }
        Ok(SessionPaused {
            name,
            paused: pause,
            changed,
        })
    }

    /// Ends a running session's files and continues in new ones.
    pub fn split(&self, name: Option<&str>) -> Result<(), ErrorReply> {
        let running = self.running.lock().expect("sessions lock");
        let name = resolve(&running, name)?;
        if !running[&name].recording.split() {
            return Err(error(
                ErrorKind::InvalidArgument,
                format!("session {name:?} keeps its messages in memory until triggered; a trigger's window is one file"),
            ));
        }
        tracing::info!(session = %name, "split on request");
        Ok(())
    }

    /// Writes a marker with `text` into the files a running session is writing.
    pub fn mark(&self, name: Option<&str>, text: &str) -> Result<SessionMarked, ErrorReply> {
        if text.trim().is_empty() {
            return Err(error(ErrorKind::InvalidArgument, "a marker needs a text"));
        }
        let running = self.running.lock().expect("sessions lock");
        let name = resolve(&running, name)?;
        let recording = &running[&name].recording;
        if recording.pre_trigger().is_some() && recording.current_files().is_empty() {
            return Err(error(
                ErrorKind::InvalidArgument,
                format!("session {name:?} keeps its messages in memory until triggered and is writing no file now, so a marker would go nowhere (rec trigger {name} writes one)"),
            ));
        }
        let marker = recording.mark(text);
        let catalog = self.catalog();
        for path in recording.current_files() {
            if let Err(failure) = catalog.note_marker(&path) {
                tracing::warn!(file = %path.display(), "cannot note the marker in the catalog: {failure}");
            }
        }
        drop(catalog);
        Ok(SessionMarked {
            files: recording.current_files(),
            name,
            time_ns: marker.time_ns,
        })
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
                replies::session_status(
                    name,
                    session.id,
                    &session.directory,
                    session.recording.status(),
                    &session.rates,
                    self.backlog(Some(session.id)).unwrap_or_default(),
                )
            })
            .collect())
    }

    /// Updates rates, tells the log of pauses and write errors, applies retention;
    /// returns the load for systemd's status.
    pub fn sample(&self) -> Load {
        let mut running = self.running.lock().expect("sessions lock");
        let mut load = Load {
            sessions: running.len(),
            healthy: true,
            ..Load::default()
        };
        let mut writing = HashSet::new();
        let mut writing_sessions = 0;
        let mut losses = Losses::default();
        let mut why = None;
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
            tell_changes(name, session, &status);
            let (lost, said) = losses_since_last(name, session, &status);
            losses.add(lost);
            why = why.or(said);
            // A paused session, or a pre-trigger one between windows, writes nothing.
            let buffering = status.buffer.is_some() && status.current_files.is_empty();
            if !status.paused && !buffering {
                writing_sessions += 1;
            }
            writing.extend(status.current_files);
        }
        self.finish_gate.set_recording(writing_sessions);
        self.sample_background(losses, why);
        self.apply_retention(&running, &writing);
        let now = Instant::now();
        let expired: Vec<String> = (running.iter())
            .filter(|(_, session)| session.stop_at.is_some_and(|at| at <= now))
            .map(|(name, _)| name.clone())
            .collect();
        let expired: Vec<(String, Running)> = expired
            .into_iter()
            .filter_map(|name| running.remove(&name).map(|session| (name, session)))
            .collect();
        drop(running);
        for (name, session) in expired {
            tracing::info!(session = %name, "its --duration has passed: stopping");
            self.finish(name, session);
        }
        load
    }

    /// Stops a session's recording, records the end in the catalog and reports it.
    fn finish(&self, name: String, session: Running) -> SessionStopped {
        let (state, mut stopped) =
            replies::stop_report(&name, session.recording.stop(), &session.files.started());
        self.rules.session_ended(session.id);
        let mut catalog = self.catalog();
        mark_gone(&catalog, &mut stopped);
        add_file_health(&catalog, &mut stopped);
        if let Err(failure) = record_stop(&mut catalog, session.id, state, &stopped) {
            tracing::error!(session = %name, "cannot record the stop in the catalog: {failure}");
        }
        for topic in &stopped.topics {
            let topic = &topic.report;
            if topic.unknown_loss && !session.told_unknown_loss.contains(&topic.service) {
                tracing::warn!(
                    session = %name,
                    topic = %topic.name,
                    service = %topic.service,
                    "unknown loss: the publisher's queue was found full and its samples carry no sequence numbers, so samples may have been overwritten uncounted"
                );
            }
        }
        tracing::info!(
            session = %name,
            files = stopped.files.len(),
            messages = stopped.topics.iter().map(|t| t.report.written).sum::<u64>(),
            "session stopped"
        );
        stopped
    }

    fn catalog(&self) -> MutexGuard<'_, Catalog> {
        self.catalog.lock().expect("catalog lock")
    }
}

/// A session's expectations: its own `rec start --expect` rules, then recd's `[[expect]]`.
fn expectations(
    session: &[String],
    configured: &[recd_health::Expectation],
) -> Result<Vec<recd_health::Expectation>, recd_health::ExpectError> {
    let mut rules = session
        .iter()
        .map(|text| recd_health::Expectation::parse(text))
        .collect::<Result<Vec<_>, _>>()?;
    rules.extend_from_slice(configured);
    Ok(rules)
}

/// The running session a request names, or the only one running when it names none.
fn resolve(running: &BTreeMap<String, Running>, name: Option<&str>) -> Result<String, ErrorReply> {
    match name {
        Some(name) if running.contains_key(name) => Ok(name.to_string()),
        Some(name) => Err(unknown_session(name)),
        None => match running.len() {
            0 => Err(error(ErrorKind::UnknownSession, "no session is recording")),
            1 => Ok(running.keys().next().expect("one session").clone()),
            _ => Err(error(
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
