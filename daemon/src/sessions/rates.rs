//! A running session's recent rates, from the growth of its counts between two samples.

use std::collections::HashMap;
use std::time::Instant;

use recd_engine::RecordingStatus;

/// A session's counts at one moment: when, bytes in all, and per service the messages
/// and bytes written.
type Sample = (Instant, u64, HashMap<String, (u64, u64)>);

/// Rates over the last sampling period.
#[derive(Default)]
pub struct Rates {
    last: Option<Sample>,
    /// Bytes per second over all topics.
    pub bytes_per_s: f64,
    /// Per service: messages and bytes per second.
    per_topic: HashMap<String, (f64, f64)>,
}

impl Rates {
    /// Takes a new sample; the rates become the growth since the previous one.
    pub fn update(&mut self, status: &RecordingStatus) {
        let now = Instant::now();
        let counts: HashMap<String, (u64, u64)> = status
            .topics
            .iter()
            .map(|t| {
                (
                    t.service.clone(),
                    (t.counts.written, t.counts.bytes_written),
                )
            })
            .collect();
        if let Some((then, bytes, previous)) = &self.last {
            let seconds = now.duration_since(*then).as_secs_f64().max(1e-3);
            self.bytes_per_s = status.bytes_written.saturating_sub(*bytes) as f64 / seconds;
            self.per_topic = counts
                .iter()
                .map(|(service, &(messages, bytes))| {
                    let (messages_before, bytes_before) =
                        previous.get(service).copied().unwrap_or_default();
                    let rate = |now: u64, before: u64| now.saturating_sub(before) as f64 / seconds;
                    (
                        service.clone(),
                        (rate(messages, messages_before), rate(bytes, bytes_before)),
                    )
                })
                .collect();
        }
        self.last = Some((now, status.bytes_written, counts));
    }

    /// Messages and bytes per second of one service lately.
    pub fn of(&self, service: &str) -> (f64, f64) {
        self.per_topic.get(service).copied().unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::time::Duration;

    use recd_engine::{TopicCounts, TopicStatus};

    use super::*;

    fn status(bytes: u64, written: u64) -> RecordingStatus {
        RecordingStatus {
            paused: false,
            buffer: None,
            started_ns: 0,
            elapsed: Duration::ZERO,
            current_files: Vec::new(),
            files_closed: 0,
            written_until_ns: None,
            bytes_written: bytes,
            topics: vec![TopicStatus {
                queue_depth: None,
                name: "/imu".into(),
                service: "imu".into(),
                counts: TopicCounts {
                    written,
                    bytes_written: written * 100,
                    ..TopicCounts::default()
                },
                health: Default::default(),
                last_sample_ns: None,
            }],
            problems: BTreeMap::new(),
            write_error: None,
            disk_full: None,
            io_mode: recd_engine::IoMode::Buffered,
            receive_threads: Vec::new(),
            required: Vec::new(),
        }
    }

    #[test]
    fn rates_are_the_growth_since_the_last_sample() {
        let mut rates = Rates::default();
        rates.update(&status(1000, 10));
        assert_eq!(rates.of("imu"), (0.0, 0.0), "one sample gives no rate");
        std::thread::sleep(Duration::from_millis(200));
        rates.update(&status(21_000, 210));
        let (messages, bytes) = rates.of("imu");
        // 200 messages and 20 000 bytes in at least 0.2 s (more on a busy machine).
        assert!((10.0..=1000.0).contains(&messages), "{messages}");
        assert!((bytes - messages * 100.0).abs() < 1e-6, "{bytes}");
        assert!((bytes - rates.bytes_per_s).abs() < 1e-6);
        assert_eq!(rates.of("unknown"), (0.0, 0.0));
    }
}
