//! Retention: keeps the recordings on each file system within `max_total_size`, a
//! session within its `--max-files` ring and its `--max-age`, by deleting the oldest
//! finished files ([`policy`] decides which). A pass reads the catalog, looks at the
//! files on disk with no lock held, decides, then deletes through the files' life
//! ([`FileLife::delete`]), which logs each deletion, keeps the catalog, the chain and the
//! seal keys in step, and leaves a file an incident pinned meanwhile. A file the catalog
//! lists that vanished without recd is marked missing.

pub mod policy;

use std::collections::HashSet;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

use recd_catalog::{Catalog, CatalogError, File, SessionId};
use recd_control::FileState;

use crate::files::{Deleted, Deletion, FileLife};
use crate::locks::lock;
use policy::{Decided, Leave, OnDisk};

/// A session's own bounds.
#[derive(Debug, Clone, Copy)]
pub struct SessionBounds {
    /// The session.
    pub id: SessionId,
    /// `--max-files`.
    pub max_files: Option<u32>,
    /// `--max-age`.
    pub max_age: Option<Duration>,
}

/// What one pass keeps to.
#[derive(Debug, Default)]
pub struct Bounds {
    /// `max_total_size`, per file system.
    pub max_total: Option<u64>,
    /// The running sessions' rings and ages.
    pub sessions: Vec<SessionBounds>,
}

impl Bounds {
    /// Whether any bound may delete a file (else a pass only looks for files gone).
    pub fn delete_anything(&self) -> bool {
        self.max_total.is_some()
            || (self.sessions.iter()).any(|s| s.max_files.is_some() || s.max_age.is_some())
    }
}

/// What one pass did.
#[derive(Debug, Default)]
pub struct Retained {
    /// Files deleted.
    pub deleted: Vec<PathBuf>,
    /// Files it would have deleted but kept, as they wait for upload.
    pub kept_for_upload: usize,
}

/// What a pass reads of the catalog.
struct Listed {
    on_disk: Vec<File>,
    rings: Vec<(u32, Vec<File>)>,
    aged: Vec<Vec<File>>,
}

/// One pass over the files `catalog` lists at `now_ns`: those gone from the disk are
/// marked missing, then the oldest go beyond `bounds`, leaving what `leave` says.
pub fn run(
    files: &FileLife,
    catalog: &Mutex<Catalog>,
    bounds: &Bounds,
    leave: &Leave,
    now_ns: u64,
) -> Result<Retained, CatalogError> {
    let listed = list(&lock(catalog), bounds, now_ns)?;
    let on_disk = look_at(files, listed.on_disk);
    let paths: HashSet<&Path> = on_disk.iter().map(|o| o.file.path.as_path()).collect();
    let present = |file: &&File| paths.contains(file.path.as_path());
    let mut decided = Decided::default();
    let being_written = |path: &Path| recd_storage::is_being_recorded(path).unwrap_or(true);
    if let Some(max_total) = bounds.max_total {
        policy::over_total(&mut decided, &on_disk, max_total, leave, &being_written);
    }
    for (max_files, ring) in &listed.rings {
        let ring: Vec<File> = ring.iter().filter(present).cloned().collect();
        policy::over_ring(&mut decided, &ring, *max_files, leave, &being_written);
    }
    for aged in &listed.aged {
        let aged: Vec<File> = aged.iter().filter(present).cloned().collect();
        policy::over_age(&mut decided, &aged, leave, &being_written);
    }
    let mut retained = Retained {
        kept_for_upload: decided.kept_for_upload,
        ..Retained::default()
    };
    for doomed in decided.doomed {
        match files.delete(&doomed.path, Deletion::Retention { why: doomed.why }) {
            Ok(Deleted::Done) => retained.deleted.push(doomed.path),
            // Pinned or claimed meanwhile, or gone: the next pass decides again.
            Ok(_) => {}
            Err(error) => tracing::error!("retention cannot delete the file: {error}"),
        }
    }
    Ok(retained)
}

/// The catalog's files that should be on disk, and each session's ring and aged files.
fn list(catalog: &Catalog, bounds: &Bounds, now_ns: u64) -> Result<Listed, CatalogError> {
    let mut listed = Listed {
        on_disk: catalog.files_on_disk()?,
        rings: Vec::new(),
        aged: Vec::new(),
    };
    for session in &bounds.sessions {
        if let Some(max_files) = session.max_files {
            listed
                .rings
                .push((max_files, catalog.recording_files(session.id)?));
        }
        if let Some(max_age) = session.max_age {
            let before = now_ns.saturating_sub(recd_storage::window::nanos(max_age));
            listed
                .aged
                .push(catalog.files_ended_before(session.id, before)?);
        }
    }
    Ok(listed)
}

/// The `listed` files as they are on disk now; those gone are marked missing. No lock is
/// held while they are looked at.
fn look_at(files: &FileLife, listed: Vec<File>) -> Vec<OnDisk> {
    let mut present = Vec::new();
    for file in listed {
        match std::fs::metadata(&file.path) {
            Ok(metadata) => present.push(OnDisk {
                bytes: metadata.len(),
                device: metadata.dev(),
                file,
            }),
            // A file being recorded is known to the catalog just before its writer makes
            // it (and its key kept): not there yet is not gone. Its stop report says if it
            // went meanwhile.
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
                if file.state != FileState::Recording {
                    files.found_missing(&file.path);
                }
            }
            // Unreadable for now (permissions, an unmounted disk): left alone.
            Err(_) => {}
        }
    }
    present
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use recd_storage::SealKeys;

    use super::*;

    #[test]
    fn a_file_the_catalog_knows_before_its_writer_makes_it_is_not_missing() {
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path().join("data");
        let catalog = Catalog::open(dir.path(), &data).unwrap();
        let session = catalog.begin_session("drive", &data, "{}", 0).unwrap();
        let catalog = Arc::new(Mutex::new(catalog));
        let files = FileLife::new(
            catalog.clone(),
            None,
            Some(SealKeys::default()),
            None,
            false,
        );
        let (recording, closed) = (data.join("drive_0001.mcap"), data.join("drive_0000.mcap"));
        // The catalog learns of a file just before its writer makes it (a power cut then
        // cannot hide it): a pass between the two finds no file yet.
        files.created(session, &recording);
        let listed = lock(&catalog).files_on_disk().unwrap();
        assert!(look_at(&files, listed).is_empty());
        let state = |path: &Path| lock(&catalog).file(path).unwrap().unwrap().state;
        assert_eq!(state(&recording), FileState::Recording);
        // A closed file that is gone is missing.
        files.created(session, &closed);
        lock(&catalog)
            .upsert_file(&File {
                session,
                path: closed.clone(),
                bytes: 1,
                messages: 1,
                state: FileState::Complete,
            })
            .unwrap();
        let listed = lock(&catalog).files_on_disk().unwrap();
        assert!(look_at(&files, listed).is_empty());
        assert_eq!(state(&closed), FileState::Missing);
        assert_eq!(state(&recording), FileState::Recording);
    }
}
