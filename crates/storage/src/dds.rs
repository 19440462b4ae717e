//! How recd stores DDS / ROS 2 samples in MCAP (the `ros2` profile).
//!
//! - The channel's message encoding is [`MESSAGE_ENCODING`] (`cdr`). Each Message record's
//!   data is the sample's **complete serialized form**: the 4-byte encapsulation header
//!   (representation identifier, then two option bytes, written as zero) and the payload,
//!   as the writer sent it. XCDR1 and XCDR2 samples keep their own representation.
//! - A ROS 2 topic (DDS `rt/chatter`) is recorded under its ROS name (`/chatter`), its type
//!   under the ROS type name (`std_msgs/msg/String`, schema encoding `ros2msg`); a plain DDS
//!   topic under its DDS names (schema encoding `omgidl`).
//! - Channel metadata holds what rosbag2 writes (`offered_qos_profiles`,
//!   `topic_type_hash`) and, under the keys below, the DDS names the topic had on the wire
//!   and whether it is keyed, so that a replay can publish it as it was.

/// Message encoding of channels that hold DDS samples.
pub const MESSAGE_ENCODING: &str = "cdr";
/// Channel metadata key (rosbag2's): the QoS each writer offered, as YAML.
pub const OFFERED_QOS_PROFILES: &str = "offered_qos_profiles";
/// Channel metadata key (rosbag2's): the writers' RIHS01 type hash.
pub const TOPIC_TYPE_HASH: &str = "topic_type_hash";
/// Channel metadata key: the DDS topic name (`rt/chatter`).
pub const TOPIC: &str = "dds.topic";
/// Channel metadata key: the DDS type name (`std_msgs::msg::dds_::String_`).
pub const TYPE_NAME: &str = "dds.type_name";
/// Channel metadata key: `true` when the topic is keyed (its writers are WITH_KEY
/// endpoints), `false` otherwise.
pub const KEYED: &str = "dds.keyed";
