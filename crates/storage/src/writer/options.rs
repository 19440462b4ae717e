//! The settings of a [`StreamWriter`](super::StreamWriter).

use crate::checkpoints::CheckpointBook;
use crate::durability::Durability;
use crate::io_mode::IoMode;
use crate::sealing::Sealing;

/// Settings of a [`StreamWriter`](super::StreamWriter).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct WriterOptions {
    /// The Header's profile (`ros2` for ROS 2 topics, empty for none).
    pub profile: String,
    /// The Header's library string.
    pub library: String,
    /// Compute the CRC-32 of the data section and store it in DataEnd.
    pub data_crc: bool,
    /// Payloads of at least this many bytes are written straight from the caller's memory;
    /// smaller ones are copied into the batch.
    pub zero_copy_threshold: usize,
    /// Batched records leave in one syscall once they fill this many bytes.
    pub batch_size: usize,
    /// Write-back, page-cache and fdatasync policy.
    pub durability: Durability,
    /// Page cache or `O_DIRECT` (see [`IoMode`]); with direct I/O the write-back window
    /// does not apply.
    pub io_mode: IoMode,
    /// Seal every file to the fleet's keys (`….mcap.age`; with direct I/O the sealed
    /// chunks are staged, as no payload can go from the caller's memory); not part of the
    /// serialized settings.
    #[serde(skip)]
    pub sealing: Option<Sealing>,
    /// Hash every file's bytes as they are stored (SHA-256; the ciphertext of a sealed
    /// file), for [`FileSummary::stored_sha256`](super::FileSummary::stored_sha256).
    #[serde(skip)]
    pub stored_digest: bool,
    /// Keep each file's checkpoints here while it is written, so that a cut of it in this
    /// process starts near its window; not part of the serialized settings.
    #[serde(skip)]
    pub checkpoints: Option<CheckpointBook>,
}

impl Default for WriterOptions {
    fn default() -> Self {
        Self {
            profile: String::new(),
            library: crate::LIBRARY.to_string(),
            data_crc: false,
            zero_copy_threshold: 64 << 10,
            batch_size: 512 << 10,
            durability: Durability::default(),
            io_mode: IoMode::default(),
            sealing: None,
            stored_digest: false,
            checkpoints: None,
        }
    }
}
