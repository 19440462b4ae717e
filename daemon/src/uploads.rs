//! The daemon's side of uploading: starting the uploader when `[upload]` is configured,
//! queueing the files sessions finish (and those `rec upload` names) with their keys and
//! metadata, and answering `rec upload --status`.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::{Arc, Mutex};

use recd_catalog::{Catalog, CatalogError, Fingerprint, NewUpload};
use recd_control::{Incident, UploadStatus};
use recd_upload::{object_key, Pressure, UploadSettings, Uploaded, Uploader, UploaderHandle};

use crate::config::DaemonConfig;
use crate::locks::lock;

/// The uploader and what queueing needs to know.
pub struct Uploads {
    settings: UploadSettings,
    /// Retention never deletes a file not yet uploaded.
    pub keep_until_uploaded: bool,
    handle: UploaderHandle,
}

/// Where a file goes in the upload queue, and under which folder of its session's prefix.
enum Place {
    /// A session's file, first with the priority ones (marked, a pre-trigger window).
    Session { priority: bool },
    /// An incident's own file, before every other; its key under `folder`, if any.
    Incident { folder: Option<&'static str> },
}

/// A session's files as the uploader sees them.
#[derive(Debug, Clone)]
pub struct SessionFiles {
    /// The session's name.
    pub session: String,
    /// When it started, ns since the Unix epoch (`{date}` of keys).
    pub started_ns: i64,
    /// Its files go first (a pre-trigger session's trigger windows).
    pub priority: bool,
}

impl Uploads {
    /// Starts the uploader when `config` has an `[upload]` section; it waits while
    /// `pressure` is raised, and tells `uploaded` of each file once the bucket holds it.
    pub fn start(
        config: &DaemonConfig,
        pressure: Arc<Pressure>,
        uploaded: Arc<dyn Uploaded>,
    ) -> Result<Option<Self>, String> {
        let Some(upload) = &config.upload else {
            return Ok(None);
        };
        let settings = upload.settings(&crate::host::hostname())?;
        let handle = Uploader::start(
            settings.clone(),
            &config.state_dir,
            &config.data_dir,
            pressure,
            uploaded,
        )?;
        tracing::info!(destination = %settings.destination(), "uploading finished files");
        Ok(Some(Self {
            settings,
            keep_until_uploaded: upload.keep_until_uploaded,
            handle,
        }))
    }

    /// Queues the finished file at `path` (the `index`-th of its session, holding
    /// `messages`) in `catalog`; false when it was queued or uploaded already. The file is
    /// looked at before the catalog is locked.
    pub fn queue(
        &self,
        catalog: &Mutex<Catalog>,
        session: &SessionFiles,
        path: &Path,
        index: usize,
        messages: u64,
    ) -> Result<bool, CatalogError> {
        let Some(fingerprint) = fingerprint_of(path) else {
            return Ok(false);
        };
        let catalog = lock(catalog);
        let priority = session.priority || catalog.markers(path)? > 0;
        let mut extra = BTreeMap::from([("file_index".to_string(), index.to_string())]);
        // A pre-trigger session's window is its incidents' own file: it goes first too,
        // naming them (in the order they were taken, comma-separated).
        let incidents = catalog.incidents_owning(path)?;
        let place = if incidents.is_empty() {
            Place::Session { priority }
        } else {
            // A comma within an id is percent-encoded, as it separates them.
            let ids: Vec<String> = (incidents.iter())
                .map(|id| header_safe(id).replace(',', "%2C"))
                .collect();
            extra.insert("incident".to_string(), ids.join(","));
            Place::Incident { folder: None }
        };
        let file = (path, fingerprint, messages);
        self.queue_with(&catalog, session, file, place, extra)
    }

