//! Copies exactly a time window of a session's files into one new chunked, indexed file
//! (an incident's file): every message whose log time lies in the window, each latched
//! channel's last message before it first, the markers in it, and a health record of
//! the span.
//!
//! Each input is read on a thread of its own ([`input`]): a finished file through its
//! summary, reading only the chunks that overlap the window, each in one positioned read
//! ([`indexed`]); any other file (streamed, still being recorded, cut short by a crash)
//! by a scan up to its last complete record or until its messages are past the window
//! ([`scan`]), which reads only the headers of the records it passes over ([`paged`]). The readers hand bounded batches
//! to the merge ([`merge`]), which writes them by log time across the inputs. The output
//! is written beside its destination and renamed into place only once complete and
//! synced, as a reindex's is.

mod health;
mod indexed;
mod input;
mod jump;
mod merge;
mod paged;
mod pread;
mod scan;
mod source;

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{self, BufWriter};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};

use crate::checkpoints::CheckpointBook;
use crate::chunked::ChunkOptions;
use crate::compression::Compression;
use crate::copy_output::CopyOutput;
use crate::recover::Damage;
use crate::window::LogWindow;

/// Called with the bytes a cut just read (from a reader's thread); it may block to hold
/// the cut to a pace.
pub type Pace = Arc<dyn Fn(u64) + Send + Sync>;

/// Which topics a cut keeps: those whose name the predicate accepts (the caller compiles
/// its patterns, so that a cut matches topics as the recorder selects them). A channel
/// of another topic is not read, nor written, nor is its schema unless a kept channel
/// uses it.
#[derive(Clone)]
pub struct CutTopics(Arc<dyn Fn(&str) -> bool + Send + Sync>);

impl CutTopics {
    /// Keeps the topics `keeps` accepts.
    pub fn new(keeps: impl Fn(&str) -> bool + Send + Sync + 'static) -> Self {
        Self(Arc::new(keeps))
    }

    /// Whether the topic named `topic` is kept.
    pub fn keeps(&self, topic: &str) -> bool {
        (self.0)(topic)
    }
}

impl std::fmt::Debug for CutTopics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("CutTopics(…)")
    }
}

/// Settings of [`cut`].
#[derive(Clone)]
pub struct CutOptions {
    /// Chunk compression.
    pub compression: Compression,
    /// The compressor's level; 0 is its default (zstd 3, lz4's fast mode).
    pub level: u32,
    /// Target uncompressed size of a chunk in bytes.
    pub chunk_size: u64,
    /// Threads that compress chunks, each its own chunk; 0 means one per core.
    pub threads: u32,
    /// The Header's profile; `None` takes the first input's.
    pub profile: Option<String>,
    /// Metadata records written into the output besides the markers and the health
    /// record (an incident's own record).
    pub metadata: Vec<mcap::records::Metadata>,
    /// Setting it stops the cut, leaving no output.
    pub cancel: Option<Arc<AtomicBool>>,
    /// Hears of every read, so that the caller can hold the cut to a pace.
    pub pace: Option<Pace>,
    /// Read sealed inputs with the keys kept here, and seal the output (under a fresh
    /// key, kept here too): no plaintext reaches the disk.
    pub sealing: Option<crate::sealing::Sealing>,
    /// The inputs still being written: a sealed one of these is read up to its last whole
    /// chunk. Every other sealed input must authenticate to its end, or the cut fails
    /// naming it and the chunk.
    pub growing: Vec<PathBuf>,
    /// Keep only these topics' messages (and their channels and schemas); `None` keeps
    /// every topic.
    pub topics: Option<CutTopics>,
    /// The checkpoints of the files being written, kept by their writers: a file still
    /// being written is scanned from its last checkpoint before the window.
    pub checkpoints: Option<CheckpointBook>,
}

impl Default for CutOptions {
    fn default() -> Self {
        Self {
            compression: Compression::None,
            level: 0,
            chunk_size: 4 << 20,
            threads: 0,
            profile: None,
            metadata: Vec::new(),
            cancel: None,
            pace: None,
            sealing: None,
            growing: Vec::new(),
            topics: None,
            checkpoints: None,
        }
    }
}

impl std::fmt::Debug for CutOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CutOptions")
            .field("compression", &self.compression)
            .field("level", &self.level)
            .field("chunk_size", &self.chunk_size)
            .field("threads", &self.threads)
            .field("profile", &self.profile)
            .field("metadata", &self.metadata)
            .field("cancel", &self.cancel)
            .field("pace", &self.pace.as_ref().map(|_| "…"))
            .field("sealing", &self.sealing)
            .field("growing", &self.growing)
            .field("topics", &self.topics)
            .field("checkpoints", &self.checkpoints)
            .finish()
    }
}

impl CutOptions {
    /// Whether the topic named `topic` is kept (every one is without a selection).
    fn keeps(&self, topic: &str) -> bool {
        self.topics
            .as_ref()
            .is_none_or(|topics| topics.keeps(topic))
    }

    fn cancelled(&self) -> bool {
        self.cancel
            .as_ref()
            .is_some_and(|cancel| cancel.load(Ordering::Relaxed))
    }
}

