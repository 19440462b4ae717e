//! The uploader's task: a thread of its own, at low CPU and I/O priority, that takes the
//! catalog's queue one file at a time, rides out network loss and refused credentials
//! for as long as it takes, and keeps off the disk while a recording falls behind.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use recd_catalog::{Catalog, QueuedUpload};
use recd_control::{FileState, UploadEntry, UploadStatus, UPLOADED_LISTED};
use tokio::sync::Notify;

use crate::bucket::{Bucket, Trouble};
use crate::pressure::Pressure;
use crate::rate::RateLimit;
use crate::settings::UploadSettings;
use crate::transfer::{Failure, Transfer};

/// Waits between attempts after network or server trouble: doubling up to the last.
const RETRY_FIRST: Duration = Duration::from_millis(500);
const RETRY_MOST: Duration = Duration::from_secs(10);
/// Waits between attempts while the store refuses the credentials or lacks the bucket.
const REFUSED_RETRY: Duration = Duration::from_secs(2);
/// How often an idle uploader looks at the queue without being woken.
const IDLE_LOOK: Duration = Duration::from_secs(2);

/// What the uploader is doing, for `rec upload --status` and `rec status`.
#[derive(Debug, Default)]
struct Live {
    error: Option<String>,
    yielding: Option<String>,
    bytes_per_s: f64,
}

/// Starts the uploader.
pub struct Uploader;

/// The running uploader: wake it when files are queued, ask its status, stop it.
pub struct UploaderHandle {
    settings: Arc<UploadSettings>,
    live: Arc<Mutex<Live>>,
    wake: Arc<Notify>,
    stop: Arc<Notify>,
    stopping: Arc<AtomicBool>,
    thread: Mutex<Option<std::thread::JoinHandle<()>>>,
}

impl Uploader {
    /// Starts uploading the queue of the catalog in `state_dir` (its own connection) to
    /// the bucket of `settings`; `pressure` tells it when recordings need the disk.
    pub fn start(
        settings: UploadSettings,
        state_dir: &Path,
        data_dir: &Path,
        pressure: Arc<Pressure>,
    ) -> Result<UploaderHandle, String> {
        let catalog = Catalog::open(state_dir, data_dir).map_err(|e| e.to_string())?;
        let bucket = Bucket::new(&settings).map_err(|e| {
            format!(
                "cannot set up the upload to {}: {e}",
                settings.destination()
            )
        })?;
        let settings = Arc::new(settings);
        let live = Arc::new(Mutex::new(Live::default()));
        let wake = Arc::new(Notify::new());
        let stop = Arc::new(Notify::new());
        let stopping = Arc::new(AtomicBool::new(false));
        let task = Task {
            stopping: stopping.clone(),
            settings: settings.clone(),
            catalog,
            bucket,
            live: live.clone(),
            wake: wake.clone(),
            pressure,
            rate: settings.max_rate.map(RateLimit::new),
        };
        let stop_signal = stop.clone();
        let thread = std::thread::Builder::new()
            .name("recd-upload".into())
            .spawn(move || task.run(stop_signal))
            .map_err(|e| format!("cannot start the upload thread: {e}"))?;
        Ok(UploaderHandle {
            settings,
            live,
            wake,
            stop,
            stopping,
            thread: Mutex::new(Some(thread)),
        })
    }
}

impl UploaderHandle {
    /// Files were queued: look at the queue now.
    pub fn wake(&self) {
        self.wake.notify_one();
    }

    /// The queue (from `catalog`) and what the uploader is doing.
    pub fn status(&self, catalog: &Catalog) -> Result<UploadStatus, recd_catalog::CatalogError> {
        let files = catalog
            .upload_queue(UPLOADED_LISTED)?
            .iter()
            .map(entry)
            .collect();
        let (uploaded_files, uploaded_bytes) = catalog.uploaded_totals()?;
        let live = self.live.lock().expect("upload status lock");
        Ok(UploadStatus {
            enabled: true,
            destination: Some(self.settings.destination()),
            error: live.error.clone(),
            yielding: live.yielding.clone(),
            bytes_per_s: live.bytes_per_s,
            uploaded_files,
            uploaded_bytes,
            files,
        })
    }

    /// Stops the uploader; a part being sent is abandoned (and sent again next time).
    pub fn stop(&self) {
        self.stopping.store(true, Ordering::Relaxed);
        self.stop.notify_one();
        if let Some(thread) = self.thread.lock().expect("upload thread lock").take() {
            let _ = thread.join();
        }
    }
}

/// A queued file as `rec upload --status` shows it.
pub fn entry(upload: &QueuedUpload) -> UploadEntry {
    UploadEntry {
        path: upload.path.clone(),
        session: upload.session.clone(),
        key: upload.key.clone(),
        state: upload.state,
        bytes: upload.fingerprint.bytes,
        sent: upload.sent(),
        priority: upload.priority,
        queued_ns: upload.queued_ns,
        uploaded_ns: upload.uploaded_ns,
        reason: upload.reason.clone(),
    }
}

/// The uploader's thread.
struct Task {
    settings: Arc<UploadSettings>,
    catalog: Catalog,
    bucket: Bucket,
    live: Arc<Mutex<Live>>,
    wake: Arc<Notify>,
    pressure: Arc<Pressure>,
    rate: Option<RateLimit>,
    stopping: Arc<AtomicBool>,
}

