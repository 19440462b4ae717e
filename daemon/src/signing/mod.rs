//! Tamper evidence (`[signing] key_file`): every file a session closes, every file
//! finishing puts in place of one, and every incident cut of the session enters the
//! session's hash chain ([`recd_chain`]), signed with the ECU's key. A recorded file enters
//! with the digest its writer took of the bytes as it stored them, so that bytes changed
//! on the disk after they were written are found altered, not chained; only the files
//! recd rewrites itself (finished, cut, a file a write error ended) are read back, by one
//! thread of its own at background priority, never by a writer. After each entry the
//! chain is queued for upload beside the session's files.
//!
//! Finishing waits for a closed file to be chained ([`Signing::settle`]) before it may
//! replace it, so that the recorded bytes are the ones chained first; the finished file
//! then enters as `finished`, replacing the recorded entry.

mod worker;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc, Condvar, Mutex};
use std::time::Duration;

use recd_catalog::Catalog;
use recd_chain::{Kind, SigningKey};

use crate::config::SigningConfig;
use crate::locks::lock;
use crate::uploads::Uploads;

/// How often a wait for a file to be chained looks whether recd is stopping.
const SETTLE_LOOK: Duration = Duration::from_millis(100);

/// Reads the signing key `config` names: `None` when signing is off; an error (naming
/// the file, and its mode when others may read it) refuses start-up.
pub fn load_key(config: &SigningConfig) -> Result<Option<SigningKey>, String> {
    let Some(path) = &config.key_file else {
        return Ok(None);
    };
    let key = SigningKey::load(path).map_err(|e| format!("[signing] key_file: {e}"))?;
    tracing::info!(
        key_file = %path.display(),
        public_key = key.public_key().fingerprint(),
        "closed files are chained and signed (rec verify checks them)"
    );
    Ok(Some(key))
}

/// A file to enter in its session's chain.
struct Job {
    /// The session directory, where the chain is.
    dir: PathBuf,
    /// The file.
    path: PathBuf,
    kind: Kind,
    /// The file's size and SHA-256 as its writer stored them; `None`: read it back.
    stored: Option<(u64, [u8; 32])>,
}

/// Files waiting to be chained, by path, so that finishing can wait for one.
#[derive(Default)]
struct Pending {
    paths: Mutex<HashMap<PathBuf, usize>>,
    changed: Condvar,
}

impl Pending {
    fn add(&self, path: &Path) {
        *lock(&self.paths).entry(path.to_path_buf()).or_default() += 1;
    }

    fn done(&self, path: &Path) {
        let mut paths = lock(&self.paths);
        if let Some(count) = paths.get_mut(path) {
            *count -= 1;
            if *count == 0 {
                paths.remove(path);
            }
        }
        self.changed.notify_all();
    }
}

/// The signing thread and its queue.
pub struct Signing {
    sender: Mutex<Option<mpsc::Sender<Job>>>,
    pending: Arc<Pending>,
    thread: Mutex<Option<std::thread::JoinHandle<()>>>,
}

impl Signing {
    /// Starts chaining with `key`; each chain is queued for upload through `uploads`
    /// when the file that entered it is queued there.
    pub fn start(
        key: SigningKey,
        catalog: Arc<Mutex<Catalog>>,
        uploads: Option<Arc<Uploads>>,
    ) -> Arc<Self> {
        let (sender, jobs) = mpsc::channel::<Job>();
        let pending = Arc::new(Pending::default());
        let mut chaining = worker::Chaining::new(key, catalog, uploads);
        let done = pending.clone();
        let thread = std::thread::Builder::new()
            .name("recd-signing".into())
            .spawn(move || {
                if let Err(refused) = recd_priority::lower_to_background() {
                    tracing::warn!("signing runs at normal priority: the kernel refused {refused}");
                }
                for job in jobs {
                    chaining.enter(&job.dir, &job.path, job.kind, job.stored);
                    done.done(&job.path);
                }
            })
            .expect("cannot start the signing thread");
        Arc::new(Self {
            sender: Mutex::new(Some(sender)),
            pending,
            thread: Mutex::new(Some(thread)),
        })
    }

    /// The file at `path` will enter the chain of `dir` ([`Signing::enter_recorded`]); finishing
    /// waits for it from now on.
    pub fn expect(&self, path: &Path) {
        self.pending.add(path);
    }

    /// Enters the file at `path` in the chain of session directory `dir` as `kind`,
    /// after the files queued before it, read back for its digest.
    pub fn enter(&self, dir: &Path, path: &Path, kind: Kind) {
        self.pending.add(path);
        self.send(Job {
            dir: dir.to_path_buf(),
            path: path.to_path_buf(),
            kind,
            stored: None,
        });
    }

    /// Enters the file a session recorded at `path` in the chain of `dir`, as [`Signing::expect`]
    /// said it would, with the size and SHA-256 its writer `stored` (read back when
    /// `None`: a write error ended it).
    pub fn enter_recorded(&self, dir: &Path, path: &Path, stored: Option<(u64, [u8; 32])>) {
        self.send(Job {
            dir: dir.to_path_buf(),
            path: path.to_path_buf(),
            kind: Kind::Recorded,
            stored,
        });
    }

    /// Queues `job` for the signing thread; once recd is stopping the file is not chained.
    fn send(&self, job: Job) {
        let unsent = match &*lock(&self.sender) {
            Some(sender) => sender.send(job).err().map(|refused| refused.0),
            None => Some(job),
        };
        if let Some(job) = unsent {
            self.pending.done(&job.path);
            tracing::warn!(file = %job.path.display(), "recd is stopping: the file is not chained");
        }
    }

    /// Waits until the file at `path` is chained, or `stop` is raised.
    pub fn settle(&self, path: &Path, stop: &AtomicBool) {
        let mut paths = lock(&self.pending.paths);
        while paths.contains_key(path) && !stop.load(Ordering::Relaxed) {
            paths = crate::locks::wait_timeout(&self.pending.changed, paths, SETTLE_LOOK);
        }
    }

    /// Chains what is queued, then stops the thread.
    pub fn stop(&self) {
        lock(&self.sender).take();
        if let Some(thread) = lock(&self.thread).take() {
            let _ = thread.join();
        }
    }
}
