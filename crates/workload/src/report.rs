//! What the load generator reports it sent.

use serde::{Deserialize, Serialize};

/// One topic's publisher result.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct TopicSent {
    /// The iceoryx2 service name.
    pub service: String,
    /// Samples published.
    pub sent: u64,
    /// Bytes of each payload.
    pub payload_len: usize,
    /// Loan or send errors (each one a sample not sent).
    pub errors: u64,
}

/// The whole run.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct LoadReport {
    /// Per topic.
    pub topics: Vec<TopicSent>,
    /// Seconds from the first to the last publish.
    pub seconds: f64,
}

impl LoadReport {
    /// Total bytes of payload sent.
    pub fn bytes(&self) -> u64 {
        self.topics
            .iter()
            .map(|t| t.sent * t.payload_len as u64)
            .sum()
    }
}