    /// Queues the cut file at `path` of `incident` (holding `messages`), before every
    /// other file, with the incident in its object's metadata.
    pub fn queue_cut(
        &self,
        catalog: &Mutex<Catalog>,
        session: &SessionFiles,
        path: &Path,
        messages: u64,
        incident: &Incident,
    ) -> Result<bool, CatalogError> {
        let Some(fingerprint) = fingerprint_of(path) else {
            return Ok(false);
        };
        let extra = BTreeMap::from([
            ("incident".to_string(), header_safe(&incident.id)),
            ("incident_note".to_string(), header_safe(&incident.note)),
            ("incident_origin".to_string(), incident.origin.clone()),
            ("incident_time".to_string(), incident.time_ns.to_string()),
            ("incident_start".to_string(), incident.start_ns.to_string()),
            ("incident_end".to_string(), incident.end_ns.to_string()),
        ]);
        let place = Place::Incident {
            folder: Some(recd_chain::INCIDENTS_DIR),
        };
        let file = (path, fingerprint, messages);
        self.queue_with(&lock(catalog), session, file, place, extra)
    }

    /// Queues the file at `path` as `fingerprint` says it is, holding `messages`, at its
    /// `place`, with its object's metadata and `extra` entries.
    fn queue_with(
        &self,
        catalog: &Catalog,
        session: &SessionFiles,
        (path, fingerprint, messages): (&Path, Fingerprint, u64),
        place: Place,
        extra: BTreeMap<String, String>,
    ) -> Result<bool, CatalogError> {
        let mut prefix = self.settings.prefix.render(
            &self.settings.vehicle_id,
            &session.session,
            session.started_ns,
        );
        let (priority, incident) = match place {
            Place::Session { priority } => (priority, false),
            Place::Incident { folder } => {
                if let Some(folder) = folder {
                    prefix = format!("{prefix}/{folder}");
                }
                (true, true)
            }
        };
        let mut metadata = BTreeMap::from([
            ("vehicle".to_string(), self.settings.vehicle_id.clone()),
            ("session".to_string(), session.session.clone()),
            ("messages".to_string(), messages.to_string()),
            ("bytes".to_string(), fingerprint.bytes.to_string()),
            (
                "recorder".to_string(),
                format!("recd {}", env!("CARGO_PKG_VERSION")),
            ),
            (
                "foxglove_device_id".to_string(),
                self.settings.vehicle_id.clone(),
            ),
            (
                "foxglove_device_name".to_string(),
                self.settings.vehicle_name.clone(),
            ),
        ]);
        metadata.extend(extra);
        // Its health verdict (ok, degraded, missing), so that a fleet finds the drives
        // that are no use in the bucket.
        if let Some(verdict) = catalog.file_health(path)? {
            metadata.insert("health".to_string(), verdict);
        }
        let queued = catalog.queue_upload(
            &NewUpload {
                path: path.to_path_buf(),
                key: object_key(&prefix, path),
                priority,
                incident,
                fingerprint,
                metadata,
            },
            crate::clock::now_ns(),
        )?;
        if queued {
            self.handle.wake();
        }
        Ok(queued)
    }

    /// Queues the session's hash chain at `chain` for upload as it is now, beside the
    /// file at `entered` (the one that last entered it, queued already): under the same
    /// prefix as the session's files, with their object metadata but what is the file's
    /// own (or, when `entered` is not queued, where the chain went before). Nothing when
    /// neither is queued (its session does not upload). The chain is looked at before the
    /// catalog is locked.
    pub fn queue_chain(
        &self,
        catalog: &Mutex<Catalog>,
        chain: &Path,
        entered: &Path,
    ) -> Result<bool, CatalogError> {
        self.queue_beside_chain(catalog, chain, (chain, entered), None)
    }

    /// Queues the entry object at `object` (in the session's `recd-chain.d/`) of the chain
    /// at `chain`, beside the file at `entered` as [`Uploads::queue_chain`] does, under
    /// `recd-chain.d/`: uploaded once and never overwritten, so that the bucket keeps every
    /// entry even when the vehicle's chain is cut.
    pub fn queue_chain_entry(
        &self,
        catalog: &Mutex<Catalog>,
        object: &Path,
        chain: &Path,
        entered: &Path,
    ) -> Result<bool, CatalogError> {
        let folder = Some(recd_chain::ENTRIES_DIR);
        self.queue_beside_chain(catalog, object, (chain, entered), folder)
    }

