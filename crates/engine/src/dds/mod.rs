//! The DDS / ROS 2 source: records RTPS topics as the serialized CDR they came as, into
//! channels of the MCAP `ros2` profile.
//!
//! One rustdds participant and subscriber per recording; a reader is created for each
//! selected topic when discovery reports its first writer, with the QoS rosbag2 would
//! choose, and one thread waits on all readers at once.

mod channel;
mod qos;
mod raw;
mod source;

pub use source::DdsError;
pub(crate) use source::{DdsSettings, DdsSource, DdsStopper};
