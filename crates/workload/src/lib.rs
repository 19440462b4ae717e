//! Real-looking synthetic sensor traffic for demos, tests and benchmarks.
//!
//! Payloads are shaped like what a vehicle records (RGB camera frames with gradients,
//! edges and sensor noise; lidar point clouds; IMU samples) rather than zeros, so that
//! compression ratios and CRC costs measured on them mean something. A [`Schedule`] merges
//! periodic topics into one time-ordered stream of messages.

mod payload;
mod schedule;

pub use payload::{camera_frame, imu_sample, lidar_scan, mixed_bytes, PayloadPool};
pub use schedule::{demo_topics, Schedule, Sensor, Tick, TopicSpec};
