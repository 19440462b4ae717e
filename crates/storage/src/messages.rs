//! Every message of a file in file order, with its channel (`rec play`): complete records
//! only, up to where a crash cut the file, chunked (reindexed) files included.
//!
//! A file no writer holds any more is mapped into memory rather than read: its pages come
//! from the page cache (read ahead sequentially) without a copy into a buffer, and a
//! message of an unchunked file can be kept as [`RecordedMessage::to_bytes`] without a
//! copy. A file still being recorded is read, because its writer may yet shorten it.

use std::collections::{BTreeMap, HashMap};
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use bytes::Bytes;
use mcap::records::Record;

use crate::recover::{self, Damage, RecordSink, RecoverError};

/// A channel as the file describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordedChannel {
    /// Its topic.
    pub topic: String,
    /// Its message encoding (`iceoryx2`, `cdr`).
    pub message_encoding: String,
    /// Its schema's name (the message type), empty without a schema.
    pub schema_name: String,
    /// Its schema's encoding (`ros2msg`, `iceoryx2`), empty without a schema.
    pub schema_encoding: String,
    /// Its schema's data (a ROS 2 message definition), empty without one.
    pub schema_data: Vec<u8>,
    /// Its metadata (iceoryx2 type details, ROS 2 QoS).
    pub metadata: BTreeMap<String, String>,
}

/// One message, borrowed from the reader for the duration of a visit.
#[derive(Debug, Clone, Copy)]
pub struct RecordedMessage<'a> {
    /// The mapped file, when `data` may lie in it.
    mapped: Option<&'a Bytes>,
    /// Its channel.
    pub channel: &'a Arc<RecordedChannel>,
    /// The publisher's sequence number.
    pub sequence: u32,
    /// When it was recorded, ns since the Unix epoch.
    pub log_time: u64,
    /// When it was published.
    pub publish_time: u64,
    /// Its bytes as recorded.
    pub data: &'a [u8],
}

impl RecordedMessage<'_> {
    /// The message's bytes to keep: a view of the mapped file where they lie in it (no
    /// copy; its pages are read in now, so that whoever uses the bytes later does not wait
    /// for the disk), else a copy.
    pub fn to_bytes(&self) -> Bytes {
        match self.mapped {
            Some(file) if contains(file, self.data) => {
                populate(self.data);
                file.slice_ref(self.data)
            }
            _ => Bytes::copy_from_slice(self.data),
        }
    }

    /// Asks the kernel to read this message and the `beyond` bytes of the mapped file
    /// after it in the background (nothing for a file that is read rather than mapped),
    /// so that they are in memory when they are wanted: many requests in flight rather
    /// than one page fault at a time.
    pub fn read_ahead(&self, beyond: usize) {
        let Some(file) = self.mapped else { return };
        if !contains(file, self.data) {
            return;
        }
        let start = self.data.as_ptr() as usize - file.as_ptr() as usize;
        let end = file
            .len()
            .min((start + self.data.len()).saturating_add(beyond));
        // Refused, there is only no read-ahead.
        advise(&file[start..end], libc::MADV_WILLNEED);
    }
}

/// Reads the pages of mapped `data` in, if they are not in memory yet.
fn populate(data: &[u8]) {
    if !advise(data, libc::MADV_POPULATE_READ) {
        // Kernels before 5.14: touch a byte of each page.
        for page in data.iter().step_by(PAGE) {
            // SAFETY: `page` is a valid reference; the read is not optimized away.
            unsafe { std::ptr::read_volatile(page) };
        }
    }
}

const PAGE: usize = 4096;

/// Gives the kernel `advice` about the whole pages that mapped `data` lies on; false when
/// it refused.
fn advise(data: &[u8], advice: libc::c_int) -> bool {
    let start = data.as_ptr() as usize & !(PAGE - 1);
    let end = data.as_ptr() as usize + data.len();
    // SAFETY: the range covers whole pages of a live mapping (the one `data` lies in:
    // mappings start on a page); the callers' advice (MADV_POPULATE_READ, MADV_WILLNEED)
    // only reads pages in.
    unsafe { libc::madvise(start as *mut libc::c_void, end - start, advice) == 0 }
}

fn contains(outer: &[u8], inner: &[u8]) -> bool {
    let outer = outer.as_ptr_range();
    let inner = inner.as_ptr_range();
    outer.start <= inner.start && inner.end <= outer.end
}

/// How a pass over a file's messages ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MessagesRead {
    /// Messages visited.
    pub messages: u64,
    /// Where the file's readable records end early (a crash cut it), if they do.
    pub damage: Option<Damage>,
    /// The visitor stopped the pass.
    pub stopped: bool,
}

/// Why a file's messages could not be read.
#[derive(Debug, thiserror::Error)]
pub enum MessagesError {
    /// The file could not be opened or read.
    #[error("cannot read {}: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The file does not start with the MCAP magic.
    #[error("{} is not an MCAP file", path.display())]
    NotMcap {
        /// The file.
        path: PathBuf,
    },
}

