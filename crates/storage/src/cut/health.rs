//! The health record of a cut: each topic's samples in the window, checked against the
//! expectation the inputs' health records give it, as the recorder writes one per file.

use std::collections::BTreeMap;

use recd_health::{Expected, FileHealth, FileHealthSummary};

/// The log times of each topic's messages in the output (latched repeats are none).
#[derive(Debug, Default)]
pub(super) struct SpanHealth {
    times: BTreeMap<String, Vec<u64>>,
    last_ns: u64,
}

impl SpanHealth {
    /// Counts a message of `topic` at `log_time`.
    pub fn add(&mut self, topic: &str, log_time: u64) {
        match self.times.get_mut(topic) {
            Some(times) => times.push(log_time),
            None => {
                self.times.insert(topic.to_string(), vec![log_time]);
            }
        }
        self.last_ns = self.last_ns.max(log_time);
    }

    /// The summary under `expected` (topics without an expectation are left out), at the
    /// output's newest message; a required topic without a sample is missing.
    pub fn summary(&self, expected: &BTreeMap<String, Expected>) -> FileHealthSummary {
        let mut topics = BTreeMap::new();
        for (topic, times) in &self.times {
            let Some(expected) = expected.get(topic) else {
                continue;
            };
            let mut health = FileHealth::default();
            for &time in times {
                health.add(time, expected.max_gap_ns);
            }
            topics.insert(topic.clone(), health.summary(expected, self.last_ns));
        }
        let missing = expected
            .iter()
            .filter(|(topic, expected)| expected.required && !self.times.contains_key(*topic))
            .map(|(topic, _)| topic.clone())
            .collect();
        FileHealthSummary::new(topics, missing)
    }
}
