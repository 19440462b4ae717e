//! Keeping the catalog in step with a running session: its files as they are started and
//! ended (told by the engine on its writer threads), and its end. Each ended file also
//! renews the session directory's rosbag2 `metadata.yaml`, which lists the session's
//! ROS 2 files.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use recd_catalog::{Catalog, CatalogError, File, SessionId};
use recd_control::{FileState, FinishMode, SessionState, SessionStopped};
use recd_engine::{ChannelSpec, ClosedFile, RecordingObserver};
use recd_health::HealthEvent;
use recd_storage::BagPart;

use crate::clock::now_ns;
use crate::rules::SessionTap;
use crate::signing::SessionChain;
use crate::uploads::{SessionFiles, Uploads};

/// How far before its creation an open file is taken to reach, for incidents' pins.
const OPEN_FILE_REACH_NS: u64 = 1_000_000_000;

/// Writes a session's files into the catalog: each one as recording before its first
/// byte is written (the catalog's commits are durable, so a power cut cannot hide it),
/// and with what it holds once it ends.
pub struct CatalogObserver {
    catalog: Arc<Mutex<Catalog>>,
    session: SessionId,
    /// Files the session started, in order.
    started: Mutex<Vec<PathBuf>>,
    /// What each ended file is to rosbag2, in order.
    bag: Mutex<Vec<BagPart>>,
    /// Where its finished files are queued for upload, if they are.
    upload: Option<(Arc<Uploads>, SessionFiles)>,
    /// What is done to its files once closed.
    finish: FinishMode,
    /// The session's name, for the log.
    name: String,
    /// The topics of it that rules watch, when there are rules.
    rules: Option<SessionTap>,
    /// Its hash chain, when files are signed.
    chain: Option<SessionChain>,
}

impl CatalogObserver {
    /// Records the files of `session` in `catalog`, queues each finished one for
    /// finishing with `finish` and for `upload`.
    pub fn new(
        catalog: Arc<Mutex<Catalog>>,
        (session, name): (SessionId, &str),
        upload: Option<(Arc<Uploads>, SessionFiles)>,
        finish: FinishMode,
        rules: Option<SessionTap>,
    ) -> Self {
        Self {
            rules,
            name: name.to_string(),
            catalog,
            session,
            started: Mutex::new(Vec::new()),
            bag: Mutex::new(Vec::new()),
            upload,
            finish,
            chain: None,
        }
    }

    /// Enters each ended file in `chain`, when there is one.
    pub fn chained(mut self, chain: Option<SessionChain>) -> Self {
        self.chain = chain;
        self
    }

    /// Puts a file closed with its summary on the finishing queue, before the uploader
    /// can see it: it uploads the finished file.
    fn queue_finish(&self, file: &ClosedFile) {
        if !file.indexed || self.finish == FinishMode::None {
            return;
        }
        let catalog = self.catalog.lock().expect("catalog lock");
        if let Err(error) = catalog.set_finish(&file.path, Some(self.finish), now_ns()) {
            tracing::error!(file = %file.path.display(), "cannot queue the file for finishing: {error}");
        }
    }

    /// Keeps the verdict of the file's health record.
    fn record_health(&self, file: &ClosedFile) {
        let Some(verdict) = file.health else {
            return;
        };
        let catalog = self.catalog.lock().expect("catalog lock");
        if let Err(error) = catalog.set_file_health(&file.path, verdict.name()) {
            tracing::error!(file = %file.path.display(), "cannot record the file's health: {error}");
        }
    }

    /// Queues a finished file for upload, when the session uploads.
    fn queue_upload(&self, file: &ClosedFile) {
        let Some((uploads, session)) = &self.upload else {
            return;
        };
        if !file.indexed {
            return;
        }
        let index = (self.started.lock().expect("files lock").iter())
            .position(|path| *path == file.path)
            .unwrap_or(0);
        let catalog = self.catalog.lock().expect("catalog lock");
        if let Err(error) = uploads.queue(&catalog, session, &file.path, index, file.messages) {
            tracing::error!(file = %file.path.display(), "cannot queue the file for upload: {error}");
        }
    }

    /// Keeps the log-time span of the file at `path` for incidents' pins.
    fn record_times(&self, path: &Path, start: Option<u64>, end: Option<u64>) {
        let catalog = self.catalog.lock().expect("catalog lock");
        if let Err(error) = catalog.set_file_times(path, start, end) {
            tracing::error!(file = %path.display(), "cannot record the file's times: {error}");
        }
    }

    /// The files the session started so far.
    pub fn started(&self) -> Vec<PathBuf> {
        self.started.lock().expect("files lock").clone()
    }

    fn record(&self, file: File) {
        let result = self
            .catalog
            .lock()
            .expect("catalog lock")
            .upsert_file(&file);
        if let Err(error) = result {
            tracing::error!(file = %file.path.display(), "cannot record the file in the catalog: {error}");
        }
    }
}

