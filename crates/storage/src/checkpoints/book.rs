//! The checkpoints of the files being written, shared by the writers with the cuts of the
//! same process: a file being recorded has no summary yet, so a cut of it learns here
//! where its schemas, channels and metadata lie and where its checkpoints are.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use super::{Checkpoints, Span};

/// What a cut needs of a file still being written to start its scan past the start.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Growing {
    /// The Schema, Channel and Metadata records written so far, in file order.
    pub definitions: Vec<Span>,
    pub checkpoints: Checkpoints,
}

/// The checkpoints of the files this process is writing, by path; a writer given one
/// ([`WriterOptions::checkpoints`](crate::WriterOptions)) keeps its file's here until it
/// closes it, and a cut given the same ([`CutOptions::checkpoints`](crate::CutOptions))
/// reads a growing file from its last checkpoint before the window.
#[derive(Clone, Default)]
pub struct CheckpointBook(Arc<Mutex<HashMap<PathBuf, Arc<Growing>>>>);

impl CheckpointBook {
    /// Keeps `growing` as what the file at `path` holds so far.
    pub(crate) fn publish(&self, path: &Path, growing: Growing) {
        self.lock().insert(path.to_path_buf(), Arc::new(growing));
    }

    /// What the file at `path` held at its last checkpoint, if it is being written here.
    pub(crate) fn get(&self, path: &Path) -> Option<Arc<Growing>> {
        self.lock().get(path).cloned()
    }

    /// Forgets the file at `path` (closed: its summary and record say it all).
    pub(crate) fn forget(&self, path: &Path) {
        self.lock().remove(path);
    }

    /// How many files are kept.
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    /// Whether no file is kept.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<PathBuf, Arc<Growing>>> {
        self.0
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

impl std::fmt::Debug for CheckpointBook {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "CheckpointBook({} files)", self.len())
    }
}

impl PartialEq for CheckpointBook {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Eq for CheckpointBook {}