/// Hands every complete message of the file at `path` to `visit`, in file order, until
/// `visit` breaks.
pub fn for_each_message(
    path: &Path,
    visit: impl FnMut(RecordedMessage<'_>) -> ControlFlow<()>,
) -> Result<MessagesRead, MessagesError> {
    visit_messages(path, memmap2::Advice::Sequential, visit)
}

/// [`for_each_message`] for a visitor that skips the bytes of some messages: the kernel
/// reads only the pages a message's [`RecordedMessage::to_bytes`] or
/// [`RecordedMessage::read_ahead`] asks for (and the records' headers), not ahead of
/// them, so that a message skipped costs no disk time.
pub fn for_each_message_skipping(
    path: &Path,
    visit: impl FnMut(RecordedMessage<'_>) -> ControlFlow<()>,
) -> Result<MessagesRead, MessagesError> {
    visit_messages(path, memmap2::Advice::Random, visit)
}

fn visit_messages(
    path: &Path,
    advice: memmap2::Advice,
    visit: impl FnMut(RecordedMessage<'_>) -> ControlFlow<()>,
) -> Result<MessagesRead, MessagesError> {
    let read_error = |source| MessagesError::Read {
        path: path.to_path_buf(),
        source,
    };
    let file = std::fs::File::open(path).map_err(read_error)?;
    let len = file.metadata().map_err(read_error)?.len();
    let mapped = if len > 0 && crate::lock::lock_for_reading(&file).map_err(read_error)? {
        Some(map(&file, advice).map_err(read_error)?)
    } else {
        None
    };
    let mut sink = Visitor {
        schemas: HashMap::new(),
        channels: HashMap::new(),
        visit,
        messages: 0,
        mapped: mapped.clone(),
    };
    let recovered = match &mapped {
        Some(bytes) => recover::recover_in_memory(bytes, &mut sink),
        None => recover::recover(file, len, &mut sink),
    };
    match recovered {
        Ok(recovery) => Ok(MessagesRead {
            messages: sink.messages,
            damage: recovery.damage,
            stopped: false,
        }),
        Err(RecoverError::Sink(Stopped)) => Ok(MessagesRead {
            messages: sink.messages,
            damage: None,
            stopped: true,
        }),
        Err(RecoverError::NotMcap) => Err(MessagesError::NotMcap {
            path: path.to_path_buf(),
        }),
        Err(RecoverError::Read(source)) => Err(read_error(source)),
    }
}

/// The whole file in memory, read as `advice` says.
fn map(file: &std::fs::File, advice: memmap2::Advice) -> std::io::Result<Bytes> {
    // SAFETY: no writer holds the file (the caller took the shared lock, which its writer
    // holds exclusively while it writes), and finished files are only replaced by a
    // rename, never shortened in place, so the mapped bytes stay valid while mapped.
    let map = unsafe { memmap2::Mmap::map(file)? };
    map.advise(advice)?;
    Ok(Bytes::from_owner(map))
}

/// The visitor asked to stop.
struct Stopped;

struct Visitor<F> {
    schemas: HashMap<u16, (String, String, Vec<u8>)>,
    channels: HashMap<u16, Arc<RecordedChannel>>,
    visit: F,
    messages: u64,
    mapped: Option<Bytes>,
}

impl<F: FnMut(RecordedMessage<'_>) -> ControlFlow<()>> RecordSink for Visitor<F> {
    type Error = Stopped;

    fn record(&mut self, record: Record<'_>) -> Result<(), Stopped> {
        match record {
            Record::Schema { header, data } => {
                self.schemas
                    .insert(header.id, (header.name, header.encoding, data.into_owned()));
            }
            Record::Channel(channel) => {
                let (schema_name, schema_encoding, schema_data) = self
                    .schemas
                    .get(&channel.schema_id)
                    .cloned()
                    .unwrap_or_default();
                self.channels.entry(channel.id).or_insert_with(|| {
                    Arc::new(RecordedChannel {
                        topic: channel.topic,
                        message_encoding: channel.message_encoding,
                        schema_name,
                        schema_encoding,
                        schema_data,
                        metadata: channel.metadata,
                    })
                });
            }
            Record::Message { header, data } => {
                // The recovery pass lets through only messages of known channels.
                let Some(channel) = self.channels.get(&header.channel_id) else {
                    return Ok(());
                };
                self.messages += 1;
                let message = RecordedMessage {
                    mapped: self.mapped.as_ref(),
                    channel,
                    sequence: header.sequence,
                    log_time: header.log_time,
                    publish_time: header.publish_time,
                    data: &data,
                };
                if (self.visit)(message).is_break() {
                    return Err(Stopped);
                }
            }
            _ => {}
        }
        Ok(())
    }

    fn checks_crc(&self) -> bool {
        false
    }
}
