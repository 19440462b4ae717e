//! rosbag2's `metadata.yaml`: what makes a directory of MCAP files a ROS 2 bag that
//! `ros2 bag info`, `ros2 bag play` and rosbags' `AnyReader` open (format version 8:
//! storage `mcap`, relative file paths, per-file times and counts, topics with their type,
//! serialization format, offered QoS profiles and type hash).

use std::collections::BTreeMap;

use crate::yaml::double_quoted;

/// The file rosbag2 looks for in a bag directory.
pub const METADATA_FILE: &str = "metadata.yaml";

/// The metadata format version written: rosbag2's since Iron (QoS profiles as a YAML
/// string, type description hashes, per-file information).
pub const METADATA_VERSION: u32 = 8;

/// One MCAP file of a bag.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BagFile {
    /// Its name, relative to the bag directory.
    pub relative_path: String,
    /// Log time of its first message, ns since the Unix epoch (0 without messages).
    pub start_ns: u64,
    /// Log time of its last message.
    pub end_ns: u64,
    /// Messages in it.
    pub message_count: u64,
    /// Its ROS 2 topics.
    pub topics: Vec<BagTopic>,
}

/// One topic of a file, as rosbag2 describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BagTopic {
    /// The ROS name, e.g. `/chatter`.
    pub name: String,
    /// The ROS type, e.g. `std_msgs/msg/String`.
    pub type_name: String,
    /// The writers' QoS as rosbag2's YAML (the channel's `offered_qos_profiles`).
    pub offered_qos_profiles: String,
    /// `RIHS01_…`, or empty when unknown.
    pub type_description_hash: String,
    /// Messages of the topic in the file.
    pub message_count: u64,
}

/// The `metadata.yaml` of a bag made of `files`, in order.
pub fn metadata_yaml(files: &[BagFile]) -> String {
    let with_messages = || files.iter().filter(|f| f.message_count > 0);
    let start = with_messages().map(|f| f.start_ns).min().unwrap_or(0);
    let end = with_messages().map(|f| f.end_ns).max().unwrap_or(0);
    let message_count: u64 = files.iter().map(|f| f.message_count).sum();
    // Topics across the files, in the order they first appear, counts summed.
    let mut topics: Vec<BagTopic> = Vec::new();
    let mut index: BTreeMap<&str, usize> = BTreeMap::new();
    for topic in files.iter().flat_map(|f| &f.topics) {
        match index.get(topic.name.as_str()) {
            Some(&at) => topics[at].message_count += topic.message_count,
            None => {
                index.insert(&topic.name, topics.len());
                topics.push(topic.clone());
            }
        }
    }

    let mut yaml = String::from("rosbag2_bagfile_information:\n");
    yaml += &format!("  version: {METADATA_VERSION}\n");
    yaml += "  storage_identifier: mcap\n";
    yaml += "  duration:\n";
    yaml += &format!("    nanoseconds: {}\n", end.saturating_sub(start));
    yaml += "  starting_time:\n";
    yaml += &format!("    nanoseconds_since_epoch: {start}\n");
    yaml += &format!("  message_count: {message_count}\n");
    yaml += &list("  topics_with_message_count:", &topics, |topic| {
        format!(
            "    - topic_metadata:\n        name: {}\n        type: {}\n        serialization_format: cdr\n        offered_qos_profiles: {}\n        type_description_hash: {}\n      message_count: {}\n",
            double_quoted(&topic.name),
            double_quoted(&topic.type_name),
            double_quoted(&topic.offered_qos_profiles),
            double_quoted(&topic.type_description_hash),
            topic.message_count
        )
    });
    yaml += "  compression_format: \"\"\n";
    yaml += "  compression_mode: \"\"\n";
    yaml += &list("  relative_file_paths:", files, |file| {
        format!("    - {}\n", double_quoted(&file.relative_path))
    });
    yaml += &list("  files:", files, |file| {
        format!(
            "    - path: {}\n      starting_time:\n        nanoseconds_since_epoch: {}\n      duration:\n        nanoseconds: {}\n      message_count: {}\n",
            double_quoted(&file.relative_path),
            file.start_ns,
            file.end_ns.saturating_sub(file.start_ns),
            file.message_count
        )
    });
    yaml += "  custom_data: ~\n";
    yaml += "  ros_distro: \"\"\n";
    yaml
}

/// A YAML block sequence under `key`, or `key []` when empty.
fn list<T>(key: &str, items: &[T], item: impl Fn(&T) -> String) -> String {
    if items.is_empty() {
        return format!("{key} []\n");
    }
    let mut text = format!("{key}\n");
    for entry in items {
        text += &item(entry);
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(name: &str, start: u64, end: u64, topics: &[(&str, u64)]) -> BagFile {
        BagFile {
            relative_path: name.into(),
            start_ns: start,
            end_ns: end,
            message_count: topics.iter().map(|t| t.1).sum(),
            topics: topics
                .iter()
                .map(|&(name, count)| BagTopic {
                    name: name.into(),
                    type_name: "std_msgs/msg/String".into(),
                    offered_qos_profiles: "- history: 3\n  depth: 0\n".into(),
                    type_description_hash: "RIHS01_ab".into(),
                    message_count: count,
                })
                .collect(),
        }
    }

    #[test]
    fn topics_are_merged_across_files_and_times_span_them() {
        let yaml = metadata_yaml(&[
            file("a_0000.mcap", 100, 200, &[("/chatter", 3)]),
            file("a_0001.mcap", 250, 400, &[("/chatter", 2), ("/odom", 5)]),
        ]);
        assert!(
            yaml.contains("  duration:\n    nanoseconds: 300\n"),
            "{yaml}"
        );
        assert!(yaml.contains("nanoseconds_since_epoch: 100\n"), "{yaml}");
        assert!(yaml.contains("  message_count: 10\n"), "{yaml}");
        assert_eq!(yaml.matches("name: \"/chatter\"").count(), 1, "{yaml}");
        assert!(
            yaml.contains("type_description_hash: \"RIHS01_ab\"\n      message_count: 5\n"),
            "{yaml}"
        );
        assert!(yaml.contains("offered_qos_profiles: \"- history: 3\\n  depth: 0\\n\""));
        assert!(
            yaml.contains("relative_file_paths:\n    - \"a_0000.mcap\"\n    - \"a_0001.mcap\"\n")
        );
    }
}
