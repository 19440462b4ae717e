//! Finishing one file: reindex it beside itself, verify the copy, and put the copy in its
//! place only if the catalog still has the file as it was (retention may have deleted
//! it meanwhile; the catalog's lock makes the check and the swap one step).

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};

use recd_catalog::{Catalog, File};
use recd_control::{FileState, FinishMode};
use recd_seal::SealKey;
use recd_storage::{Compression, ReindexError, ReindexOptions, Sealing};

/// How finishing a file ended.
#[derive(Debug)]
pub enum Outcome {
    /// Indexed in place: it holds `bytes` now.
    Indexed { bytes: u64 },
    /// The file changed under finishing (deleted, reindexed by hand): nothing was done.
    Gone,
    /// recd is stopping: the file is untouched and still waits.
    Interrupted,
    /// It cannot be finished (damage, a failed write): it stays as recorded.
    Failed(String),
}

/// Where the finished copy of `path` is written before it replaces it; a dot file, so
/// that neither a session nor `rec` takes it for a recording.
pub fn staging_path(path: &Path) -> PathBuf {
    let name = path
        .file_name()
        .map_or_else(|| "file".into(), |name| name.to_string_lossy().into_owned());
    path.with_file_name(format!(".{name}.finishing"))
}

/// Removes what a finishing that recd did not end (killed, power cut) left beside `path`:
/// the staged copy and the reindexer's temporary file.
pub fn remove_leftovers(path: &Path) {
    let staged = staging_path(path);
    let (Some(dir), Some(staged_name)) = (path.parent(), staged.file_name()) else {
        return;
    };
    let staged_name = staged_name.to_string_lossy().into_owned();
    let temporary_prefix = format!(".{staged_name}.");
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.filter_map(Result::ok) {
        let name = entry.file_name().to_string_lossy().into_owned();
        if name == staged_name || name.starts_with(&temporary_prefix) {
            match std::fs::remove_file(entry.path()) {
                Ok(()) => {
                    tracing::info!(file = %entry.path().display(), "removed what an interrupted finishing left")
                }
                Err(error) => {
                    tracing::warn!(file = %entry.path().display(), "cannot remove what an interrupted finishing left: {error}")
                }
            }
        }
    }
}

