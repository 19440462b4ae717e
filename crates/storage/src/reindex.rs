//! Turns an unchunked, crash-truncated or already indexed MCAP file into a chunked, fully
//! indexed one (`rec reindex`).
//!
//! The output is written to a temporary file beside its destination, synced, and renamed
//! into place only once complete, so the input is never modified before that, and an
//! interrupted run leaves no stray file.

use std::fs::File;
use std::io::{self, BufWriter};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use mcap::records::Record;

use crate::checkpoints::CHECKPOINTS;
use crate::chunked::{ChunkOptions, ChunkedWriter};
use crate::compression::Compression;
use crate::copy_output::CopyOutput;
use crate::definitions::DefinitionFill;
use crate::direct_read;
use crate::recover::{self, Damage, RecordSink, RecoverError};
use crate::sealing::Sealing;
use recd_seal::{SealKey, SealedReader};

/// Settings of [`reindex`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReindexOptions {
    /// Chunk compression.
    pub compression: Compression,
    /// The compressor's level; 0 is its default (zstd 3, lz4's fast mode).
    pub level: u32,
    /// Target uncompressed size of a chunk in bytes.
    pub chunk_size: u64,
    /// Threads that compress chunks, each its own chunk; 0 means one per core, 1 compresses
    /// on the reading thread.
    pub threads: u32,
    /// Where to find `.msg` files for ROS 2 schemas recorded without a definition; `None`
    /// keeps every schema as it is.
    pub message_definitions: Option<recd_ros2::msgdef::MessageDefinitions>,
}

impl Default for ReindexOptions {
    fn default() -> Self {
        Self {
            compression: Compression::None,
            level: 0,
            chunk_size: 4 << 20,
            threads: 0,
            message_definitions: None,
        }
    }
}

/// What a reindex recovered.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct ReindexReport {
    /// The file written.
    pub output: PathBuf,
    /// Size of the input in bytes.
    pub input_bytes: u64,
    /// Size of the output in bytes.
    pub output_bytes: u64,
    /// Messages recovered into the output.
    pub messages: u64,
    /// The input had been closed (its data section ended with DataEnd).
    pub input_was_closed: bool,
    /// Where the input's records ended early, if they did.
    pub damage: Option<Damage>,
    /// Bytes at the end of the input that held no complete record.
    pub unusable_bytes: u64,
    /// The input's data-section CRC did not match: some record was altered in place and
    /// was kept as found.
    pub crc_mismatch: bool,
    /// Private records (opcode ≥ 0x80) left out of the output.
    pub skipped_private_records: u64,
    /// ROS 2 types whose empty schemas got their definition from `.msg` files.
    pub definitions_added: Vec<String>,
    /// ROS 2 types still without a definition, each with the reason (no `.msg` file…).
    pub definitions_missing: Vec<String>,
}

impl ReindexReport {
    /// True when the output holds everything the input held.
    pub fn lost_nothing(&self) -> bool {
        self.damage.is_none() && !self.crc_mismatch
    }
}

/// Why a reindex failed; the input is untouched and no output was left behind.
#[derive(Debug, thiserror::Error)]
pub enum ReindexError {
    /// The input could not be opened or read.
    #[error("cannot read {}: {source}", path.display())]
    Read {
        /// The input.
        path: PathBuf,
        /// Why.
        source: io::Error,
    },
    /// A recorder is still writing the input (it holds the file's lock).
    #[error("{} is still being recorded; stop its recording first (rec stop SESSION), then reindex it", path.display())]
    BeingRecorded {
        /// The input.
        path: PathBuf,
    },
    /// The input is a directory.
    #[error("{} is a directory, not an MCAP file", path.display())]
    IsDirectory {
        /// The input.
        path: PathBuf,
    },
    /// The input does not start with the MCAP magic.
    #[error("{} is not an MCAP file ({})", path.display(), if *empty { "it is empty" } else { "it does not start with the MCAP magic" })]
    NotMcap {
        /// The file has no bytes at all.
        empty: bool,
        /// The input.
        path: PathBuf,
    },
    /// The output could not be created, written or moved into place.
    #[error("cannot write {}: {source}", path.display())]
    Write {
        /// The output, or its directory.
        path: PathBuf,
        /// Why.
        source: io::Error,
    },
    /// The MCAP encoder refused the data.
    #[error("cannot encode {}: {source}", path.display())]
    Encode {
        /// The output.
        path: PathBuf,
        /// Why.
        source: mcap::McapError,
    },
    /// `cancel` was set.
    #[error("interrupted; {} is untouched and no output was written", input.display())]
    Interrupted {
        /// The input.
        input: PathBuf,
    },
}

