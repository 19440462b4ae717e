//! Synthetic sensor traffic for demos, tests and benchmarks, and the proof that a
//! recording holds every byte of it.
//!
//! Payloads are shaped like what a vehicle records (RGB camera frames with gradients,
//! edges and sensor noise; lidar point clouds; IMU samples) rather than zeros, so that
//! compression ratios and CRC costs measured on them mean something. A [`Schedule`] merges
//! periodic topics into one time-ordered stream of messages.
//!
//! The byte-proof oracle is shared by the load generator (`recd-load`), the end-to-end
//! benchmark and the end-to-end tests: [`proof`] stamps each payload with its sequence
//! number and a checksum of its body, [`blob`] wraps such a payload in the ROS 2 message
//! the DDS load generator publishes, [`report`] is what the load generator says it sent,
//! and [`verify`] reads recorded files back with the `mcap` crate and proves every message.

#![warn(missing_docs)]
#![warn(clippy::undocumented_unsafe_blocks)]

pub mod blob;
mod payload;
pub mod proof;
pub mod report;
mod schedule;
pub mod verify;

pub use payload::{camera_frame, imu_sample, lidar_scan, mixed_bytes, PayloadPool};
pub use schedule::{demo_topics, Schedule, Sensor, Tick, TopicSpec};
