//! The uploader's task: a thread of its own, at low CPU and I/O priority, that takes the
//! catalog's queue one file at a time, rides out network loss and refused credentials
//! for as long as it takes, and keeps off the disk while a recording falls behind.

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use recd_catalog::{Catalog, QueuedUpload};
use recd_control::{UploadEntry, UploadStatus, UPLOADED_LISTED};
use tokio::sync::Notify;

use crate::bucket::{Bucket, Trouble};
use crate::pressure::Pressure;
use crate::rate::RateLimit;
use crate::reading::PartBuffers;
use crate::settings::UploadSettings;
use crate::transfer::{Failure, Progress, Transfer};

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
    /// The kind of `error`: the log hears of a new kind once, not of every retry (whose
    /// messages differ by their timings).
    error_kind: Option<std::mem::Discriminant<Trouble>>,
    yielding: Option<String>,
    bytes_per_s: f64,
}

impl Progress for Mutex<Live> {
    fn part_sent(&self, bytes: u64, seconds: f64) {
        if seconds > 0.0 {
            self.lock().expect("upload status lock").bytes_per_s = bytes as f64 / seconds;
        }
    }

    fn yielding(&self, why: Option<String>) {
        let mut status = self.lock().expect("upload status lock");
        if let (Some(why), None) = (&why, &status.yielding) {
            tracing::info!("uploads wait: {why}");
        }
        status.yielding = why;
    }
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
    /// the bucket of `settings`; `pressure` tells it when recordings need the disk, and
    /// `uploaded` hears of each file once the bucket holds it, verified.
    pub fn start(
        settings: UploadSettings,
        state_dir: &Path,
        data_dir: &Path,
        pressure: Arc<Pressure>,
        uploaded: Arc<dyn Uploaded>,
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
            // Those in flight and the one read ahead, and one more while a sent part's
            // bytes are still on their way out of the HTTP client.
            buffers: PartBuffers::new(settings.parallel_parts.max(1) + 2),
            uploaded,
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
            mode: catalog.uploads_mode()?,
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
    /// Kept from part to part and file to file.
    buffers: PartBuffers,
    /// Hears of each file uploaded.
    uploaded: Arc<dyn Uploaded>,
}

/// Told of each file once the bucket holds it, verified. What becomes of the file then
/// (deleted, with `delete_after_upload`) is for the owner of the file's life to decide,
/// with the hash chain, the seal keys and the pins in view: the uploader deletes nothing.
pub trait Uploaded: Send + Sync {
    /// The file at `path` is in the bucket, verified.
    fn uploaded(&self, path: &Path);
}

impl Task {
    fn run(mut self, stop: Arc<Notify>) {
        if let Err(error) = recd_priority::give_way() {
            tracing::warn!("cannot lower the uploader's priority: {error}");
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
            let live = &*self.live;
            self.pressure.wait_out(|why| live.yielding(why)).await;
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
                    let why = format!("upload interrupted, retrying: {why}");
                    self.trouble(&job, &why, Trouble::Transient(String::new()));
                    tokio::time::sleep(retry).await;
                    retry = (retry * 2).min(RETRY_MOST);
                }
                Err(Failure::Trouble(Trouble::Refused(why))) => {
                    self.trouble(&job, &why, Trouble::Refused(String::new()));
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
        let uploaded = Transfer {
            bucket: &self.bucket,
            catalog: &self.catalog,
            settings: &self.settings,
            rate: &mut self.rate,
            pressure: &self.pressure,
            progress: &*self.live,
            stopping: &self.stopping,
            buffers: &self.buffers,
        }
        .run(job)
        .await?;
        self.catalog
            .finish_upload(&job.path, job.fingerprint, &uploaded.e_tag, now_ns())?;
        let mut live = self.live();
        live.error_kind = None;
        if live.error.take().is_some() {
            tracing::info!("uploads go through again");
        }
        drop(live);
        tracing::info!(
            file = %job.path.display(),
            key = %job.key,
            bytes = job.fingerprint.bytes,
            sent = uploaded.sent_now,
            "uploaded and verified"
        );
        self.uploaded.uploaded(&job.path);
        Ok(())
    }

    /// The file stays queued; the status says why, and the log once per kind of trouble.
    fn trouble(&self, job: &QueuedUpload, why: &str, kind: Trouble) {
        let kind = std::mem::discriminant(&kind);
        let mut live = self.live();
        if live.error_kind != Some(kind) {
            tracing::warn!(file = %job.path.display(), "{why}");
            live.error_kind = Some(kind);
        }
        live.error = Some(why.to_string());
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

fn now_ns() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as i64)
}
