//! Sealed recording: what a [`StreamWriter`](crate::StreamWriter) needs to write its files
//! as age files (`….mcap.age`), and the keys of the files it wrote, which stay in memory
//! so that the recorder can read them back (finish them, cut incidents out of them).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use recd_seal::{Recipients, SealKey, SealedReader};

use crate::info::{summarize_from, FileInfo, InfoError};

/// The suffix a sealed file's name gets after `.mcap`.
pub const SEALED_SUFFIX: &str = ".age";

/// Whether `path` names a sealed file (`….age`).
pub fn is_sealed(path: &Path) -> bool {
    path.extension().is_some_and(|extension| extension == "age")
}

/// Seal every file to these recipients, and keep each file's key in `keys`.
#[derive(Clone)]
pub struct Sealing {
    /// The fleet's public keys.
    pub recipients: Arc<Recipients>,
    /// Where each written file's key is kept.
    pub keys: SealKeys,
}

impl std::fmt::Debug for Sealing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Sealing({} recipients)", self.recipients.len())
    }
}

impl PartialEq for Sealing {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.recipients, &other.recipients) && self.keys == other.keys
    }
}

impl Eq for Sealing {}

/// The keys of the sealed files this process wrote, by path: in memory only, so that a
/// restarted recorder can no longer read the files an earlier run wrote.
#[derive(Clone, Default)]
pub struct SealKeys(Arc<Mutex<HashMap<PathBuf, SealKey>>>);

impl SealKeys {
    /// Keeps the key of the file at `path`.
    pub fn insert(&self, path: &Path, key: SealKey) {
        self.lock().insert(path.to_path_buf(), key);
    }

    /// The key of the file at `path`, if this process wrote it and still keeps it.
    pub fn get(&self, path: &Path) -> Option<SealKey> {
        self.lock().get(path).cloned()
    }

    /// Moves the key kept for `from` to `to` (a file renamed or replaced in place).
    pub fn rename(&self, from: &Path, to: &Path) {
        let mut keys = self.lock();
        if let Some(key) = keys.remove(from) {
            keys.insert(to.to_path_buf(), key);
        }
    }

    /// Forgets the key of the file at `path` (deleted, or no longer to be read here).
    pub fn forget(&self, path: &Path) {
        self.lock().remove(path);
    }

    /// Whether the key of the file at `path` is kept.
    pub fn holds(&self, path: &Path) -> bool {
        self.lock().contains_key(path)
    }

    /// The paths of the files whose keys are kept.
    pub fn paths(&self) -> Vec<PathBuf> {
        self.lock().keys().cloned().collect()
    }

    /// The number of keys kept.
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    /// Whether no key is kept.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<PathBuf, SealKey>> {
        self.0
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

impl PartialEq for SealKeys {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl std::fmt::Debug for SealKeys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SealKeys({} kept)", self.len())
    }
}

/// What the sealed file at `path` holds ([`crate::summarize`]), read with its key.
pub fn summarize_sealed(path: &Path, key: &SealKey) -> Result<FileInfo, InfoError> {
    let read_error = |source| InfoError::Read {
        path: path.to_path_buf(),
        source,
    };
    let file = std::fs::File::open(path).map_err(read_error)?;
    let mut reader = SealedReader::open_with_key(&file, key)
        .map_err(|e| read_error(std::io::Error::other(e)))?;
    let size = reader.plaintext_len();
    summarize_from(&mut reader, size, path)
}
