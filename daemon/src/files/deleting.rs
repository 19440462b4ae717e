//! Files leaving the vehicle's disk: deleted by retention (the oldest finished files
//! beyond a bound), deleted once uploaded (`delete_after_upload`), or found gone without
//! recd. A deletion by recd enters the session's chain saying by whom (`deleted`,
//! `offloaded`), so that `rec verify` tells it from a file gone without recd, and the
//! chain in the bucket still verifies whole; the file's seal key goes with it.

use std::path::{Path, PathBuf};

use recd_catalog::{CatalogError, DeletedBefore, File};
use recd_chain::Kind;
use recd_control::FileState;

use super::FileLife;

/// Who deletes a file, and why.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Deletion {
    /// Retention, for the bound `why` names (`to keep within max_total_size`, …).
    Retention {
        /// The bound, in words.
        why: &'static str,
    },
    /// `delete_after_upload`, once its upload was verified.
    AfterUpload,
}

/// What became of a file asked to be deleted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Deleted {
    /// It is deleted.
    Done,
    /// Left: an incident pins it.
    Pinned,
    /// Left: another actor deletes or replaces it now.
    Claimed,
    /// Nothing to delete: the catalog has it gone already, or is not its file (a
    /// session's hash chain, say).
    Gone,
}

/// Why a file could not be deleted; the catalog keeps it as it was.
#[derive(Debug, thiserror::Error)]
pub enum DeleteError {
    /// The file system refused.
    #[error("cannot delete {}: {source}", path.display())]
    Remove {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The catalog could not be read or written.
    #[error(transparent)]
    Catalog(#[from] CatalogError),
}

impl FileLife {
    /// Deletes the file at `path` for `deletion`, unless an incident pins it or another
    /// actor holds it. The catalog has it deleted before the disk does: an incident taken
    /// meanwhile does not count on it, and the look for files gone without recd never
    /// finds it listed as there.
    pub fn delete(&self, path: &Path, deletion: Deletion) -> Result<Deleted, DeleteError> {
        let Some(_claim) = self.claim(path) else {
            return Ok(Deleted::Claimed);
        };
        let file = {
            let catalog = self.catalog();
            let Some(file) = catalog.file(path)? else {
                return Ok(Deleted::Gone);
            };
            if matches!(file.state, FileState::Deleted | FileState::Missing) {
                return Ok(Deleted::Gone);
            }
            if catalog.is_pinned(path)? {
                return Ok(Deleted::Pinned);
            }
            catalog.set_file_state(path, FileState::Deleted)?;
            file
        };
        match std::fs::remove_file(path) {
            Ok(()) => {}
            // Gone already: deleted is what it is.
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {}
            Err(source) => {
                if let Err(error) = self.catalog().set_file_state(path, file.state) {
                    tracing::error!(file = %path.display(), "cannot restore the file's state in the catalog: {error}");
                }
                return Err(DeleteError::Remove {
                    path: path.to_path_buf(),
                    source,
                });
            }
        }
        self.tell_deleted(&file, deletion);
        Ok(Deleted::Done)
    }

    /// What follows a deletion: the log, the catalog's account of what the file still
    /// waited for, the chain's entry saying by whom, the seal key forgotten, the
    /// directory's bag no longer listing it.
    fn tell_deleted(&self, file: &File, deletion: Deletion) {
        let path = &file.path;
        let kind = match deletion {
            Deletion::Retention { why } => {
                tracing::info!(file = %path.display(), "deleted the oldest recording {why}");
                match self.catalog().mark_deleted_by_retention(path) {
                    Ok(lost) => {
                        if let Some(before) = never_left(lost) {
                            tracing::warn!(
                                file = %path.display(),
                                "the file was deleted before it was {before}: its data never left the vehicle (counted in rec status and recd_files_deleted_unfinished / recd_files_deleted_unuploaded)"
                            );
                        }
                    }
                    Err(error) => {
                        tracing::error!(file = %path.display(), "cannot record the deletion in the catalog: {error}")
                    }
                }
                Kind::Deleted
            }
            Deletion::AfterUpload => {
                tracing::info!(file = %path.display(), "deleted after upload (delete_after_upload)");
                Kind::Offloaded
            }
        };
        self.chain(file.session, path, kind);
        self.forget_key(path);
        self.leave_bag(path);
    }

    /// The uploader put the file at `path` in the bucket, verified: with
    /// `delete_after_upload` a recording or an incident's file is deleted, unless an
    /// incident pins it (it waits for the release and retention then).
    pub fn uploaded(&self, path: &Path) {
        if !self.delete_after_upload {
            return;
        }
        match self.delete(path, Deletion::AfterUpload) {
            Ok(Deleted::Pinned) => {
                tracing::info!(file = %path.display(), "kept after upload: an incident pins it (delete_after_upload waits for its release)")
            }
            Ok(Deleted::Claimed) => {
                tracing::info!(file = %path.display(), "kept after upload: it is being replaced or deleted now")
            }
            Ok(Deleted::Done | Deleted::Gone) => {}
            Err(error) => {
                tracing::error!(file = %path.display(), "cannot delete the uploaded file: {error}")
            }
        }
    }

    /// The file at `path`, which the catalog lists as on disk, is gone without recd: it
    /// is marked missing (and the log says so) and leaves its directory's bag, unless
    /// recd deleted it meanwhile.
    pub fn found_missing(&self, path: &Path) {
        // Not matched on in place: the catalog's guard would live through the arms, and
        // the bag reads the catalog again.
        let marked = self.catalog().mark_missing(path);
        match marked {
            Ok(true) => {
                tracing::warn!(file = %path.display(), "a recorded file was deleted outside recd; marked missing in the catalog");
                self.forget_key(path);
                self.leave_bag(path);
            }
            Ok(false) => {}
            Err(error) => {
                tracing::error!(file = %path.display(), "cannot mark the file missing: {error}")
            }
        }
    }
}

/// What a deleted file had still waited for, in words; `None` when nothing.
fn never_left(lost: DeletedBefore) -> Option<&'static str> {
    match (lost.finished, lost.uploaded) {
        (true, true) => Some("finished or uploaded"),
        (true, false) => Some("finished"),
        (false, true) => Some("uploaded"),
        (false, false) => None,
    }
}
