//! The storage engine of recd: everything that touches MCAP files.
//!
//! - [`StreamWriter`] streams unchunked MCAP to disk for the recorder's hot path: record
//!   headers and payloads leave together in one `writev`, large payloads straight from the
//!   caller's memory (an iceoryx2 shared-memory sample, say) with no copy in user space,
//!   small ones batched so that many records leave in one syscall. When a write call
//!   returns, the writer no longer needs the payload, so the caller can release it at once.
//! - [`summarize`] reports what a file holds (`rec info`): from the footer and summary
//!   alone on a cleanly closed file, a small fixed number of reads whatever its size; by a
//!   linear scan on a file that a crash left open.
//! - [`reindex`] turns an unchunked or crash-truncated file into a chunked, fully indexed
//!   (optionally zstd-compressed) one, keeping every complete record and saying what it
//!   could not recover (`rec reindex`).
//! - [`cut()`] copies exactly a time window of a session's files into one new chunked,
//!   indexed file (an incident's), reading only the window's chunks of finished files.
//!
//! [`iceoryx2`] documents how iceoryx2 samples are encoded: message encoding, channel
//! metadata keys and the user header; [`dds`] how DDS / ROS 2 samples are.
//!
//! Files are read back and reindexed output is written with the `mcap` crate; the files
//! [`StreamWriter`] writes are checked against it in the tests.

#![warn(missing_docs)]
#![warn(clippy::undocumented_unsafe_blocks)]

mod bag;
mod checkpoints;
mod chunk;
mod chunked;
mod compression;
mod copy_output;
mod cut;
pub mod dds;
mod definitions;
pub mod direct;
pub mod direct_read;
mod durability;
pub mod iceoryx2;
mod incident;
mod info;
mod io_mode;
mod latched;
mod lock;
mod marker;
mod messages;
mod parse;
mod recover;
mod reindex;
mod sealing;
mod space;
mod trigger;
pub mod window;
mod wire;
mod writer;
pub mod zenoh;

pub use bag::{bag_part, part_of, refresh_bag_metadata, write_bag_metadata, BagError, BagPart};
pub use checkpoints::{CheckpointBook, CHECKPOINTS};
pub use compression::Compression;
pub use cut::{cut, CutError, CutOptions, CutReport, CutTopics, InputRead, Pace};
pub use durability::Durability;
pub use incident::{IncidentRecord, INCIDENT};
pub use info::{
    summarize, summarize_from, ChannelInfo, CompressionInfo, FileInfo, InfoError, ScanOutcome,
};
pub use io_mode::{IoMode, UnknownIoMode};
pub use lock::is_being_recorded;
pub use marker::Marker;
pub use messages::{
    for_each_message, for_each_message_skipping, MessagesError, MessagesRead, RecordedChannel,
    RecordedMessage,
};
/// rosbag2's metadata file, which a session directory of ROS 2 files holds.
pub use recd_ros2::bag::METADATA_FILE as BAG_METADATA_FILE;
pub use recover::Damage;
pub use reindex::{
    reindex, reindex_in_memory, reindex_sealed, ReindexError, ReindexOptions, ReindexReport,
};
pub use sealing::{is_sealed, summarize_sealed, SealKeys, Sealing, SEALED_SUFFIX};
pub use space::{space_of, Space};
pub use trigger::Trigger;
pub use window::LogWindow;
pub use writer::{
    probe_io_mode, Attachment, ChannelId, EncodedMetadata, EndedFile, FileSummary, MessageHeader,
    SchemaId, StreamWriter, WriteError, WriterOptions,
};

/// The `library` string recd writes into the Header of every file it creates.
pub const LIBRARY: &str = concat!("recd ", env!("CARGO_PKG_VERSION"));
