//! How recd stores ROS 2 samples received over Zenoh (rmw_zenoh) in MCAP: exactly as DDS
//! samples ([`crate::dds`], the `ros2` profile: complete CDR with its encapsulation
//! header, ROS names, `offered_qos_profiles`, `topic_type_hash`), with the Zenoh names
//! the topic had on the wire under the keys below, so that a replay can publish it as it
//! was.

/// Channel metadata key: the key expression the samples came on, domain first
/// (`0/chatter/std_msgs::msg::dds_::String_/RIHS01_…`).
pub const KEY_EXPR: &str = "zenoh.key_expr";
/// Channel metadata key: the ROS 2 domain the samples came from (the key's first chunk).
pub const DOMAIN: &str = "zenoh.domain";
/// Channel metadata key: the type name as rmw_zenoh writes it
/// (`std_msgs::msg::dds_::String_`).
pub const TYPE_NAME: &str = "zenoh.type_name";