/// Finishes `file` with `mode`; `progress` is called as reading goes on and may block
/// (to pause), `stop` ends it early. A sealed file is read with the key `sealing` kept
/// for it and its copy sealed under a fresh one.
pub fn finish(
    catalog: &Arc<Mutex<Catalog>>,
    file: &File,
    mode: FinishMode,
    sealing: Option<&Sealing>,
    progress: &mut dyn FnMut(u64, u64),
    stop: &AtomicBool,
) -> Outcome {
    let staged = staging_path(&file.path);
    let options = ReindexOptions {
        compression: compression_of(mode),
        threads: compression_threads(),
        ..ReindexOptions::default()
    };
    let sealed = match sealed_finish(&file.path, sealing) {
        Ok(sealed) => sealed,
        Err(why) => return Outcome::Failed(why),
    };
    let reindexed = match &sealed {
        Some((key, sealing)) => recd_storage::reindex_sealed(
            &file.path, key, &staged, sealing, &options, progress, stop,
        ),
        None => recd_storage::reindex(&file.path, &staged, &options, progress, stop),
    };
    let sealing = sealed.map(|(_, sealing)| sealing);
    let report = match reindexed {
        Ok(report) => report,
        Err(ReindexError::Interrupted { .. }) => return Outcome::Interrupted,
        Err(ReindexError::Read { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {
            return Outcome::Gone
        }
        Err(error) => return Outcome::Failed(error.to_string()),
    };
    let outcome = match verify(&staged, sealing, &report, file.messages) {
        Ok(()) => swap_in(catalog, file, &staged, report.output_bytes, report.messages),
        Err(why) => {
            let _ = std::fs::remove_file(&staged);
            Outcome::Failed(why)
        }
    };
    // The copy's key follows it into place, or goes with it.
    if let Some(sealing) = sealing {
        match outcome {
            Outcome::Indexed { .. } => sealing.keys.rename(&staged, &file.path),
            _ => sealing.keys.forget(&staged),
        }
    }
    outcome
}

/// For a sealed file, its key and the sealing of the copy; an error when recd no longer
/// holds the key (the file was written before a restart).
fn sealed_finish<'s>(
    path: &Path,
    sealing: Option<&'s Sealing>,
) -> Result<Option<(SealKey, &'s Sealing)>, String> {
    if !recd_storage::is_sealed(path) {
        return Ok(None);
    }
    let no_key = "sealed, and recd no longer holds its key (it was written before recd restarted): it stays as written, and `rec decrypt -i IDENTITY` finishes it off the vehicle";
    let sealing = sealing.ok_or(no_key)?;
    let key = sealing.keys.get(path).ok_or(no_key)?;
    Ok(Some((key, sealing)))
}

/// The chunk compression `mode` asks of a finished file (and of an incident's cut files).
pub fn compression_of(mode: FinishMode) -> Compression {
    match mode {
        FinishMode::Zstd => Compression::Zstd,
        FinishMode::Lz4 => Compression::Lz4,
        FinishMode::None | FinishMode::Index => Compression::None,
    }
}

/// The staged copy holds every message of the original and reads back indexed.
fn verify(
    staged: &Path,
    sealing: Option<&Sealing>,
    report: &recd_storage::ReindexReport,
    recorded: u64,
) -> Result<(), String> {
    if !report.lost_nothing() {
        return Err("the file is damaged; it stays as recorded (rec reindex says more)".into());
    }
    if report.messages != recorded {
        return Err(format!(
            "the indexed copy holds {} messages, the recording {recorded}",
            report.messages
        ));
    }
    let info = match sealing.and_then(|sealing| sealing.keys.get(staged)) {
        Some(key) => recd_storage::summarize_sealed(staged, &key),
        None => recd_storage::summarize(staged),
    }
    .map_err(|e| format!("the indexed copy does not read back: {e}"))?;
    if !info.closed_cleanly || !info.indexed || info.message_count != recorded {
        return Err(format!(
            "the indexed copy reads back with {} messages, indexed: {}",
            info.message_count, info.indexed
        ));
    }
    Ok(())
}

/// Puts `staged` in the place of `file` if the catalog still has it complete.
fn swap_in(
    catalog: &Arc<Mutex<Catalog>>,
    file: &File,
    staged: &Path,
    bytes: u64,
    messages: u64,
) -> Outcome {
    let catalog = catalog.lock().expect("catalog lock");
    let unchanged = matches!(catalog.file(&file.path), Ok(Some(now)) if now.state == FileState::Complete)
        && file.path.exists();
    if !unchanged {
        let _ = std::fs::remove_file(staged);
        return Outcome::Gone;
    }
    if let Err(error) = std::fs::rename(staged, &file.path) {
        let _ = std::fs::remove_file(staged);
        return Outcome::Failed(format!("cannot put the indexed copy in place: {error}"));
    }
    if let Some(dir) = file.path.parent() {
        // The rename is durable before the catalog says indexed.
        let _ = std::fs::File::open(dir).and_then(|dir| dir.sync_all());
    }
    match catalog.record_indexed_in_place(&file.path, bytes, messages) {
        Ok(()) => Outcome::Indexed { bytes },
        Err(error) => Outcome::Failed(format!(
            "indexed in place, but the catalog could not record it: {error}"
        )),
    }
}

/// Threads that compress a file being finished (or an incident's cut): half the cores
/// (on 2 cores, the reading thread alone), so that background work never takes the whole
/// machine from the recordings beside it, even at its low priority.
pub fn compression_threads() -> u32 {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    (cores / 2).max(1) as u32
}
