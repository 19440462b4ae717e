//! Finishing one file: reindex it beside itself, verify the copy, and put the copy in its
//! place through the files' life, which does so only if the catalog still has the file
//! as it was (retention may have deleted it meanwhile) and keeps everything depending on
//! the file in step.

use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;

use recd_catalog::File;
use recd_control::FinishMode;
use recd_seal::SealKey;
use recd_storage::{Compression, InfoError, ReindexError, ReindexOptions, Sealing};

use crate::files::{FileLife, ReplaceError, Replaced};

/// How finishing a file ended.
#[derive(Debug)]
pub enum Outcome {
    /// Indexed in place: it holds `bytes` now.
    Indexed { bytes: u64 },
    /// The file changed under finishing (deleted, reindexed by hand): nothing was done.
    Gone,
    /// recd is stopping: the file is untouched and still waits.
    Interrupted,
    /// It cannot be finished: it stays as recorded.
    Failed(FinishError),
}

/// Why a file cannot be finished; it stays as recorded.
#[derive(Debug, thiserror::Error)]
pub enum FinishError {
    /// A sealed file whose key recd no longer holds.
    #[error("sealed, and recd no longer holds its key (it was written before recd restarted): it stays as written, and `rec decrypt -i IDENTITY` finishes it off the vehicle")]
    NoKey,
    /// The reindex met damage and would lose records.
    #[error("the file is damaged; it stays as recorded (rec reindex says more)")]
    Damaged,
    /// The copy holds another number of messages than the recording.
    #[error("the indexed copy holds {copy} messages, the recording {recorded}")]
    Messages {
        /// Messages of the copy.
        copy: u64,
        /// Messages of the recording.
        recorded: u64,
    },
    /// The copy does not read back.
    #[error("the indexed copy does not read back: {0}")]
    Unreadable(#[from] InfoError),
    /// The copy reads back, but not closed and indexed with every message.
    #[error("the indexed copy reads back with {messages} messages, indexed: {indexed}")]
    ReadsBack {
        /// Messages it reads back with.
        messages: u64,
        /// Whether it reads back indexed.
        indexed: bool,
    },
    /// The reindex failed.
    #[error(transparent)]
    Reindex(#[from] ReindexError),
    /// The copy could not take the file's place.
    #[error(transparent)]
    Replace(#[from] ReplaceError),
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
    files: &FileLife,
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
        Err(error) => return Outcome::Failed(error.into()),
    };
    if let Err(why) = verify(&staged, sealing, &report, file.messages) {
        files.discard_staged(&staged);
        return Outcome::Failed(why);
    }
    match files.replace_finished(file, &staged, (report.output_bytes, report.messages)) {
        Ok(Replaced::Indexed { bytes }) => Outcome::Indexed { bytes },
        Ok(Replaced::Gone) => Outcome::Gone,
        Err(error) => Outcome::Failed(error.into()),
    }
}

/// For a sealed file, its key and the sealing of the copy; an error when recd no longer
/// holds the key (the file was written before a restart).
fn sealed_finish<'s>(
    path: &Path,
    sealing: Option<&'s Sealing>,
) -> Result<Option<(SealKey, &'s Sealing)>, FinishError> {
    if !recd_storage::is_sealed(path) {
        return Ok(None);
    }
    let sealing = sealing.ok_or(FinishError::NoKey)?;
    let key = sealing.keys.get(path).ok_or(FinishError::NoKey)?;
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
) -> Result<(), FinishError> {
    if !report.lost_nothing() {
        return Err(FinishError::Damaged);
    }
    if report.messages != recorded {
        return Err(FinishError::Messages {
            copy: report.messages,
            recorded,
        });
    }
    let info = match sealing.and_then(|sealing| sealing.keys.get(staged)) {
        Some(key) => recd_storage::summarize_sealed(staged, &key),
        None => recd_storage::summarize(staged),
    }?;
    if !info.closed_cleanly || !info.indexed || info.message_count != recorded {
        return Err(FinishError::ReadsBack {
            messages: info.message_count,
            indexed: info.indexed,
        });
    }
    Ok(())
}

/// Threads that compress a file being finished (or an incident's cut): half the cores
/// (on 2 cores, the reading thread alone), so that background work never takes the whole
/// machine from the recordings beside it, even at its low priority.
pub fn compression_threads() -> u32 {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    (cores / 2).max(1) as u32
}
