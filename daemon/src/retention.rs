//! Retention: keeps the recordings on each file system within `max_total_size`, a
//! session within its `--max-files` ring and its `--max-age`, by deleting the oldest
//! finished files, those already uploaded first (and, with `keep_until_uploaded`, none
//! waiting for upload), never one an incident pins.
//! Each deletion is logged and marked in the catalog, with whether the file still waited
//! to be finished or uploaded (a warning then: its data never left the vehicle); a file
//! that vanished without recd is marked missing.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::os::unix::fs::MetadataExt;
use std::path::PathBuf;
use std::time::Duration;

use recd_catalog::{Catalog, CatalogError, DeletedBefore, File, SessionId};
use recd_control::{FileState, UploadState};

/// What uploads ask of retention: files already uploaded go first, and with
/// `keep_until_uploaded` those still waiting for upload never go.
#[derive(Debug, Default)]
pub struct UploadGuard {
    /// The upload state of every queued file.
    pub states: HashMap<PathBuf, UploadState>,
    /// `[upload] keep_until_uploaded`.
    pub keep_until_uploaded: bool,
}

impl UploadGuard {
    fn uploaded(&self, file: &File) -> bool {
        self.states.get(&file.path) == Some(&UploadState::Uploaded)
    }

    /// The file must stay until it is uploaded.
    pub fn keeps(&self, file: &File) -> bool {
        self.keep_until_uploaded
            && self
                .states
                .get(&file.path)
                .is_some_and(|state| *state != UploadState::Uploaded)
    }

    /// `files` (oldest first) in the order retention deletes them: uploaded ones first.
    fn order<'a, T>(&self, files: &'a [T], file: impl Fn(&T) -> &File) -> Vec<&'a T> {
        let mut ordered: Vec<&T> = files.iter().collect();
        ordered.sort_by_key(|entry| !self.uploaded(file(entry)));
        ordered
    }
}

/// What retention must leave, whatever the bounds say.
#[derive(Debug, Default)]
pub struct Leave {
    /// The files sessions are writing now.
    pub writing: HashSet<PathBuf>,
    /// The files incidents pin (their windows' files and their cut files).
    pub pinned: HashSet<PathBuf>,
    /// What uploads ask.
    pub uploads: UploadGuard,
}

/// What one pass of retention did.
#[derive(Debug, Default)]
pub struct Retained {
    /// Files deleted.
    pub deleted: Vec<PathBuf>,
    /// Files it would have deleted but kept, as they wait for upload.
    pub kept_for_upload: usize,
}

impl Retained {
    /// Deletes `file` (`why` says for which bound) unless `leave` says it must stay,
    /// counting it as kept when it waits for upload; true when it was deleted.
    fn take(
        &mut self,
        catalog: &Catalog,
        file: &File,
        leave: &Leave,
        why: &str,
    ) -> Result<bool, CatalogError> {
        if !deletable(file, leave) {
            return Ok(false);
        }
        if leave.uploads.keeps(file) {
            self.kept_for_upload += 1;
            return Ok(false);
        }
        let deleted = delete(catalog, file, why)?;
        if deleted {
            self.deleted.push(file.path.clone());
        }
        Ok(deleted)
    }
}

/// A catalog file as it is on disk now.
struct OnDisk {
    file: File,
    bytes: u64,
    device: u64,
}

/// The catalog's files that are still on disk, oldest first; those gone are marked
/// missing (and logged).
fn files_on_disk(catalog: &Catalog) -> Result<Vec<OnDisk>, CatalogError> {
    let mut present = Vec::new();
    for file in catalog.files_on_disk()? {
        match std::fs::metadata(&file.path) {
            Ok(metadata) => present.push(OnDisk {
                bytes: metadata.len(),
                device: metadata.dev(),
                file,
            }),
            // Not if recd deleted it since it was listed (the uploader, after upload).
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
                if catalog.mark_missing(&file.path)? {
                    tracing::warn!(file = %file.path.display(), "a recorded file was deleted outside recd; marked missing in the catalog");
                }
            }
            // Unreadable for now (permissions, an unmounted disk): left alone.
            Err(_) => {}
        }
    }
    Ok(present)
}

