//! Reads one input of a cut on its own thread: by its index where it has one, else (or
//! where the index fails it) by a scan, sending what it finds to the merge.

use std::fs::File;
use std::io::Read;
use std::path::Path;

use super::indexed::{Indexed, Stop};
use super::pread::Pread;
use super::scan::{scan, Known, Resume, ScanError};
use super::source::{Context, Done, Event, Events, Notes};
use super::{CutError, InputRead};
use crate::info::{self, InfoError};

/// Reads the input at `path` and sends its events; a failure is the last event.
pub(super) fn read_input(path: &Path, ctx: Context<'_>, events: Events) {
    if let Err(error) = read(path, ctx, &events) {
        let _ = events.send(Event::Failed(error));
    }
}

fn read(path: &Path, ctx: Context<'_>, events: &Events) -> Result<(), CutError> {
    let read_error = |source| CutError::Read {
        path: path.to_path_buf(),
        source,
    };
    let not_mcap = || CutError::NotMcap {
        path: path.to_path_buf(),
    };
    let file = File::open(path).map_err(read_error)?;
    let metadata = file.metadata().map_err(read_error)?;
    if metadata.is_dir() {
        return Err(not_mcap());
    }
    let sealed = crate::sealing::is_sealed(path);
    // A file still being recorded grows meanwhile: what it held when opened is read.
    if left_empty(&file, metadata.len(), sealed).map_err(read_error)? {
        return send_empty(path, events);
    }
    let (mut input, size) = if sealed {
        let key = ctx.keys.and_then(|keys| keys.get(path)).ok_or_else(|| {
            read_error(std::io::Error::other(
                "it is sealed, and recd no longer holds its key (it was written before recd restarted)",
            ))
        })?;
        let growing = ctx.growing.iter().any(|input| input == path);
        let input = Pread::sealed(&file, &key, growing)
            .map_err(|error| read_error(std::io::Error::other(error)))?;
        // Of a sealed file still being written: its whole sealed chunks.
        let size = input.len().map_err(read_error)?;
        if size == 0 {
            return send_empty(path, events);
        }
        (input, size)
    } else {
        (Pread::new(&file), metadata.len())
    };
    let header = info::read_header(&mut input, path).map_err(|error| match error {
        InfoError::Read { source, .. } => read_error(source),
        InfoError::NotMcap { .. } | InfoError::IsDirectory { .. } => not_mcap(),
    })?;
    // A closed streamed file has a summary too, without chunk indexes: its metadata
    // indexes find the marker and health records for the scan.
    let summary = info::read_summary(&mut input, size).ok().flatten();
    let (resume, fallback) = match summary.as_ref() {
        Some(summary) if !summary.chunk_indexes.is_empty() => {
            let indexed = Indexed {
                input: &mut input,
                size,
                summary,
                ctx,
                events,
            };
            match indexed.read(header.profile.clone()) {
                Ok(notes) => {
                    let read = InputRead {
                        path: path.to_path_buf(),
                        indexed: true,
                        bytes_read: input.bytes_read(),
                        damage: None,
                        fallback: None,
                    };
                    let _ = events.send(Event::Done(Box::new(Done { read, notes })));
                    return Ok(());
                }
                Err(Stop::Read(source)) => return Err(read_error(source)),
                Err(Stop::Fallback(fallback)) => (
                    Resume {
                        ready_sent: fallback.ready_sent,
                        skip_chunks: fallback.sent_chunks,
                    },
                    Some(fallback.reason),
                ),
            }
        }
        _ => (Resume::default(), None),
    };
    let growing = ctx.checkpoints.and_then(|book| book.get(path));
    let known = Known {
        profile: header.profile,
        summary: summary.as_ref(),
        growing: growing.as_deref(),
    };
    let scanned = scan(&input, size, known, resume, ctx, events);
    let (notes, damage) = scanned.map_err(|error| match error {
        ScanError::NotMcap => not_mcap(),
        ScanError::Read(source) => read_error(source),
    })?;
    let read = InputRead {
        path: path.to_path_buf(),
        indexed: false,
        bytes_read: input.bytes_read(),
        damage,
        fallback,
    };
    let _ = events.send(Event::Done(Box::new(Done { read, notes })));
    Ok(())
}

/// Whether the file holds no more than a start of the MCAP magic (of a `sealed` file: of
/// the age version line): one a crash or a power cut left, or one being written, before
/// its first record (its header) reached the disk, an empty prefix of a recording.
fn left_empty(file: &File, size: u64, sealed: bool) -> std::io::Result<bool> {
    let first: &[u8] = if sealed {
        recd_seal::VERSION_LINE
    } else {
        mcap::MAGIC
    };
    if size >= first.len() as u64 {
        return Ok(false);
    }
    let mut start = Vec::new();
    file.take(size).read_to_end(&mut start)?;
    Ok(first.starts_with(&start))
}

/// Sends what an input with no record holds: nothing.
fn send_empty(path: &Path, events: &Events) -> Result<(), CutError> {
    let ready = Event::Ready {
        profile: String::new(),
        latched: Vec::new(),
    };
    let read = InputRead {
        path: path.to_path_buf(),
        indexed: false,
        bytes_read: 0,
        damage: None,
        fallback: None,
    };
    let done = Event::Done(Box::new(Done {
        read,
        notes: Notes::default(),
    }));
    let _ = events.send(ready).and_then(|()| events.send(done));
    Ok(())
}
