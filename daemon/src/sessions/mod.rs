//! The running sessions and their commands: a registry of sessions ([`registry`]) whose
//! lock is held only to look up, reserve and insert, and what each request of the
//! control protocol does with them ([`answer`]). Sampling (rates, logs, retention,
//! backlog) works on a snapshot of the registry. Incidents are [`crate::incidents`]'s and
//! the life of the files [`crate::files`]'.

mod answer;
mod backlog;
mod control;
mod facts;
mod health_log;
mod listing;
mod observer;
mod rates;
pub mod registry;
pub mod replies;
mod retaining;
mod rules_target;
mod sampling;
mod session;
mod starting;
mod stopping;
mod telling;
mod topics;
mod topics_set;
mod uploading;
mod verdict;

pub use sampling::Load;

use std::path::Path;
use std::sync::{Arc, Mutex, MutexGuard};

use recd_catalog::Catalog;
use recd_upload::Pressure;

use crate::background::Background;
use crate::config::DaemonConfig;
use crate::files::FileLife;
use crate::finishing::{FinishGate, Finisher};
use crate::incidents::{Cutter, CutterParts, Incidents};
use crate::locks::lock;
use crate::signing::Signing;
use crate::uploads::Uploads;
use registry::Registry;

/// The daemon's sessions.
pub struct Sessions {
    config: Arc<DaemonConfig>,
    catalog: Arc<Mutex<Catalog>>,
    /// The running sessions.
    registry: Arc<Registry>,
    /// Every file's life.
    files: Arc<FileLife>,
    /// Incidents: taking, listing, releasing them.
    incidents: Incidents,
    /// Retention last kept files for upload (logged when it starts).
    kept_for_upload: Mutex<usize>,
    /// How much of the time uploads and finishing get while recordings lose samples.
    background: Arc<Background>,
    /// When finishing files may run.
    finish_gate: Arc<FinishGate>,
    /// Which delays of background work the log was told of.
    delays: Mutex<backlog::DelayWatch>,
    /// The `[[rule]]`s, which sessions feed with the topics they name.
    rules: Arc<crate::rules::Rules>,
    /// Where `fleet = true` rules' triggers go (remote control's command writer).
    fleet_outbox: rules_target::FleetOutbox,
    /// What files are sealed with, when `[encryption]` is set; the keys of this run's.
    sealing: Option<recd_storage::Sealing>,
    /// Chains and signs closed files, when `[signing]` has a key.
    signing: Option<Arc<Signing>>,
    /// The checkpoints of the files being written, for the incidents' cuts of them.
    checkpoints: recd_storage::CheckpointBook,
}

impl Sessions {
    /// Sessions recorded under `config` into `catalog`, their files' life `files`;
    /// `pressure` tells uploads and finishing what the background policy decides;
    /// `sealing` is `[encryption]`'s, read once at start-up; closed files are chained and
    /// signed through `signing`, if any.
    pub fn new(
        config: DaemonConfig,
        catalog: Arc<Mutex<Catalog>>,
        files: Arc<FileLife>,
        pressure: Arc<Pressure>,
        sealing: Option<recd_storage::Sealing>,
        signing: Option<Arc<Signing>>,
    ) -> Self {
        let config = Arc::new(config);
        let background = Arc::new(Background::new(pressure));
        let finish_gate = Arc::new(FinishGate::new(
            config.recording.finish_while_recording,
            background.clone(),
        ));
        let registry = Arc::new(Registry::default());
        let keys = sealing.as_ref().map(|sealing| sealing.keys.clone());
        let incidents = Incidents::new(catalog.clone(), registry.clone(), config.clone(), keys);
        Self {
            rules: rules_target::rules_of(&config),
            catalog,
            registry,
            files,
            incidents,
            signing,
            kept_for_upload: Mutex::new(0),
            background,
            finish_gate,
            delays: Mutex::default(),
            fleet_outbox: Mutex::default(),
            sealing,
            checkpoints: recd_storage::CheckpointBook::default(),
            config,
        }
    }

    /// Starts finishing closed files in the background.
    pub fn start_finishing(&self) -> Finisher {
        Finisher::start(
            self.catalog.clone(),
            self.files.clone(),
            self.finish_gate.clone(),
            self.config.min_free_space.as_u64(),
            self.sealing.clone(),
            self.signing.clone(),
        )
    }

    /// Starts cutting incidents in the background.
    pub fn start_cutting(&self) -> Cutter {
        Cutter::start(CutterParts {
            catalog: self.catalog.clone(),
            files: self.files.clone(),
            registry: self.registry.clone(),
            gate: self.finish_gate.clone(),
            config: self.config.clone(),
            sealing: self.sealing.clone(),
            checkpoints: self.checkpoints.clone(),
        })
    }

    /// recd's configuration.
    pub fn config(&self) -> &DaemonConfig {
        &self.config
    }

    /// Where recordings go.
    pub fn data_dir(&self) -> &Path {
        &self.config.data_dir
    }

    /// How many file keys of sealed files recd holds; `None` when sealing is off.
    pub fn seal_keys_held(&self) -> Option<usize> {
        self.sealing.as_ref().map(|sealing| sealing.keys.len())
    }

    /// The incidents.
    pub fn incidents(&self) -> &Incidents {
        &self.incidents
    }

    /// The uploader, when `[upload]` is set.
    fn uploads(&self) -> Option<&Arc<Uploads>> {
        self.files.uploads()
    }

    /// Stops the uploader, if any.
    pub fn stop_uploads(&self) {
        if let Some(uploads) = self.uploads() {
            uploads.stop();
        }
    }

    /// Chains what is queued and stops signing (after the sessions stopped).
    pub fn stop_signing(&self) {
        if let Some(signing) = &self.signing {
            signing.stop();
        }
    }

    fn catalog(&self) -> MutexGuard<'_, Catalog> {
        lock(&self.catalog)
    }
}
