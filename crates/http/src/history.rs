//! The last minute of each topic's message rate, for the page's sparklines: one point per
//! second, sampled by the listener whether or not a page is open, so that a page opened
//! now shows the minute before.

use std::collections::{BTreeMap, VecDeque};

use crate::snapshot::Snapshot;

/// Points kept per topic: a minute at one per second.
pub const POINTS: usize = 60;

/// Per session, per topic: messages per second, oldest first.
#[derive(Debug, Default)]
pub struct RateHistory {
    sessions: BTreeMap<String, BTreeMap<String, VecDeque<f64>>>,
}

impl RateHistory {
    /// Adds the snapshot's rates; sessions and topics no longer there are forgotten.
    pub fn add(&mut self, snapshot: &Snapshot) {
        let mut sessions = std::mem::take(&mut self.sessions);
        for session in &snapshot.sessions {
            let mut previous = sessions.remove(&session.name).unwrap_or_default();
            let topics = (session.topics.iter())
                .map(|topic| {
                    let mut points = previous.remove(&topic.report.name).unwrap_or_default();
                    if points.len() == POINTS {
                        points.pop_front();
                    }
                    points.push_back(topic.messages_per_s);
                    (topic.report.name.clone(), points)
                })
                .collect();
            self.sessions.insert(session.name.clone(), topics);
        }
    }

    /// The rates as the page reads them.
    pub fn view(&self) -> BTreeMap<&str, BTreeMap<&str, &VecDeque<f64>>> {
        (self.sessions.iter())
            .map(|(session, topics)| {
                let topics = (topics.iter())
                    .map(|(topic, points)| (topic.as_str(), points))
                    .collect();
                (session.as_str(), topics)
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use recd_control::{RatedTopic, SessionStatus, TopicReport};

    fn snapshot(sessions: &[(&str, &[(&str, f64)])]) -> Snapshot {
        let sessions = (sessions.iter())
            .map(|(name, topics)| SessionStatus {
                name: name.to_string(),
                id: 1,
                directory: Default::default(),
                current_files: vec![],
                elapsed_s: 0.0,
                bytes_written: 0,
                bytes_per_s: 0.0,
                topics: (topics.iter())
                    .map(|(topic, rate)| RatedTopic {
                        report: TopicReport {
                            name: topic.to_string(),
                            service: topic.to_string(),
                            received: 0,
                            written: 0,
                            dropped: 0,
                            lost: 0,
                            overflows: 0,
                            bytes_written: 0,
                            paused: 0,
                            evicted: 0,
                            filtered: 0,
                            repeated: 0,
                            unknown_loss: false,
                        },
                        messages_per_s: *rate,
                        bytes_per_s: 0.0,
                        health: None,
                        last_sample_ns: None,
                    })
                    .collect(),
                write_error: None,
                problems: vec![],
                io_mode: String::new(),
                disk_full: None,
                paused: false,
                buffer: None,
                receive_threads: vec![],
                required: vec![],
                backlog: Default::default(),
            })
            .collect();
        Snapshot {
            taken: std::time::Instant::now(),
            sessions,
            uploads: None,
            facts: Default::default(),
            file_sizes: Default::default(),
            incidents: None,
            rules: Vec::new(),
            backlog: None,
        }
    }

    #[test]
    fn keeps_a_minute_per_topic_and_forgets_what_ended() {
        let mut history = RateHistory::default();
        for second in 0..70 {
            history.add(&snapshot(&[("drive", &[("imu", f64::from(second))])]));
        }
        let view = history.view();
        let points: Vec<f64> = view["drive"]["imu"].iter().copied().collect();
        assert_eq!(points.len(), POINTS);
        assert_eq!((points[0], points[59]), (10.0, 69.0), "oldest first");
        history.add(&snapshot(&[("other", &[("gps", 1.0)])]));
        let view = history.view();
        assert!(!view.contains_key("drive"));
        assert_eq!(view["other"]["gps"].len(), 1);
    }
}
