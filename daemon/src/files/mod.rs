//! A file's life, in one place. Each event a recording or an incident's file goes through
//! — created, closed, finished (replaced in place), cut, uploaded, deleted by retention or
//! after its upload, found missing — is one call here that updates everything depending
//! on it: the catalog (and the pins it keeps), the hash chain, the seal keys, the
//! upload queue (with what its object will say of the file) and the session directory's
//! rosbag2 `metadata.yaml` ([`bags`]). No other actor deletes or
//! replaces a file behind their backs: the uploader reports an upload here, retention and
//! finishing ask here, and whoever deletes or replaces a file claims it first
//! ([`Claims`]).
//!
//! No lock is held while a file is read, renamed or deleted: the catalog's only around
//! its own reads and writes, the claims' only to look at and change the set.

mod bags;
mod claims;
mod closing;
mod cutting;
mod deleting;
mod keys;
mod replacing;

use bags::Bags;
use claims::{Claim, Claims};
pub use closing::{closed_state, Closed};
pub use cutting::CutFile;
pub use deleting::{Deleted, Deletion};
pub use replacing::{ReplaceError, Replaced};

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, Weak};

use recd_catalog::{Catalog, SessionId};
use recd_chain::Kind;
use recd_storage::SealKeys;

use crate::locks::lock;
use crate::signing::Signing;
use crate::uploads::Uploads;

/// The owner of every file's life.
pub struct FileLife {
    catalog: Arc<Mutex<Catalog>>,
    /// Chains and signs files, when `[signing]` has a key.
    signing: Option<Arc<Signing>>,
    /// The keys of sealed files, when `[encryption]` is set.
    keys: Option<SealKeys>,
    /// The uploader, when `[upload]` is set.
    uploads: Option<Arc<Uploads>>,
    /// `[upload] delete_after_upload`.
    delete_after_upload: bool,
    claims: Claims,
    /// The ROS 2 files each session directory's `metadata.yaml` lists.
    bags: Bags,
    /// When settled files' keys were last looked for (ns since the epoch; 0: never).
    keys_swept_ns: AtomicU64,
}

impl FileLife {
    /// The life of the files `catalog` knows: chained through `signing`, sealed with
    /// `keys`, uploaded through `uploads` (and deleted once uploaded when
    /// `delete_after_upload`).
    pub fn new(
        catalog: Arc<Mutex<Catalog>>,
        signing: Option<Arc<Signing>>,
        keys: Option<SealKeys>,
        uploads: Option<Arc<Uploads>>,
        delete_after_upload: bool,
    ) -> Self {
        Self {
            catalog,
            signing,
            keys,
            uploads,
            delete_after_upload,
            claims: Claims::default(),
            bags: Bags::default(),
            keys_swept_ns: AtomicU64::new(0),
        }
    }

    /// The catalog, for as long as the guard lives.
    fn catalog(&self) -> MutexGuard<'_, Catalog> {
        lock(&self.catalog)
    }

    /// The uploader, when `[upload]` is set.
    pub fn uploads(&self) -> Option<&Arc<Uploads>> {
        self.uploads.as_ref()
    }

    /// Claims the file at `path` for an act of one's own on it (`None` while another
    /// actor deletes or replaces it).
    fn claim(&self, path: &Path) -> Option<Claim> {
        self.claims.claim(path)
    }

    /// The directory of session `session`, where its hash chain is.
    fn session_directory(&self, session: SessionId) -> Option<PathBuf> {
        match self.catalog().session(session) {
            Ok(found) => found.map(|session| session.directory),
            Err(error) => {
                tracing::error!(session, "cannot find the session's directory: {error}");
                None
            }
        }
    }

    /// Enters the file at `path` of `session` in its session's chain as `kind`, when
    /// files are signed.
    fn chain(&self, session: SessionId, path: &Path, kind: Kind) {
        let Some(signing) = &self.signing else {
            return;
        };
        if let Some(directory) = self.session_directory(session) {
            signing.enter(&directory, path, kind);
        }
    }

    /// Forgets the seal key of the file at `path`: the file is gone.
    fn forget_key(&self, path: &Path) {
        if let Some(keys) = &self.keys {
            keys.forget(path);
        }
    }
}

/// The uploader's report of each upload, passed on to the files' life once it exists
/// (the uploader starts before it).
#[derive(Default)]
pub struct UploadReports(OnceLock<Weak<FileLife>>);

impl UploadReports {
    /// From now on, uploads are reported to `files`.
    pub fn bind(&self, files: &Arc<FileLife>) {
        let _ = self.0.set(Arc::downgrade(files));
    }
}

impl recd_upload::Uploaded for UploadReports {
    fn uploaded(&self, path: &Path) {
        if let Some(files) = self.0.get().and_then(Weak::upgrade) {
            files.uploaded(path);
        }
    }
}
