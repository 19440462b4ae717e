//! What can go wrong while writing a file.

use std::io;
use std::path::PathBuf;

/// What went wrong while writing.
#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    /// The file could not be created (an existing file is never overwritten).
    #[error("cannot create {}: {source}", path.display())]
    Create {
        /// The file.
        path: PathBuf,
        /// Why.
        source: io::Error,
    },
    /// Writing or syncing the file failed; it holds every record written before, and
    /// `rec reindex` recovers them.
    #[error("writing {} failed: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        source: io::Error,
    },
    /// A message named a channel that was never added.
    #[error("message for channel {0}, which was never added")]
    UnknownChannel(u16),
    /// A channel named a schema that was never added.
    #[error("channel refers to schema {0}, which was never added")]
    UnknownSchema(u16),
    /// MCAP numbers channels and schemas with 16 bits.
    #[error("more than 65535 {0} in one recording")]
    TooMany(&'static str),
    /// Direct I/O was asked for, but the file system refuses `O_DIRECT`.
    #[error("cannot create {} for direct I/O: its file system does not support O_DIRECT (use io_mode \"auto\" or \"buffered\" for this directory)", path.display())]
    DirectIoUnsupported {
        /// The file.
        path: PathBuf,
    },
    /// A sealed file could not be started (its header).
    #[error("cannot seal {}: {source}", path.display())]
    Seal {
        /// The file.
        path: PathBuf,
        /// Why.
        source: recd_seal::SealError,
    },
    /// An earlier write failed; the file was left as a recoverable prefix.
    #[error("{} can no longer be written after an earlier error; `rec reindex` recovers what it holds", path.display())]
    Failed {
        /// The file.
        path: PathBuf,
    },
}