/// Reindexes `input` into `output` (which may be `input` itself, replaced only once the
/// result is complete). `progress` hears (bytes read, input size); setting `cancel` stops
/// the run, removing its partial output.
pub fn reindex(
    input: &Path,
    output: &Path,
    options: &ReindexOptions,
    progress: &mut dyn FnMut(u64, u64),
    cancel: &AtomicBool,
) -> Result<ReindexReport, ReindexError> {
    reindex_with(input, output, None, options, progress, cancel)
}

/// [`reindex`] of a sealed file (`….mcap.age`), read with the key its writer kept, into a
/// file sealed to `sealing`'s recipients under a fresh key (kept in `sealing.keys` under
/// `output`): no plaintext byte reaches the disk. A chunk that fails authentication, or a
/// file cut short, fails the reindex.
pub fn reindex_sealed(
    input: &Path,
    key: &SealKey,
    output: &Path,
    sealing: &Sealing,
    options: &ReindexOptions,
    progress: &mut dyn FnMut(u64, u64),
    cancel: &AtomicBool,
) -> Result<ReindexReport, ReindexError> {
    let sealed = SealedCopy { key, sealing };
    reindex_with(input, output, Some(sealed), options, progress, cancel)
}

/// How a sealed input is read and its copy sealed.
struct SealedCopy<'a> {
    key: &'a SealKey,
    sealing: &'a Sealing,
}

/// What reading the input into the chunked writer found.
struct Pass {
    messages: u64,
    recovery: recover::Recovery,
    definitions_added: Vec<String>,
    definitions_missing: Vec<String>,
}

fn reindex_with(
    input: &Path,
    output: &Path,
    sealed: Option<SealedCopy<'_>>,
    options: &ReindexOptions,
    progress: &mut dyn FnMut(u64, u64),
    cancel: &AtomicBool,
) -> Result<ReindexReport, ReindexError> {
    let read_error = |source| ReindexError::Read {
        path: input.to_path_buf(),
        source,
    };
    let source = File::open(input).map_err(read_error)?;
    // Held until the reindex ends, so that the file cannot be recorded into meanwhile.
    if !crate::lock::lock_for_reading(&source).map_err(read_error)? {
        return Err(ReindexError::BeingRecorded {
            path: input.to_path_buf(),
        });
    }
    let metadata = source.metadata().map_err(read_error)?;
    if metadata.is_dir() {
        return Err(ReindexError::IsDirectory {
            path: input.to_path_buf(),
        });
    }
    let input_bytes = metadata.len();

    let directory = match output.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let file_name = output.file_name().map_or_else(
        || "output".into(),
        |name| name.to_string_lossy().into_owned(),
    );
    let mut temporary = tempfile::Builder::new()
        .prefix(&format!(".{file_name}."))
        .suffix(".reindex")
        .tempfile_in(&directory)
        .map_err(|source| ReindexError::Write {
            path: directory.clone(),
            source,
        })?;
    // The result takes the input's permissions, not the temporary file's private ones.
    temporary
        .as_file()
        .set_permissions(metadata.permissions())
        .map_err(|source| ReindexError::Write {
            path: temporary.path().to_path_buf(),
            source,
        })?;

    let write_error = |source| ReindexError::Write {
        path: output.to_path_buf(),
        source,
    };
    // A sealed file is read through the key its writer kept.
    let (reading, reading_len): (Box<dyn io::Read + '_>, u64) = match &sealed {
        // Read past the page cache where the file system allows: what finishing reads is
        // on the disk only (the recording wrote it so), and reading it through the cache
        // costs a recording beside it (see crate::direct_read).
        None => (direct_read::past_the_cache(&source), input_bytes),
        Some(sealed) => {
            let reader = SealedReader::open_with_key(&source, sealed.key)
                .map_err(|e| read_error(io::Error::other(e)))?;
            let plaintext_len = reader.plaintext_len();
            (Box::new(reader), plaintext_len)
        }
    };
    let (out, kept_key) =
        CopyOutput::new(temporary.as_file_mut(), sealed.as_ref().map(|s| s.sealing))
            .map_err(|e| write_error(io::Error::other(e)))?;
    let out = BufWriter::with_capacity(1 << 20, out);
    let (pass, out) = pass(
        reading,
        reading_len,
        out,
        options,
        progress,
        cancel,
        input,
        output,
    )?;
    out.into_inner()
        .map_err(|e| write_error(e.into_error()))?
        .finish()
        .map_err(write_error)?;

    temporary.as_file().sync_all().map_err(write_error)?;
    let output_bytes = temporary.as_file().metadata().map_err(write_error)?.len();
    if cancel.load(Ordering::Relaxed) {
        return Err(ReindexError::Interrupted {
            input: input.to_path_buf(),
        });
    }
    temporary
        .persist(output)
        .map_err(|e| write_error(e.error))?;
    if let (Some(sealed), Some(key)) = (&sealed, kept_key) {
        sealed.sealing.keys.insert(output, key);
    }
    // Make the rename itself durable.
    File::open(&directory)
        .and_then(|dir| dir.sync_all())
        .map_err(|source| ReindexError::Write {
            path: directory,
            source,
        })?;

    Ok(ReindexReport {
        output: output.to_path_buf(),
        input_bytes,
        output_bytes,
        messages: pass.messages,
        input_was_closed: pass.recovery.data_end_reached,
        damage: pass.recovery.damage,
        unusable_bytes: pass.recovery.unusable_bytes,
        crc_mismatch: pass.recovery.crc_mismatch,
        skipped_private_records: pass.recovery.skipped_private_records,
        definitions_added: pass.definitions_added,
        definitions_missing: pass.definitions_missing,
    })
}

