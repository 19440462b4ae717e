//! At start-up: the catalog is reconciled with the data directory after a crash or a power
//! cut (files left open need reindexing, files the catalog never heard of are adopted,
//! files gone are marked missing), and interrupted files are optionally reindexed in the
//! background.

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::time::UNIX_EPOCH;

use recd_catalog::{Catalog, CatalogError, File};
use recd_control::FileState;
use recd_storage::{reindex, ReindexOptions};

/// What the log says of a sealed file the last run left open.
const SEALED_LEFT_OPEN: &str = "left open by the last run, and sealed: its key went with the last run, so it stays as written (its whole chunks are authentic); `rec upload` sends it like that, and `rec decrypt --recover` finishes it off the vehicle";

/// Marks what the last run left open, gives interrupted files their real size and adopts
/// every `.mcap` (and sealed `.mcap.age`) file under `data_dir/<session>/` the catalog does not know; returns the
/// files that need reindexing.
pub fn reconcile(catalog: &mut Catalog, data_dir: &Path) -> Result<Vec<File>, CatalogError> {
    let mut interrupted = catalog.recover_after_crash()?;
    for file in &mut interrupted {
        if let Ok(metadata) = std::fs::metadata(&file.path) {
            file.bytes = metadata.len();
            catalog.upsert_file(file)?;
        }
        if recd_storage::is_sealed(&file.path) {
            tracing::warn!(file = %file.path.display(), "{SEALED_LEFT_OPEN}");
        } else {
            tracing::warn!(
                file = %file.path.display(),
                "left open by the last run: needs reindexing (`rec reindex` or reindex_after_crash)"
            );
        }
    }
    for (session_name, path) in recordings_on_disk(data_dir) {
        if catalog.file(&path)?.is_some() {
            continue;
        }
        let file = adopt(catalog, &session_name, path)?;
        tracing::warn!(
            file = %file.path.display(),
            session = %session_name,
            "found a recording the catalog did not know (lost to a crash or power cut): adopted as needs-reindex"
        );
        interrupted.push(file);
    }
    Ok(interrupted)
}

/// Puts `path` in the catalog as needing reindex, under the newest session named
/// `session_name` (created, as interrupted, if the catalog has none).
fn adopt(catalog: &Catalog, session_name: &str, path: PathBuf) -> Result<File, CatalogError> {
    let metadata = std::fs::metadata(&path).ok();
    let session = match catalog.session_by_name(session_name)? {
        Some(session) => session.id,
        None => {
            let modified_ns = metadata
                .as_ref()
                .and_then(|m| m.modified().ok())
                .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
                .map_or(0, |d| d.as_nanos() as i64);
            let directory = path.parent().unwrap_or(Path::new("/"));
            catalog.adopt_session(session_name, directory, modified_ns)?
        }
    };
    let file = File {
        session,
        bytes: metadata.map_or(0, |m| m.len()),
        path,
        messages: 0,
        state: FileState::NeedsReindex,
    };
    catalog.upsert_file(&file)?;
    Ok(file)
}

/// Every `<data_dir>/<session>/<file>.mcap` (hidden files, such as a reindex in progress,
/// left out), with its session's name, sorted.
fn recordings_on_disk(data_dir: &Path) -> Vec<(String, PathBuf)> {
    let mut found = Vec::new();
    for session in read_dir_sorted(data_dir) {
        let Some(name) = session
            .file_name()
            .and_then(|n| n.to_str())
            .map(String::from)
        else {
            continue;
        };
        // Incidents' cut files are the cutter's: one it did not record is cut again.
        if name.starts_with('.') || name == recd_chain::INCIDENTS_DIR || !session.is_dir() {
            continue;
        }
        for path in read_dir_sorted(&session) {
            let is_recording = path.file_name().and_then(|n| n.to_str()).is_some_and(|n| {
                (n.ends_with(".mcap") || n.ends_with(".mcap.age")) && !n.starts_with('.')
            });
            if is_recording && path.is_file() {
                found.push((name.clone(), path));
            }
        }
    }
    found
}

fn read_dir_sorted(dir: &Path) -> Vec<PathBuf> {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|entries| entries.filter_map(Result::ok).map(|e| e.path()).collect())
        .unwrap_or_default();
    paths.sort();
    paths
}

/// Reindexes each file in place, one after the other, on a thread of its own, and marks
/// it indexed in the catalog at `state_dir` (of the recordings under `data_dir`).
pub fn reindex_in_background(state_dir: PathBuf, data_dir: PathBuf, files: Vec<File>) {
    if files.is_empty() {
        return;
    }
    let spawned = std::thread::Builder::new()
        .name("recd-reindex".into())
        .spawn(move || {
            let catalog = match Catalog::open(&state_dir, &data_dir) {
                Ok(catalog) => catalog,
                Err(error) => {
                    tracing::error!("background reindex cannot open the catalog: {error}");
                    return;
                }
            };
            for file in files {
                if recd_storage::is_sealed(&file.path) {
                    continue;
                }
                // A file that makes the reader panic is logged and left as it is; the
                // next file is reindexed all the same and recd records on.
                let reindexed = std::panic::catch_unwind(|| reindex_in_place(&file.path))
                    .unwrap_or_else(|panic| Err(format!("the reader failed: {}", panic_text(&panic))));
                match reindexed {
                    Ok((bytes, messages, damaged_at)) => {
                        tracing::info!(file = %file.path.display(), messages, "reindexed after a crash");
                        if let Err(error) = catalog.mark_indexed(&file.path, bytes, messages) {
                            tracing::error!("cannot mark {} indexed: {error}", file.path.display());
                        }
                        if let Some(offset) = damaged_at {
                            if let Err(error) = catalog.set_damaged_at(&file.path, offset) {
                                tracing::error!("cannot mark {} damaged: {error}", file.path.display());
                            }
                        }
                    }
                    Err(error) => {
                        tracing::error!(file = %file.path.display(), "background reindex failed, the file stays needs-reindex: {error}")
                    }
                }
            }
        });
    if let Err(error) = spawned {
        tracing::error!("cannot start the background reindex: {error}");
    }
}

/// Reindexes `path` in place (the storage crate writes beside it and renames the result
/// into place only once complete): its bytes, messages and, where it was damaged, the
/// offset at which readable records ended.
fn reindex_in_place(path: &Path) -> Result<(u64, u64, Option<u64>), String> {
    let report = reindex(
        path,
        path,
        &ReindexOptions::default(),
        &mut |_, _| {},
        &AtomicBool::new(false),
    )
    .map_err(|e| e.to_string())?;
    if let Some(damage) = &report.damage {
        tracing::warn!(
            file = %path.display(),
            "damaged at byte {}: {}; kept the {} messages before it, {} bytes after it are gone",
            damage.offset,
            damage.reason,
            report.messages,
            report.unusable_bytes
        );
    }
    Ok((
        report.output_bytes,
        report.messages,
        report.damage.map(|damage| damage.offset),
    ))
}

/// What a caught panic said.
pub fn panic_text(panic: &Box<dyn std::any::Any + Send>) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|text| text.to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic".into())
}
