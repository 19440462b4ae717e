//! A directory of MCAP files as a ROS 2 bag: rosbag2's `metadata.yaml` (rendered by
//! [`recd_ros2::bag`]) written from the files' summaries, for directories whose files hold
//! ROS 2 channels only (a file with other channels, such as iceoryx2 ones, is not
//! something ROS 2 tools read).

use std::io;
use std::path::{Path, PathBuf};

use recd_ros2::bag::{metadata_yaml, BagFile, BagTopic, METADATA_FILE};

use crate::info::{summarize, ChannelInfo, FileInfo, InfoError};

/// What one MCAP file is to rosbag2.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BagPart {
    /// A file of a bag: ROS 2 channels only (or none at all).
    Ros2(BagFile),
    /// A file with channels ROS 2 tools cannot read; its directory is no bag.
    Foreign,
}

/// Why a bag's metadata could not be written.
#[derive(Debug, thiserror::Error)]
pub enum BagError {
    /// A file could not be summarized.
    #[error(transparent)]
    Info(#[from] InfoError),
    /// Writing `metadata.yaml` failed.
    #[error("cannot write {}: {source}", path.display())]
    Write {
        /// The metadata file.
        path: PathBuf,
        /// Why.
        source: io::Error,
    },
}

/// What the MCAP file at `path` is to rosbag2, from its summary.
pub fn bag_part(path: &Path) -> Result<BagPart, InfoError> {
    Ok(part_of(&summarize(path)?))
}

/// What a summarized file is to rosbag2.
pub fn part_of(info: &FileInfo) -> BagPart {
    if info.channels.iter().any(|c| !is_ros2(c)) {
        return BagPart::Foreign;
    }
    BagPart::Ros2(BagFile {
        relative_path: info
            .path
            .file_name()
            .map_or_else(String::new, |n| n.to_string_lossy().into_owned()),
        start_ns: info.start_time.unwrap_or(0),
        end_ns: info.end_time.unwrap_or(0),
        message_count: info.message_count,
        topics: info
            .channels
            .iter()
            .map(|c| BagTopic {
                name: c.topic.clone(),
                type_name: c.schema_name.clone().unwrap_or_default(),
                offered_qos_profiles: c
                    .metadata
                    .get("offered_qos_profiles")
                    .cloned()
                    .unwrap_or_default(),
                type_description_hash: c
                    .metadata
                    .get("topic_type_hash")
                    .cloned()
                    .unwrap_or_default(),
                message_count: c.message_count,
            })
            .collect(),
    })
}

fn is_ros2(channel: &ChannelInfo) -> bool {
    channel.message_encoding == "cdr"
}

/// Writes `dir/metadata.yaml` for `parts`, the bag's files in order, when at least one
/// holds ROS 2 channels and none holds others; returns whether it did. The file is
/// replaced atomically, so a reader never sees half of it.
pub fn write_bag_metadata(dir: &Path, parts: &[BagPart]) -> Result<bool, BagError> {
    let mut files = Vec::with_capacity(parts.len());
    for part in parts {
        match part {
            BagPart::Ros2(file) => files.push(file.clone()),
            BagPart::Foreign => return Ok(false),
        }
    }
    if files.iter().all(|f| f.topics.is_empty()) {
        return Ok(false);
    }
    let path = dir.join(METADATA_FILE);
    let staged = dir.join(format!(".{METADATA_FILE}.tmp"));
    let write_error = |source| BagError::Write {
        path: path.clone(),
        source,
    };
    std::fs::write(&staged, metadata_yaml(&files)).map_err(write_error)?;
    std::fs::rename(&staged, &path).map_err(write_error)?;
    Ok(true)
}

/// [`write_bag_metadata`] for the MCAP files at `paths`, in order (after `rec reindex`).
pub fn refresh_bag_metadata(dir: &Path, paths: &[PathBuf]) -> Result<bool, BagError> {
    let parts = paths
        .iter()
        .map(|path| bag_part(path))
        .collect::<Result<Vec<_>, _>>()?;
    write_bag_metadata(dir, &parts)
}