/// Whether retention may delete `file`: finished (complete, indexed or needing reindex),
/// not being written by anyone, pinned by no incident.
fn deletable(file: &File, leave: &Leave) -> bool {
    (file.state.is_finished() || file.state == FileState::NeedsReindex)
        && !leave.writing.contains(&file.path)
        && !leave.pinned.contains(&file.path)
        && !recd_storage::is_being_recorded(&file.path).unwrap_or(true)
}

fn delete(catalog: &Catalog, file: &File, why: &str) -> Result<bool, CatalogError> {
    match std::fs::remove_file(&file.path) {
        Ok(()) => {
            tracing::info!(file = %file.path.display(), "deleted the oldest recording {why}");
            let lost = catalog.mark_deleted_by_retention(&file.path)?;
            if let Some(before) = never_left(lost) {
                tracing::warn!(
                    file = %file.path.display(),
                    "the file was deleted before it was {before}: its data never left the vehicle (counted in rec status and recd_files_deleted_unfinished / recd_files_deleted_unuploaded)"
                );
            }
            Ok(true)
        }
        Err(error) => {
            tracing::error!(file = %file.path.display(), "retention cannot delete the file: {error}");
            Ok(false)
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

/// Deletes the oldest finished files of each file system whose recordings exceed
/// `max_total` bytes.
pub fn enforce_total(
    catalog: &Catalog,
    max_total: Option<u64>,
    leave: &Leave,
) -> Result<Retained, CatalogError> {
    let present = files_on_disk(catalog)?;
    let mut retained = Retained::default();
    let Some(max_total) = max_total else {
        return Ok(retained);
    };
    let mut by_device: BTreeMap<u64, Vec<&OnDisk>> = BTreeMap::new();
    for entry in &present {
        by_device.entry(entry.device).or_default().push(entry);
    }
    for files in by_device.values() {
        let mut total: u64 = files.iter().map(|f| f.bytes).sum();
        for entry in leave.uploads.order(files, |entry| &entry.file) {
            if total <= max_total {
                break;
            }
            if retained.take(catalog, &entry.file, leave, "to keep within max_total_size")? {
                total -= entry.bytes;
            }
        }
    }
    Ok(retained)
}

/// Deletes the oldest finished files of `session` while it has more than `max_files`
/// (the one being written included; its incidents' cut files not counted).
pub fn enforce_ring(
    catalog: &Catalog,
    session: SessionId,
    max_files: u32,
    leave: &Leave,
) -> Result<Retained, CatalogError> {
    let files: Vec<File> = catalog
        .recording_files(session)?
        .into_iter()
        .filter(|f| !matches!(f.state, FileState::Deleted | FileState::Missing))
        .collect();
    let mut excess = files.len().saturating_sub(max_files as usize);
    let mut retained = Retained::default();
    for file in leave.uploads.order(&files, |file| file) {
        if excess == 0 {
            break;
        }
        if retained.take(catalog, file, leave, "of the session's --max-files ring")? {
            excess -= 1;
        }
    }
    Ok(retained)
}

/// Deletes the files of `session` whose newest message is older than `max_age` before
/// `now_ns` (`--max-age`), oldest first.
pub fn enforce_age(
    catalog: &Catalog,
    session: SessionId,
    max_age: Duration,
    now_ns: u64,
    leave: &Leave,
) -> Result<Retained, CatalogError> {
    let before = now_ns.saturating_sub(max_age.as_nanos() as u64);
    let mut retained = Retained::default();
    for file in catalog.files_ended_before(session, before)? {
        retained.take(catalog, &file, leave, "older than the session's --max-age")?;
    }
    Ok(retained)
}