/// Reads `source` (`input_bytes` long) into a chunked writer on `out`, ends the output and
/// flushes it; gives `out` back.
#[allow(clippy::too_many_arguments)]
fn pass<R: io::Read, W: io::Write>(
    source: R,
    input_bytes: u64,
    out: W,
    options: &ReindexOptions,
    progress: &mut dyn FnMut(u64, u64),
    cancel: &AtomicBool,
    input: &Path,
    output: &Path,
) -> Result<(Pass, W), ReindexError> {
    let mut sink = ChunkedSink::new(options, out, progress, cancel, input_bytes);
    let recovery = recover::recover(source, input_bytes, &mut sink)
        .map_err(|error| failed(error, input, output, input_bytes == 0))?;
    let messages = sink.messages;
    let definitions_added = sink.definitions.added();
    let definitions_missing = sink.definitions.missing();
    sink.progress_to_end();
    let out = sink
        .finish()
        .and_then(|mut written| {
            io::Write::flush(&mut written)?;
            Ok(written)
        })
        .map_err(|e| encode_error(output, e))?;
    let pass = Pass {
        messages,
        recovery,
        definitions_added,
        definitions_missing,
    };
    Ok((pass, out))
}

/// What [`reindex`] writes for the file `input` held in memory, written into memory: the
/// same records, chunks and summary, with no file, lock or sync. For the fuzz target
/// that runs the reindexer millions of times; errors name the input `<memory>`.
pub fn reindex_in_memory(
    input: &[u8],
    options: &ReindexOptions,
) -> Result<(Vec<u8>, u64), ReindexError> {
    let path = Path::new("<memory>");
    let cancel = AtomicBool::new(false);
    let mut progress = |_, _| {};
    let input_bytes = input.len() as u64;
    let mut sink = ChunkedSink::new(options, Vec::new(), &mut progress, &cancel, input_bytes);
    recover::recover_in_memory(input, &mut sink)
        .map_err(|error| failed(error, path, path, input.is_empty()))?;
    let messages = sink.messages;
    let output = sink.finish().map_err(|e| encode_error(path, e))?;
    Ok((output, messages))
}

/// The reindex error of a recovery pass over `input` (`empty`: it has no bytes) that
/// failed, writing into `output`.
fn failed(error: RecoverError<Stop>, input: &Path, output: &Path, empty: bool) -> ReindexError {
    match error {
        RecoverError::NotMcap => ReindexError::NotMcap {
            empty,
            path: input.to_path_buf(),
        },
        RecoverError::Read(source) => ReindexError::Read {
            path: input.to_path_buf(),
            source,
        },
        RecoverError::Sink(Stop::Cancelled) => ReindexError::Interrupted {
            input: input.to_path_buf(),
        },
        RecoverError::Sink(Stop::Encode(source)) => encode_error(output, source),
    }
}

fn encode_error(path: &Path, source: mcap::McapError) -> ReindexError {
    match source {
        mcap::McapError::Io(source) => ReindexError::Write {
            path: path.to_path_buf(),
            source,
        },
        source => ReindexError::Encode {
            path: path.to_path_buf(),
            source,
        },
    }
}

/// Why the sink stopped a recovery pass.
enum Stop {
    Cancelled,
    Encode(mcap::McapError),
}

