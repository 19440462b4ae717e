//! After a crash: files the last run left open are marked needs-reindex, and optionally
//! reindexed in the background.

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

use recd_catalog::{Catalog, CatalogError, File, Session};
use recd_control::{FileState, SessionState};
use recd_storage::{reindex, ReindexOptions};

/// Marks what a crashed run left open, including files it created but had not yet put
/// in the catalog; returns the files that need reindexing.
pub fn mark_interrupted(catalog: &mut Catalog) -> Result<Vec<File>, CatalogError> {
    let interrupted: Vec<Session> = catalog
        .sessions()?
        .into_iter()
        .filter(|s| s.state == SessionState::Recording)
        .collect();
    let mut files = catalog.recover_after_crash()?;
    for session in &interrupted {
        for path in session_files_on_disk(session) {
            if catalog.file(&path)?.is_none() {
                let file = File {
                    session: session.id,
                    bytes: std::fs::metadata(&path).map_or(0, |m| m.len()),
                    path,
                    messages: 0,
                    state: FileState::NeedsReindex,
                };
                catalog.upsert_file(&file)?;
                files.push(file);
            }
        }
    }
    for file in &files {
        tracing::warn!(
            file = %file.path.display(),
            "left open by the last run: needs reindexing (`rec reindex` or reindex_after_crash)"
        );
    }
    Ok(files)
}

/// The files a session wrote, by its directory and file prefix (`<prefix>_NNNN.mcap`).
fn session_files_on_disk(session: &Session) -> Vec<PathBuf> {
    let Ok(config) = serde_json::from_str::<recd_engine::RecordingConfig>(&session.config) else {
        return Vec::new();
    };
    let prefix = format!("{}_", config.file_prefix);
    let Ok(entries) = std::fs::read_dir(&session.directory) else {
        return Vec::new();
    };
    let mut paths: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| {
            path.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with(&prefix) && n.ends_with(".mcap"))
        })
        .collect();
    paths.sort();
    paths
}

/// Reindexes each file in place, one after the other, on a thread of its own, and marks
/// it complete in the catalog at `state_dir`.
pub fn reindex_in_background(state_dir: PathBuf, files: Vec<File>) {
    if files.is_empty() {
        return;
    }
    let spawned = std::thread::Builder::new()
        .name("recd-reindex".into())
        .spawn(move || {
            let catalog = match Catalog::open(&state_dir) {
                Ok(catalog) => catalog,
                Err(error) => {
                    tracing::error!("background reindex cannot open the catalog: {error}");
                    return;
                }
            };
            for file in files {
                match reindex_in_place(&file.path) {
                    Ok((bytes, messages)) => {
                        tracing::info!(file = %file.path.display(), messages, "reindexed after a crash");
                        let done = File {
                            bytes,
                            messages,
                            state: FileState::Complete,
                            ..file
                        };
                        if let Err(error) = catalog.upsert_file(&done) {
                            tracing::error!("cannot mark {} complete: {error}", done.path.display());
                        }
                    }
                    Err(error) => {
                        tracing::error!(file = %file.path.display(), "background reindex failed: {error}")
                    }
                }
            }
        });
    if let Err(error) = spawned {
        tracing::error!("cannot start the background reindex: {error}");
    }
}

/// Reindexes `path` in place (the storage crate writes beside it and renames the result
/// into place only once complete).
fn reindex_in_place(path: &Path) -> Result<(u64, u64), String> {
    let report = reindex(
        path,
        path,
        &ReindexOptions::default(),
        &mut |_, _| {},
        &AtomicBool::new(false),
    )
    .map_err(|e| e.to_string())?;
    Ok((report.output_bytes, report.messages))
}
