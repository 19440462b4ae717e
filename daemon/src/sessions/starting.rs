//! Starting a session: its name reserved in the registry (the registry's lock held only
//! for that), its row in the catalog, its recording started with no lock held, then the
//! session inserted.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use recd_control::{ErrorKind, ErrorReply, SessionStarted, SessionState, StartRequest};
use recd_engine::{Recording, TopicFilter};

use super::observer::CatalogObserver;
use super::replies::{catalog_failure, error};
use super::session::{Sampled, Session};
use super::Sessions;
use crate::clock::now_ns;
use crate::names;
use crate::uploads::SessionFiles;

impl Sessions {
    /// Starts a session.
    pub fn start(&self, request: &StartRequest) -> Result<SessionStarted, ErrorReply> {
        let started_at = SystemTime::now();
        let name = match &request.name {
            Some(name) => name.clone(),
            None => names::default_name(started_at, |name| {
                self.registry.is_taken(name) || self.config.data_dir.join(name).exists()
            }),
        };
        names::validate(&name).map_err(|m| error(ErrorKind::InvalidArgument, m))?;
        if request.duration_ms == Some(0) {
            return Err(error(
                ErrorKind::InvalidArgument,
                "a session's duration must be more than 0",
            ));
        }
        let stop_at = match request.duration_ms {
            Some(ms) => Some(
                Instant::now()
                    .checked_add(Duration::from_millis(ms))
                    .ok_or_else(|| {
                        error(
                            ErrorKind::InvalidArgument,
                            format!("a session's duration of {ms} ms is beyond any clock"),
                        )
                    })?,
            ),
            None => None,
        };
        let reservation = self
            .registry
            .reserve(name.clone(), self.config.max_sessions)?;
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
        if let Some(dds) = &mut config.dds {
            dds.type_cache = Some(self.config.type_cache_dir());
        }
        if let Some(zenoh) = &mut config.zenoh {
            zenoh.type_cache = Some(self.config.type_cache_dir());
        }
        config.sealing = self.sealing.clone();
        config.checkpoints = Some(self.checkpoints.clone());
        // The chain enters each file with the digest its writer took: no read back.
        config.stored_digest = self.signing.is_some();
        let uploads = match (request.upload, self.uploads()) {
            (Some(true), None) => {
                return Err(error(
                    ErrorKind::InvalidArgument,
                    "rec start --upload: recd's configuration has no [upload] section, so there is nowhere to upload to",
                ))
            }
            (Some(false), _) | (None, None) => false,
            (_, Some(_)) => true,
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
        let upload = uploads.then(|| SessionFiles {
            session: name.clone(),
            started_ns: started_at
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| i64::try_from(d.as_nanos()).unwrap_or(i64::MAX)),
            priority: request.pre_trigger_ms.is_some(),
        });
        let finish = request.finish.unwrap_or(self.config.recording.finish);
        let files = Arc::new(CatalogObserver::new(
            self.files.clone(),
            (id, &name),
            upload,
            finish,
            (!self.rules.is_empty()).then(|| self.rules.tap(id, &name)),
        ));
        // Finishing keeps off the disk from the session's first file on.
        self.finish_gate.set_recording(self.registry.count());
        // The rules' own subscription stands in for no topic this session records.
        self.rules.session_records(id, &topics);
        let recording = match Recording::start_observed(config, files.clone()) {
            Ok(recording) => recording,
            Err(start_error) => {
                drop(reservation);
                self.rules.session_ended(id);
                self.finish_gate.set_recording(self.registry.count());
                let reason = format!("cannot start session {name:?}: {start_error}");
                for path in files.started() {
                    if !path.exists() {
                        self.files.removed(&path);
                    }
                }
                let _ = self.catalog().finish_session(
                    id,
                    SessionState::Failed,
                    Some(&reason),
                    now_ns(),
                    &[],
                );
                return Err(error(ErrorKind::Failed, reason));
            }
        };
        let status = recording.status();
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
        self.finish_gate.watch(&name, recording.behind_probe());
        let session = Session {
            name: name.clone(),
            id,
            directory: directory.clone(),
            recording,
            files,
            max_files: request.max_files,
            max_age: request
                .max_age_ms
                .map(Duration::from_millis)
                .or(self.config.recording.max_age),
            finish,
            stop_at,
            started: Instant::now(),
            sampled: Mutex::new(Sampled::new(topics)),
        };
        self.registry.insert(reservation, session);
        Ok(SessionStarted {
            name,
            id,
            directory,
            io_mode: status.io_mode.to_string(),
        })
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
