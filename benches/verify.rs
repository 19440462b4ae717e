//! Reads recorded files back with the `mcap` crate (an independent reader) and proves
//! every payload of the load generator intact and in order.

use std::collections::BTreeMap;
use std::path::Path;

use recd_storage::iceoryx2 as keys;

use crate::proof;

/// What one topic's messages look like across the files of a recording.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TopicCheck {
    /// Messages found.
    pub messages: u64,
    /// Sequence numbers in file order, per publisher as recorded.
    pub sequences: Vec<u64>,
    /// Payloads that failed their proof, with the reason.
    pub bad: Vec<String>,
    /// The user header bytes of each message.
    pub user_headers: Vec<Vec<u8>>,
}

impl TopicCheck {
    /// Whether the sequence numbers only ever increase.
    pub fn in_order(&self) -> bool {
        self.sequences.windows(2).all(|w| w[0] < w[1])
    }
}

/// Reads every file and checks every message, per channel topic.
pub fn check_files(paths: &[impl AsRef<Path>]) -> Result<BTreeMap<String, TopicCheck>, String> {
    let mut topics: BTreeMap<String, TopicCheck> = BTreeMap::new();
    for path in paths {
        let path = path.as_ref();
        let bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let stream =
            mcap::MessageStream::new(&bytes).map_err(|e| format!("{}: {e}", path.display()))?;
        for message in stream {
            let message = message.map_err(|e| format!("{}: {e}", path.display()))?;
            let header_len: usize = message
                .channel
                .metadata
                .get(keys::USER_HEADER_SIZE)
                .and_then(|s| s.parse().ok())
                .unwrap_or(0);
            let entry = topics.entry(message.channel.topic.clone()).or_default();
            entry.messages += 1;
            let (header, payload) = message.data.split_at(header_len.min(message.data.len()));
            entry.user_headers.push(header.to_vec());
            match proof::check(payload) {
                Ok(sequence) => entry.sequences.push(sequence),
                Err(error) => entry.bad.push(error.to_string()),
            }
        }
    }
    Ok(topics)
}
