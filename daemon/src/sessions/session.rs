//! One running session: what it records with, the bounds it keeps, and what its periodic
//! samples remember (under a lock of its own, never the registry's).

use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use recd_catalog::SessionId;
use recd_engine::{Recording, TopicSelection};

use super::observer::CatalogObserver;
use super::rates::Rates;
use crate::locks::lock;
use crate::retention::SessionBounds;

/// One running session.
pub struct Session {
    /// Its name.
    pub name: String,
    /// Its catalog id.
    pub id: SessionId,
    /// Where its files go.
    pub directory: PathBuf,
    /// The recording.
    pub recording: Recording,
    /// Its files as they are created and closed.
    pub files: Arc<CatalogObserver>,
    /// `--max-files`: the most files the session keeps.
    pub max_files: Option<u32>,
    /// `--max-age`: files whose newest message is older are deleted, unless pinned.
    pub max_age: Option<Duration>,
    /// What finishing does to its files.
    pub finish: recd_control::FinishMode,
    /// `--duration`: when the session stops by itself.
    pub stop_at: Option<Instant>,
    /// When it started.
    pub started: Instant,
    /// What the samples remember, and the topics it records.
    pub(crate) sampled: Mutex<Sampled>,
}

/// What a session's samples remember between two of them.
pub struct Sampled {
    /// Its recent rates.
    pub rates: Rates,
    /// What the log was already told: a pause for disk space, a write error.
    pub told_disk_full: bool,
    /// See `told_disk_full`.
    pub told_write_error: bool,
    /// The log warned that its selection matches no topic.
    pub told_no_topic: bool,
    /// Topics whose unknown loss was logged.
    pub told_unknown_loss: HashSet<String>,
    /// Messages dropped or lost, and samples spilled (the writer behind), at the last
    /// sample: what background work is judged by.
    pub dropped: u64,
    /// See `dropped`.
    pub spilled: u64,
    /// The topics it records, as `rec topics-set` last left them.
    pub topics: TopicSelection,
}

impl Sampled {
    /// Nothing sampled yet, recording `topics`.
    pub fn new(topics: TopicSelection) -> Self {
        Self {
            rates: Rates::default(),
            told_disk_full: false,
            told_write_error: false,
            told_no_topic: false,
            told_unknown_loss: HashSet::new(),
            dropped: 0,
            spilled: 0,
            topics,
        }
    }
}

impl Session {
    /// What its samples remember, for as long as the guard lives.
    pub fn sampled(&self) -> MutexGuard<'_, Sampled> {
        lock(&self.sampled)
    }

    /// What it writes per second lately.
    pub fn bytes_per_s(&self) -> f64 {
        self.sampled().rates.bytes_per_s
    }

    /// Its own bounds for retention.
    pub fn bounds(&self) -> SessionBounds {
        SessionBounds {
            id: self.id,
            max_files: self.max_files,
            max_age: self.max_age,
        }
    }

    /// Whether its `--duration` has passed at `now`.
    pub fn expired(&self, now: Instant) -> bool {
        self.stop_at.is_some_and(|at| at <= now)
    }
}