/// What a cut wrote and read.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct CutReport {
    /// The file written.
    pub output: PathBuf,
    /// Its size in bytes.
    pub output_bytes: u64,
    /// Messages of the window written.
    pub messages: u64,
    /// Latched channels' last messages before the window, written first.
    pub latched: u64,
    /// Markers in the window written.
    pub markers: u64,
    /// Messages of the window that two inputs held (a latched repeat at the start of a
    /// split file), written once.
    pub duplicates: u64,
    /// Messages of the window written, per topic.
    pub topics: BTreeMap<String, u64>,
    /// How each input was read, in the inputs' order.
    pub inputs: Vec<InputRead>,
}

/// How a cut read one input.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct InputRead {
    /// The input.
    pub path: PathBuf,
    /// Read through its index (only the window's chunks), rather than scanned.
    pub indexed: bool,
    /// Bytes read from it.
    pub bytes_read: u64,
    /// Where its readable records ended early (a crash, or a recording still going on),
    /// if they did and it was read that far (a scan stops once the messages are past the
    /// window).
    pub damage: Option<Damage>,
    /// Why its index was not followed to the end, where it had one: it was scanned.
    pub fallback: Option<String>,
}

/// Why a cut failed; no output (nor temporary file) was left behind.
#[derive(Debug, thiserror::Error)]
pub enum CutError {
    /// No input was given.
    #[error("nothing to cut: no input file")]
    NoInputs,
    /// The window ends before it starts.
    #[error("the window ends ({end_ns}) before it starts ({start_ns})")]
    EmptyWindow {
        /// Its start.
        start_ns: u64,
        /// Its end.
        end_ns: u64,
    },
    /// An input could not be opened or read.
    #[error("cannot read {}: {source}", path.display())]
    Read {
        /// The input.
        path: PathBuf,
        /// Why.
        source: io::Error,
    },
    /// An input is not an MCAP file (or is a directory).
    #[error("{} is not an MCAP file", path.display())]
    NotMcap {
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
    /// The cut was cancelled.
    #[error("cancelled; no output was written")]
    Cancelled,
}

/// Writes the messages of `inputs` (one family's files of a session, in start order; the
/// last may still be being recorded) whose log time lies in `window` into `output`, a
/// chunked, indexed MCAP file, with each latched channel's last message before the
/// window first, the markers in the window, `options.metadata` and a health record.
pub fn cut(
    inputs: &[PathBuf],
    window: LogWindow,
    output: &Path,
    options: &CutOptions,
) -> Result<CutReport, CutError> {
    if inputs.is_empty() {
        return Err(CutError::NoInputs);
    }
    if window.end_ns < window.start_ns {
        return Err(CutError::EmptyWindow {
            start_ns: window.start_ns,
            end_ns: window.end_ns,
        });
    }
    let write_error = |path: &Path| {
        let path = path.to_path_buf();
        move |source| CutError::Write { path, source }
    };
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
        .suffix(".cut")
        .tempfile_in(&directory)
        .map_err(write_error(&directory))?;
    // The result takes the first input's permissions, not the temporary file's private
    // ones.
    if let Ok(metadata) = std::fs::metadata(&inputs[0]) {
        temporary
            .as_file()
            .set_permissions(metadata.permissions())
            .map_err(write_error(temporary.path()))?;
    }

    let never = AtomicBool::new(false);
    let stop = AtomicBool::new(false);
    let ctx = source::Context {
        window,
        cancel: options.cancel.as_deref().unwrap_or(&never),
        stop: &stop,
        pace: options.pace.as_deref(),
        keys: options.sealing.as_ref().map(|sealing| &sealing.keys),
        growing: &options.growing,
        topics: options.topics.as_ref(),
        checkpoints: options.checkpoints.as_ref(),
    };
    let (out, kept_key) = CopyOutput::new(temporary.as_file_mut(), options.sealing.as_ref())
        .map_err(|e| write_error(output)(io::Error::other(e)))?;
    let out = BufWriter::with_capacity(1 << 20, out);
    let merged = std::thread::scope(|scope| {
        let receivers = inputs
            .iter()
            .map(|path| {
                let (events, receiver) = mpsc::sync_channel(2);
                scope.spawn(move || input::read_input(path, ctx, events));
                receiver
            })
            .collect();
        let merged =
            merge::merge(inputs, receivers, options, output, out).and_then(|(out, merged)| {
                let out = out
                    .into_inner()
                    .map_err(|e| write_error(output)(e.into_error()))?;
                out.finish().map_err(write_error(output))?;
                Ok(merged)
            });
        // The readers of inputs not read to their end stop at their next record.
        stop.store(true, Ordering::Relaxed);
        merged
    })?;

    temporary
        .as_file()
        .sync_all()
        .map_err(write_error(output))?;
    let output_bytes = temporary
        .as_file()
        .metadata()
        .map_err(write_error(output))?
        .len();
    if options.cancelled() {
        return Err(CutError::Cancelled);
    }
    temporary
        .persist(output)
        .map_err(|e| write_error(output)(e.error))?;
    if let (Some(sealing), Some(key)) = (&options.sealing, kept_key) {
        sealing.keys.insert(output, key);
    }
    // Make the rename itself durable.
    File::open(&directory)
        .and_then(|dir| dir.sync_all())
        .map_err(write_error(&directory))?;

    Ok(CutReport {
        output_bytes,
        ..merged
    })
}

/// How the output's chunks are cut and compressed.
fn chunk_options(options: &CutOptions) -> ChunkOptions {
    ChunkOptions {
        compression: options.compression,
        level: options.level,
        chunk_size: options.chunk_size,
        threads: ChunkOptions::threads_for(options.threads),
    }
}
