//! How a Zenoh topic appears in the file: as a DDS topic of the same ROS 2 names would
//! (the `ros2` profile), with the Zenoh key it came on.

use std::collections::BTreeMap;

use recd_ros2::qos::{offered_qos_profiles_yaml, QosProfile};
use recd_storage::{dds as dds_keys, zenoh as zenoh_keys};

use crate::source::dds::channel::{ros2_channel, Definitions, Naming};
use crate::topic::ChannelSpec;

/// A topic as rmw_zenoh names it.
pub(super) struct TopicShape<'a> {
    pub domain: u16,
    /// The ROS topic (`/chatter`).
    pub ros_topic: &'a str,
    /// rmw_zenoh's type name (`std_msgs::msg::dds_::String_`).
    pub type_name: &'a str,
    /// `RIHS01_…`, or what an older peer sends instead.
    pub type_hash: &'a str,
    /// The QoS each publisher known offers.
    pub offers: &'a [QosProfile],
}

/// The schema and channel records of a topic, and, when its message definition is
/// missing, why.
pub(super) fn channel_spec(
    shape: &TopicShape<'_>,
    definitions: &mut Definitions,
) -> (ChannelSpec, Option<String>) {
    let naming = Naming::of(&format!("rt{}", shape.ros_topic), shape.type_name);
    let key = format!(
        "{}/{}/{}/{}",
        shape.domain,
        shape.ros_topic.trim_start_matches('/'),
        shape.type_name,
        shape.type_hash
    );
    let mut metadata = BTreeMap::from([
        (zenoh_keys::KEY_EXPR.to_string(), key),
        (zenoh_keys::DOMAIN.to_string(), shape.domain.to_string()),
        (
            zenoh_keys::TYPE_NAME.to_string(),
            shape.type_name.to_string(),
        ),
        (
            dds_keys::OFFERED_QOS_PROFILES.to_string(),
            offered_qos_profiles_yaml(shape.offers),
        ),
    ]);
    if shape.type_hash.starts_with("RIHS01_") {
        metadata.insert(
            dds_keys::TOPIC_TYPE_HASH.to_string(),
            shape.type_hash.to_string(),
        );
    }
    ros2_channel(&naming, metadata, definitions)
}

#[cfg(test)]
mod tests {
    use super::*;
    use recd_ros2::msgdef::MessageDefinitions;

    #[test]
    fn a_zenoh_topic_gets_the_channel_of_its_ros_names() {
        let dir = tempfile::tempdir().unwrap();
        let msg = dir.path().join("std_msgs/msg");
        std::fs::create_dir_all(&msg).unwrap();
        std::fs::write(msg.join("String.msg"), "string data\n").unwrap();
        let mut definitions =
            Definitions::new(MessageDefinitions::new(vec![dir.path().to_path_buf()]));
        let hash = format!("RIHS01_{}", "ab".repeat(32));
        let shape = TopicShape {
            domain: 7,
            ros_topic: "/robot/chatter",
            type_name: "std_msgs::msg::dds_::String_",
            type_hash: &hash,
            offers: &[super::super::qos::parse("::,7:,:,:,,").unwrap()],
        };
        let (spec, missing) = channel_spec(&shape, &mut definitions);
        assert_eq!(missing, None);
        assert_eq!(spec.schema_name, "std_msgs/msg/String");
        assert_eq!(spec.schema_encoding, "ros2msg");
        assert_eq!(spec.message_encoding, "cdr");
        assert_eq!(spec.schema_data, b"string data\n");
        assert_eq!(
            spec.metadata["zenoh.key_expr"],
            format!("7/robot/chatter/std_msgs::msg::dds_::String_/{hash}")
        );
        assert_eq!(spec.metadata["zenoh.domain"], "7");
        assert_eq!(spec.metadata["topic_type_hash"], hash);
        assert!(spec.metadata.contains_key("offered_qos_profiles"));
    }
}