impl RecordingObserver for CatalogObserver {
    fn creating(&self, path: &Path) {
        self.started
            .lock()
            .expect("files lock")
            .push(path.to_path_buf());
        self.record(File {
            session: self.session,
            path: path.to_path_buf(),
            bytes: 0,
            messages: 0,
            state: FileState::Recording,
        });
        // Its first message may have been received a little before the file was made
        // (it waited in the handoff): an incident's pin reaches back that far.
        let start = (now_ns().max(0) as u64).saturating_sub(OPEN_FILE_REACH_NS);
        self.record_times(path, Some(start), None);
    }

    fn ended(&self, file: &ClosedFile) {
        // Before finishing may see it: finishing waits for the recorded bytes' entry.
        if let Some(chain) = &self.chain {
            chain.closing(&file.path);
        }
        self.record(File {
            session: self.session,
            path: file.path.clone(),
            bytes: file.bytes,
            messages: file.messages,
            state: file_state(file.indexed),
        });
        self.record_health(file);
        if let Some((start, end)) = file.time_range {
            self.record_times(&file.path, Some(start), Some(end));
        }
        self.queue_finish(file);
        self.renew_bag_metadata(&file.path);
        self.queue_upload(file);
        if let Some(chain) = &self.chain {
            chain.closed(&file.path);
        }
    }

    fn removed(&self, path: &Path) {
        self.started
            .lock()
            .expect("files lock")
            .retain(|p| p != path);
        let catalog = self.catalog.lock().expect("catalog lock");
        if let Err(error) = catalog.forget_file(path) {
            tracing::error!(file = %path.display(), "cannot forget the removed file: {error}");
        }
    }

    fn health_changed(&self, event: &HealthEvent) {
        super::health_log::log_change(&self.name, event);
        if let Some(rules) = &self.rules {
            rules.health_changed(event);
        }
    }

    fn taps(&self, index: u32, name: &str, channel: &ChannelSpec) -> bool {
        self.rules
            .as_ref()
            .is_some_and(|rules| rules.taps(index, name, channel))
    }

    fn sample(&self, index: u32, log_time_ns: u64, parts: &[&[u8]]) {
        if let Some(rules) = &self.rules {
            rules.sample(index, log_time_ns, parts);
        }
    }
}

impl CatalogObserver {
    /// Adds the ended file at `path` to the session's bag and rewrites its metadata.yaml.
    /// Not for a sealed file: metadata.yaml would say in clear what it holds.
    fn renew_bag_metadata(&self, path: &Path) {
        if recd_storage::is_sealed(path) {
            return;
        }
        // Reading the file back must not take the session down, whatever the file holds.
        let part =
            std::panic::catch_unwind(|| recd_storage::bag_part(path).map_err(|e| e.to_string()))
                .unwrap_or_else(|panic| Err(crate::recovery::panic_text(&panic)));
        let part = match part {
            Ok(part) => part,
            Err(error) => {
                tracing::warn!(file = %path.display(), "cannot read the file back for metadata.yaml: {error}");
                return;
            }
        };
        let mut bag = self.bag.lock().expect("bag lock");
        bag.push(part);
        let Some(dir) = path.parent() else { return };
        if let Err(error) = recd_storage::write_bag_metadata(dir, &bag) {
            tracing::warn!("{error}");
        }
    }
}

/// A finished file's state: complete with its summary, or needing `rec reindex`.
pub fn file_state(indexed: bool) -> FileState {
    if indexed {
        FileState::Complete
    } else {
        FileState::NeedsReindex
    }
}

/// Records a session's end: its files as the stop report has them, its state, and its
/// final counts.
pub fn record_stop(
    catalog: &mut Catalog,
    session: SessionId,
    state: SessionState,
    stopped: &SessionStopped,
) -> Result<(), CatalogError> {
    for file in &stopped.files {
        catalog.upsert_file(&File {
            session,
            path: file.path.clone(),
            bytes: file.bytes,
            messages: file.messages,
            state: file.state,
        })?;
    }
    let topics: Vec<_> = stopped.topics.iter().map(|t| t.report.clone()).collect();
    let reason = stopped.write_error.as_deref();
    catalog.finish_session(session, state, reason, now_ns(), &topics)?;
    if let Some(health) = &stopped.health {
        catalog.set_session_health(session, health.verdict.name())?;
    }
    Ok(())
}

/// Each file of a stop report with the health verdict the catalog keeps for it (recorded
/// as the file ended).
pub fn add_file_health(catalog: &Catalog, stopped: &mut SessionStopped) {
    for file in &mut stopped.files {
        file.health = catalog.file_health(&file.path).ok().flatten();
    }
}

/// Files of a stop report that are gone by now: deleted by retention (as the catalog
/// says), or missing (deleted by hand while the session ran).
pub fn mark_gone(catalog: &Catalog, stopped: &mut SessionStopped) {
    for file in &mut stopped.files {
        if file.path.exists() {
            continue;
        }
        let deleted = matches!(catalog.file(&file.path), Ok(Some(known)) if known.state == FileState::Deleted);
        file.state = if deleted {
            FileState::Deleted
        } else {
            FileState::Missing
        };
    }
}
