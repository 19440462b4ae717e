//! A directory of MCAP files as a ROS 2 bag: rosbag2's `metadata.yaml` (rendered by
//! [`recd_ros2::bag`]) written from the files' summaries. It lists the files that hold
//! ROS 2 channels only: a file with other channels, such as the iceoryx2 files of a
//! session that records both, is not something ROS 2 tools read, so the bag leaves it out.

use std::io;
use std::path::{Path, PathBuf};

use recd_ros2::bag::{metadata_yaml, BagFile, BagTopic, METADATA_FILE};

use crate::info::{summarize, ChannelInfo, FileInfo, InfoError};

/// What one MCAP file is to rosbag2.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BagPart {
    /// A file of a bag: profile `ros2`, ROS 2 channels only (or none at all).
    Ros2(BagFile),
    /// A file with channels ROS 2 tools cannot read; the bag leaves it out.
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
    // rosbags refuses a file whose profile is not ros2, even one without channels (the
    // iceoryx2 file of a session whose shared-memory topics never appeared).
    if info.profile != "ros2" || info.channels.iter().any(|c| !is_ros2(c)) {
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
                    .get(crate::dds::OFFERED_QOS_PROFILES)
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
    channel.message_encoding == crate::dds::MESSAGE_ENCODING
}

/// Writes `dir/metadata.yaml` listing the ROS 2 files among `parts` (in name order,
/// which is the order they were written) when at least one holds a ROS 2 topic, or when
/// the directory has one already (it must not go on listing files that left); returns
/// whether it did. The file is replaced atomically, so a reader never sees half of it.
pub fn write_bag_metadata(dir: &Path, parts: &[BagPart]) -> Result<bool, BagError> {
    let mut files: Vec<BagFile> = parts
        .iter()
        .filter_map(|part| match part {
            BagPart::Ros2(file) => Some(file.clone()),
            BagPart::Foreign => None,
        })
        .collect();
    let path = dir.join(METADATA_FILE);
    if files.iter().all(|f| f.topics.is_empty()) && !path.exists() {
        return Ok(false);
    }
    files.sort_by(|a, b| a.relative_path.cmp(&b.relative_path));
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

#[cfg(test)]
mod tests {
    use super::*;

    fn ros2_file(name: &str) -> BagPart {
        BagPart::Ros2(BagFile {
            relative_path: name.to_string(),
            start_ns: 1,
            end_ns: 2,
            message_count: 1,
            topics: vec![recd_ros2::bag::BagTopic {
                name: "/chatter".to_string(),
                type_name: "std_msgs/msg/String".to_string(),
                offered_qos_profiles: String::new(),
                type_description_hash: String::new(),
                message_count: 1,
            }],
        })
    }

    #[test]
    fn a_bag_lists_its_ros2_files_in_name_order_and_leaves_the_others_out() {
        let dir = tempfile::tempdir().unwrap();
        let parts = [
            ros2_file("s_dds_0001.mcap"),
            BagPart::Foreign,
            ros2_file("s_dds_0000.mcap"),
        ];
        assert!(write_bag_metadata(dir.path(), &parts).unwrap());
        let yaml = std::fs::read_to_string(dir.path().join(METADATA_FILE)).unwrap();
        let first = yaml.find("s_dds_0000.mcap").unwrap();
        let second = yaml.find("s_dds_0001.mcap").unwrap();
        assert!(first < second, "{yaml}");
        assert!(!yaml.contains("iceoryx2"), "{yaml}");
    }

    #[test]
    fn a_directory_without_ros2_topics_gets_no_metadata() {
        let dir = tempfile::tempdir().unwrap();
        assert!(!write_bag_metadata(dir.path(), &[BagPart::Foreign]).unwrap());
        assert!(!dir.path().join(METADATA_FILE).exists());
    }

    #[test]
    fn a_bag_whose_last_file_left_lists_none() {
        let dir = tempfile::tempdir().unwrap();
        assert!(write_bag_metadata(dir.path(), &[ros2_file("s_dds_0000.mcap")]).unwrap());
        assert!(write_bag_metadata(dir.path(), &[BagPart::Foreign]).unwrap());
        let yaml = std::fs::read_to_string(dir.path().join(METADATA_FILE)).unwrap();
        assert!(yaml.contains("relative_file_paths: []"), "{yaml}");
        assert!(!yaml.contains("s_dds_0000.mcap"), "{yaml}");
    }
}
