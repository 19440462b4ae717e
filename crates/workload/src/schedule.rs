//! Periodic topics merged into one time-ordered stream.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// What a topic carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sensor {
    /// RGB8 frames of width×height.
    Camera {
        /// Pixels per row.
        width: usize,
        /// Rows.
        height: usize,
    },
    /// Point clouds of this many points.
    Lidar {
        /// Points per scan.
        points: usize,
    },
    /// IMU samples.
    Imu,
}

/// A periodic topic.
#[derive(Debug, Clone, PartialEq)]
pub struct TopicSpec {
    /// The topic name.
    pub topic: String,
    /// The schema name its messages follow.
    pub schema_name: String,
    /// What it carries.
    pub sensor: Sensor,
    /// Messages per second.
    pub rate_hz: f64,
}

impl TopicSpec {
    /// Bytes of one message.
    pub fn payload_len(&self) -> usize {
        match self.sensor {
            Sensor::Camera { width, height } => width * height * 3,
            Sensor::Lidar { points } => points * 16,
            Sensor::Imu => 112,
        }
    }

    /// When message `sequence` is due, in ns after the start; computed from the sequence
    /// rather than by adding up rounded periods, so counts over a duration come out exact.
    fn due_ns(&self, sequence: u64) -> u64 {
        (sequence as f64 * 1e9 / self.rate_hz).round() as u64
    }
}

/// The demo's vehicle: a FullHD camera at 30 Hz, a lidar at 10 Hz and an IMU at 1 kHz.
pub fn demo_topics() -> Vec<TopicSpec> {
    vec![
        TopicSpec {
            topic: "/camera/front/image_raw".into(),
            schema_name: "sensor_msgs/msg/Image".into(),
            sensor: Sensor::Camera {
                width: 1920,
                height: 1080,
            },
            rate_hz: 30.0,
        },
        TopicSpec {
            topic: "/lidar/top/points".into(),
            schema_name: "sensor_msgs/msg/PointCloud2".into(),
            sensor: Sensor::Lidar { points: 57_600 },
            rate_hz: 10.0,
        },
        TopicSpec {
            topic: "/imu/data".into(),
            schema_name: "sensor_msgs/msg/Imu".into(),
            sensor: Sensor::Imu,
            rate_hz: 1000.0,
        },
    ]
}

/// One message due: topic `topic` (an index into the schedule's topics), its `sequence`
/// number on that topic, at `time_ns` after the start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tick {
    /// Index of the topic.
    pub topic: usize,
    /// The message's number on its topic, from 0.
    pub sequence: u64,
    /// Nanoseconds after the start.
    pub time_ns: u64,
}

/// Yields the messages of periodic topics in time order, for `duration_ns`.
#[derive(Debug, Clone)]
pub struct Schedule {
    topics: Vec<TopicSpec>,
    next: BinaryHeap<Reverse<(u64, usize, u64)>>,
    duration_ns: u64,
}

impl Schedule {
    /// The schedule of `topics` over `duration_ns`.
    pub fn new(topics: &[TopicSpec], duration_ns: u64) -> Self {
        let next = (0..topics.len()).map(|i| Reverse((0, i, 0))).collect();
        Self {
            topics: topics.to_vec(),
            next,
            duration_ns,
        }
    }
}

impl Iterator for Schedule {
    type Item = Tick;

    fn next(&mut self) -> Option<Tick> {
        let Reverse((time_ns, topic, sequence)) = self.next.pop()?;
        if time_ns >= self.duration_ns {
            self.next.clear();
            return None;
        }
        let due = self.topics[topic].due_ns(sequence + 1);
        self.next.push(Reverse((due, topic, sequence + 1)));
        Some(Tick {
            topic,
            sequence,
            time_ns,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schedule_is_time_ordered_with_the_right_counts() {
        let topics = demo_topics();
        let ticks: Vec<Tick> = Schedule::new(&topics, 1_000_000_000).collect();
        assert!(ticks.windows(2).all(|w| w[0].time_ns <= w[1].time_ns));
        let count = |t| ticks.iter().filter(|tick| tick.topic == t).count();
        assert_eq!((count(0), count(1), count(2)), (30, 10, 1000));
    }
}
