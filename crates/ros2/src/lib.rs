//! The ROS 2 conventions recd needs to record DDS topics the way rosbag2 does, as plain
//! functions over plain data (no DDS library, no ROS installation required):
//!
//! - [`names`]: DDS topic and type names to ROS 2 names (`rt/chatter` → `/chatter`,
//!   `std_msgs::msg::dds_::String_` → `std_msgs/msg/String`), which topics are ROS's own
//!   bookkeeping, and which carry service events and action traffic.
//! - [`type_hash`]: the ROS 2 type hash (`RIHS01_…`) a writer announces in its USER_DATA QoS.
//! - [`type_description`]: a type as a node describes it over the network (REP-2011), its
//!   RIHS01 hash, and its definition from the sources the node sends.
//! - [`msgdef`]: the `ros2msg` schema text rosbag2 stores for a type, built from the `.msg`
//!   files of an ament install tree, and the same for the types generated from `.srv` and
//!   `.action` files (service events, action feedback and goal services).
//! - [`qos`]: the `offered_qos_profiles` channel metadata (YAML) rosbag2 writes.
//! - [`bag`]: the `metadata.yaml` that makes a directory of MCAP files a ROS 2 bag.
//! - [`service_event`]: the calls recorded service introspection events show, counted as
//!   `ros2 bag info` counts them.
//!
//! Each format follows the rosbag2/rmw source it is named after in the module docs, so that
//! `ros2 bag`, Foxglove and `rosbags` read recd's files as they read rosbag2's.

#![warn(missing_docs)]
#![warn(clippy::undocumented_unsafe_blocks)]

pub mod bag;
pub mod msgdef;
pub mod names;
pub mod qos;
pub mod service_event;
pub mod service_request;
pub mod type_description;
pub mod type_hash;
pub mod yaml;