impl Task {
    fn run(mut self, stop: Arc<Notify>) {
        if let Err(error) = crate::priority::lower_this_thread() {
            tracing::warn!("cannot lower the uploader's I/O priority: {error}");
        }
        let runtime = match tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
        {
            Ok(runtime) => runtime,
            Err(error) => {
                tracing::error!(
                    "cannot start the uploader's runtime, nothing is uploaded: {error}"
                );
                return;
            }
        };
        runtime.block_on(async {
            tokio::select! {
                _ = stop.notified() => {}
                _ = self.serve() => {}
            }
        });
    }

    async fn serve(&mut self) {
        let mut retry = RETRY_FIRST;
        loop {
            yield_to_recording(&self.pressure, &self.live).await;
            let job = match self.catalog.next_upload() {
                Ok(Some(job)) => job,
                Ok(None) => {
                    let _ = tokio::time::timeout(IDLE_LOOK, self.wake.notified()).await;
                    continue;
                }
                Err(error) => {
                    tracing::error!("cannot read the upload queue: {error}");
                    tokio::time::sleep(RETRY_MOST).await;
                    continue;
                }
            };
            match self.upload(&job).await {
                Ok(()) => retry = RETRY_FIRST,
                Err(Failure::Trouble(Trouble::UploadGone)) => {
                    tracing::warn!(file = %job.path.display(), "the store no longer knows the multipart upload: starting the file over");
                }
                Err(Failure::Trouble(Trouble::Transient(why))) => {
                    self.trouble(&job, &format!("upload interrupted, retrying: {why}"));
                    tokio::time::sleep(retry).await;
                    retry = (retry * 2).min(RETRY_MOST);
                }
                Err(Failure::Trouble(Trouble::Refused(why))) => {
                    self.trouble(&job, &why);
                    tokio::time::sleep(REFUSED_RETRY).await;
                }
                Err(Failure::Trouble(Trouble::Exists)) => self.give_up(
                    &job,
                    "an object already holds its key; recd does not overwrite it",
                ),
                Err(Failure::GiveUp(why)) => self.give_up(&job, &why),
                Err(Failure::Catalog(error)) => {
                    tracing::error!("cannot journal the upload in the catalog: {error}");
                    tokio::time::sleep(RETRY_MOST).await;
                }
            }
        }
    }

    async fn upload(&mut self, job: &QueuedUpload) -> Result<(), Failure> {
        let live = self.live.clone();
        let mut part_sent = |_held: u64, _size: u64, bytes: u64, seconds: f64| {
            if seconds > 0.0 {
                live.lock().expect("upload status lock").bytes_per_s = bytes as f64 / seconds;
            }
        };
        let (pressure, status) = (self.pressure.clone(), self.live.clone());
        let wait = move || -> std::pin::Pin<Box<dyn std::future::Future<Output = ()>>> {
            let (pressure, status) = (pressure.clone(), status.clone());
            Box::pin(async move { yield_to_recording(&pressure, &status).await })
        };
        let uploaded = Transfer {
            bucket: &self.bucket,
            catalog: &self.catalog,
            settings: &self.settings,
            rate: &mut self.rate,
            yield_to_recording: &wait,
            stopping: &self.stopping,
        }
        .run(job, &mut part_sent)
        .await?;
        self.catalog
            .finish_upload(&job.path, &uploaded.e_tag, now_ns())?;
        if self.live().error.take().is_some() {
            tracing::info!("uploads go through again");
        }
        tracing::info!(
            file = %job.path.display(),
            key = %job.key,
            bytes = job.fingerprint.bytes,
            sent = uploaded.sent_now,
            "uploaded and verified"
        );
        if self.settings.delete_after_upload {
            self.delete(&job.path)?;
        }
        Ok(())
    }

    fn delete(&self, path: &PathBuf) -> Result<(), Failure> {
        match std::fs::remove_file(path) {
            Ok(()) => {
                self.catalog.set_file_state(path, FileState::Deleted)?;
                tracing::info!(file = %path.display(), "deleted after upload (delete_after_upload)");
            }
            Err(error) => {
                tracing::error!(file = %path.display(), "cannot delete the uploaded file: {error}")
            }
        }
        Ok(())
    }

    /// The file stays queued; the status and, once per new reason, the log say why.
    fn trouble(&self, job: &QueuedUpload, why: &str) {
        let mut live = self.live();
        if live.error.as_deref() != Some(why) {
            tracing::warn!(file = %job.path.display(), "{why}");
            live.error = Some(why.to_string());
        }
        live.bytes_per_s = 0.0;
        drop(live);
        if let Err(error) = self.catalog.note_upload_attempt(&job.path, Some(why)) {
            tracing::error!("cannot note the upload attempt in the catalog: {error}");
        }
    }

    fn give_up(&self, job: &QueuedUpload, why: &str) {
        tracing::error!(file = %job.path.display(), key = %job.key, "upload failed: {why}");
        if let Err(error) = self.catalog.fail_upload(&job.path, why, job.fingerprint) {
            tracing::error!("cannot record the failed upload in the catalog: {error}");
        }
    }

    fn live(&self) -> std::sync::MutexGuard<'_, Live> {
        self.live.lock().expect("upload status lock")
    }
}

/// Waits while a recording needs the disk, saying so in the status (and once in the log).
async fn yield_to_recording(pressure: &Pressure, live: &Mutex<Live>) {
    while let Some(why) = pressure.current() {
        {
            let mut status = live.lock().expect("upload status lock");
            if status.yielding.is_none() {
                tracing::info!("uploads wait: {why}");
            }
            status.yielding = Some(why);
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
    live.lock().expect("upload status lock").yielding = None;
}

fn now_ns() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as i64)
}