    /// Queues `path`, the chain itself (uploaded again as it grows) or, under `folder`, one
    /// of its entry objects (uploaded once), where [`chain_beside`] puts the chain.
    fn queue_beside_chain(
        &self,
        catalog: &Mutex<Catalog>,
        path: &Path,
        (chain, entered): (&Path, &Path),
        folder: Option<&str>,
    ) -> Result<bool, CatalogError> {
        let Some(fingerprint) = fingerprint_of(path) else {
            return Ok(false);
        };
        let catalog = lock(catalog);
        let Some(beside) = chain_beside(&catalog, chain, entered, fingerprint.bytes)? else {
            return Ok(false);
        };
        let prefix = match folder {
            Some(folder) => format!("{}/{folder}", beside.prefix),
            None => beside.prefix,
        };
        let upload = NewUpload {
            path: path.to_path_buf(),
            key: object_key(&prefix, path),
            priority: beside.priority,
            incident: false,
            fingerprint,
            metadata: beside.metadata,
        };
        let now = crate::clock::now_ns();
        let queued = match folder {
            None => catalog.queue_upload_again(&upload, now).map(|()| true)?,
            Some(_) => catalog.queue_upload(&upload, now)?,
        };
        if queued {
            self.handle.wake();
        }
        Ok(queued)
    }

    /// The queue and the uploader's state.
    pub fn status(&self, catalog: &Catalog) -> Result<UploadStatus, CatalogError> {
        self.handle.status(catalog)
    }

    /// Stops the uploader (a part being sent is sent again next time).
    pub fn stop(&self) {
        self.handle.stop();
    }
}

/// Where a session's chain (and its entry objects) go in the bucket, and with what.
struct ChainPlace {
    /// The session's prefix.
    prefix: String,
    /// Whether the session's files go first.
    priority: bool,
    /// The object metadata of the session's files, less what is each file's own.
    metadata: BTreeMap<String, String>,
}

/// Where the chain at `chain` and its entries go: beside the file at `entered` (the one
/// that last entered it) when that is queued, else where the chain went before; `None`
/// when neither is queued (its session does not upload). `bytes` is what is queued.
fn chain_beside(
    catalog: &Catalog,
    chain: &Path,
    entered: &Path,
    bytes: u64,
) -> Result<Option<ChainPlace>, CatalogError> {
    let Some(beside) = catalog.upload(entered)?.or(catalog.upload(chain)?) else {
        return Ok(None);
    };
    // A cut file's key is under the session's prefix and `incidents/`.
    let folder = beside.key.rsplit_once('/').map_or("", |(folder, _)| folder);
    let prefix = folder
        .strip_suffix(&format!("/{}", recd_chain::INCIDENTS_DIR))
        .unwrap_or(folder);
    let own = ["messages", "bytes", "file_index", "health"];
    let mut metadata: BTreeMap<String, String> = (beside.metadata.into_iter())
        .filter(|(key, _)| !own.contains(&key.as_str()) && !key.starts_with("incident"))
        .collect();
    metadata.insert("bytes".into(), bytes.to_string());
    Ok(Some(ChainPlace {
        prefix: prefix.to_string(),
        priority: beside.priority,
        metadata,
    }))
}

/// The fingerprint of the file at `path` now; `None` (and a WARN) when it cannot be read.
fn fingerprint_of(path: &Path) -> Option<Fingerprint> {
    match Fingerprint::of(path) {
        Ok(fingerprint) => Some(fingerprint),
        Err(error) => {
            tracing::warn!(file = %path.display(), "cannot queue the file for upload: {error}");
            None
        }
    }
}

/// `text` as an object metadata value can carry it: printable ASCII as it is, every
/// other byte (and '%') percent-encoded.
fn header_safe(text: &str) -> String {
    let mut out = String::new();
    for byte in text.bytes() {
        if (b' '..=b'~').contains(&byte) && byte != b'%' {
            out.push(byte as char);
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}
