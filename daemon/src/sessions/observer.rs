//! A running session's files as its engine tells of them (on its writer threads): each
//! event passed on to the files' life ([`FileLife`]).

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use recd_catalog::SessionId;
use recd_control::FinishMode;
use recd_engine::{ChannelSpec, ClosedFile, RecordingObserver};
use recd_health::HealthEvent;

use crate::files::{Closed, FileLife};
use crate::locks::lock;
use crate::rules::SessionTap;
use crate::uploads::SessionFiles;

/// Tells the files' life of a session's files: each one before its first byte is
/// written, and with what it holds once it ends.
pub struct CatalogObserver {
    files: Arc<FileLife>,
    session: SessionId,
    /// Files the session started, in order.
    started: Mutex<Vec<PathBuf>>,
    /// Where its finished files go in the upload queue, when the session uploads.
    upload: Option<SessionFiles>,
    /// What is done to its files once closed.
    finish: FinishMode,
    /// The session's name, for the log.
    name: String,
    /// The topics of it that rules watch, when there are rules.
    rules: Option<SessionTap>,
}

impl CatalogObserver {
    /// Tells `files` of the files of `session`; each finished one is finished with
    /// `finish` and goes to the upload queue as `upload` says, when it does.
    pub fn new(
        files: Arc<FileLife>,
        (session, name): (SessionId, &str),
        upload: Option<SessionFiles>,
        finish: FinishMode,
        rules: Option<SessionTap>,
    ) -> Self {
        Self {
            rules,
            name: name.to_string(),
            files,
            session,
            started: Mutex::new(Vec::new()),
            upload,
            finish,
        }
    }

    /// The files the session started so far.
    pub fn started(&self) -> Vec<PathBuf> {
        lock(&self.started).clone()
    }
}

impl RecordingObserver for CatalogObserver {
    fn creating(&self, path: &Path) {
        lock(&self.started).push(path.to_path_buf());
        self.files.created(self.session, path);
    }

    fn ended(&self, file: &ClosedFile) {
        let index = (lock(&self.started).iter())
            .position(|path| *path == file.path)
            .unwrap_or(0);
        self.files.closed(Closed {
            session: self.session,
            file,
            finish: self.finish,
            upload: self.upload.as_ref().map(|files| (files, index)),
        });
    }

    fn removed(&self, path: &Path) {
        lock(&self.started).retain(|p| p != path);
        self.files.removed(path);
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