/// Feeds recovered records into the chunked writer, created once the input's Header (or
/// the first record after a missing one) is known, writing into `W` (the output file, or
/// memory).
struct ChunkedSink<'a, W: io::Write> {
    options: &'a ReindexOptions,
    /// The output, until the writer takes it.
    target: Option<W>,
    writer: Option<ChunkedWriter<W>>,
    definitions: DefinitionFill<'a>,
    messages: u64,
    progress: &'a mut dyn FnMut(u64, u64),
    cancel: &'a AtomicBool,
    input_bytes: u64,
}

impl<'a, W: io::Write> ChunkedSink<'a, W> {
    fn new(
        options: &'a ReindexOptions,
        output: W,
        progress: &'a mut dyn FnMut(u64, u64),
        cancel: &'a AtomicBool,
        input_bytes: u64,
    ) -> Self {
        Self {
            options,
            target: Some(output),
            writer: None,
            definitions: DefinitionFill::new(options.message_definitions.as_ref()),
            messages: 0,
            progress,
            cancel,
            input_bytes,
        }
    }

    fn writer(
        &mut self,
        header: Option<&mcap::records::Header>,
    ) -> mcap::McapResult<&mut ChunkedWriter<W>> {
        if let Some(target) = self.target.take() {
            let header = mcap::records::Header {
                profile: header.map_or_else(String::new, |h| h.profile.clone()),
                library: reindexed_library(header.map_or("", |h| h.library.as_str())),
            };
            let writer = ChunkedWriter::new(target, &header, self.chunk_options())?;
            self.writer = Some(writer);
        }
        Ok(self.writer.as_mut().expect("the writer takes the target"))
    }

    fn chunk_options(&self) -> ChunkOptions {
        ChunkOptions {
            compression: self.options.compression,
            level: self.options.level,
            chunk_size: self.options.chunk_size,
            threads: ChunkOptions::threads_for(self.options.threads),
        }
    }

    fn progress_to_end(&mut self) {
        (self.progress)(self.input_bytes, self.input_bytes);
    }

    /// Ends the output (its summary and footer) and gives it back.
    fn finish(mut self) -> mcap::McapResult<W> {
        self.writer(None)?;
        let writer = self.writer.take().expect("created above");
        Ok(writer.finish()?.0)
    }
}

impl<W: io::Write> RecordSink for ChunkedSink<'_, W> {
    type Error = Stop;

    fn record(&mut self, record: Record<'_>) -> Result<(), Stop> {
        let record = match record {
            Record::Schema { header, data } => {
                let data = self.definitions.data(&header.name, &header.encoding, data);
                Record::Schema { header, data }
            }
            other => other,
        };
        let header = match &record {
            Record::Header(header) => Some(header),
            _ => None,
        };
        let writer = self.writer(header).map_err(Stop::Encode)?;
        let written = match record {
            Record::Schema { header, data } => writer.add_schema(header, &data),
            Record::Channel(channel) => writer.add_channel(channel),
            Record::Message { header, data } => writer
                .write_message(&header, &data)
                .map(|()| self.messages += 1),
            // The streamed file's checkpoints point into it, not into the indexed copy.
            Record::Metadata(metadata) if metadata.name == CHECKPOINTS => Ok(()),
            Record::Metadata(metadata) => writer.write_metadata(&metadata),
            Record::Attachment { header, data, .. } => writer.attach(&header, &data),
            _ => Ok(()),
        };
        written.map_err(Stop::Encode)
    }

    fn progress(&mut self, offset: u64) -> Result<(), Stop> {
        if self.cancel.load(Ordering::Relaxed) {
            return Err(Stop::Cancelled);
        }
        (self.progress)(offset, self.input_bytes);
        Ok(())
    }
}

/// The Header's `library` of a reindexed file: the writer that made the original, then
/// this reindexer, once however often the file was reindexed.
fn reindexed_library(original: &str) -> String {
    let maker = original
        .split("; reindexed by ")
        .next()
        .filter(|maker| !maker.is_empty() && !maker.starts_with("reindexed by "));
    match maker {
        Some(maker) => format!("{maker}; reindexed by {}", crate::LIBRARY),
        None => format!("reindexed by {}", crate::LIBRARY),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_library_names_the_reindexer_once_however_often_it_ran() {
        let once = reindexed_library("recd 0.1.0");
        assert_eq!(once, format!("recd 0.1.0; reindexed by {}", crate::LIBRARY));
        assert_eq!(reindexed_library(&once), once);
        let anonymous = reindexed_library("");
        assert_eq!(anonymous, format!("reindexed by {}", crate::LIBRARY));
        assert_eq!(reindexed_library(&anonymous), anonymous);
    }
}
