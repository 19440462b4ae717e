//! `--clock`: the recording's time on ROS 2's `/clock` while it plays, as rosbag2's player
//! publishes it, so that nodes with `use_sim_time` follow the replay: its rate, its
//! pauses (the time stands still) and its steps.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use bytes::Bytes;

use crate::dds::{DdsTopic, CDR_LE};
use crate::timeline::Timeline;

/// Publishes the timeline's recorded time on `topic` `hz` times a second until `stop`.
pub fn publish(topic: &DdsTopic, hz: f64, timeline: &Timeline, stop: &AtomicBool) {
    let period = Duration::from_secs_f64(1.0 / hz);
    let mut next = Instant::now();
    while !stop.load(Ordering::Relaxed) {
        if let Some(time) = timeline.recorded_time() {
            // A best-effort writer does not fail for want of readers; nothing to report.
            let _ = topic.send(clock_message(time));
        }
        next += period;
        let now = Instant::now();
        if next < now {
            // Behind by more than a period: go on from now rather than in a burst.
            next = now;
        }
        std::thread::sleep(next - now);
    }
}

/// A `rosgraph_msgs/msg/Clock` of `time` (ns since the epoch) in CDR: its
/// `builtin_interfaces/Time` as seconds (int32) and nanoseconds (uint32).
pub fn clock_message(time: u64) -> Bytes {
    let seconds = i32::try_from(time / 1_000_000_000).unwrap_or(i32::MAX);
    let nanos = u32::try_from(time % 1_000_000_000).expect("below 10^9");
    let mut message = Vec::with_capacity(12);
    message.extend_from_slice(&CDR_LE);
    message.extend_from_slice(&[0, 0]);
    message.extend_from_slice(&seconds.to_le_bytes());
    message.extend_from_slice(&nanos.to_le_bytes());
    Bytes::from(message)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_clock_message_is_seconds_and_nanoseconds_after_the_encapsulation() {
        let message = clock_message(1_700_000_000_250_000_000);
        assert_eq!(&message[..4], &[0, 1, 0, 0]);
        assert_eq!(
            i32::from_le_bytes(message[4..8].try_into().unwrap()),
            1_700_000_000
        );
        assert_eq!(
            u32::from_le_bytes(message[8..12].try_into().unwrap()),
            250_000_000
        );
    }
}
