//! Reads recorded files back with the `mcap` crate (an independent reader) and proves
//! every payload of the load generator intact and in order.

use std::collections::BTreeMap;
use std::path::Path;

use recd_storage::iceoryx2 as keys;

use crate::{blob, proof};

/// The message encoding of DDS / ROS 2 channels.
const CDR: &str = "cdr";

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
    /// Per message, `log_time` minus `publish_time` in ns: how long after the publisher
    /// stamped it the recorder received it (the load generator stamps just before it
    /// writes and sends).
    pub receive_lags_ns: Vec<i64>,
    /// Per message, its `log_time` (when the recorder received it), in ns.
    pub log_times_ns: Vec<u64>,
}

impl TopicCheck {
    /// Whether the sequence numbers only ever increase.
    pub fn in_order(&self) -> bool {
        self.sequences.windows(2).all(|w| w[0] < w[1])
    }
}

/// Reads every file and checks every message, per channel topic. Messages of `cdr`
/// channels are `recd_load/msg/Blob`s (see [`blob`]) whose data holds the proof; others
/// are iceoryx2 samples (user header, then the payload with its proof). recd's own
/// `recd/health` channel is left out.
pub fn check_files(paths: &[impl AsRef<Path>]) -> Result<BTreeMap<String, TopicCheck>, String> {
    let mut topics: BTreeMap<String, TopicCheck> = BTreeMap::new();
    for path in paths {
        let path = path.as_ref();
        let bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let stream =
            mcap::MessageStream::new(&bytes).map_err(|e| format!("{}: {e}", path.display()))?;
        for message in stream {
            let message = message.map_err(|e| format!("{}: {e}", path.display()))?;
            if message.channel.topic == recd_health::HEALTH_CHANNEL {
                // recd's own account of the topics' health, not a publisher's message.
                continue;
            }
            let header_len: usize = message
                .channel
                .metadata
                .get(keys::USER_HEADER_SIZE)
                .and_then(|s| s.parse().ok())
                .unwrap_or(0);
            let entry = topics.entry(message.channel.topic.clone()).or_default();
            entry.messages += 1;
            entry
                .receive_lags_ns
                .push(message.log_time as i64 - message.publish_time as i64);
            entry.log_times_ns.push(message.log_time);
            if message.channel.message_encoding == CDR {
                // A DDS sample of `recd-load dds`: the proven payload is the Blob's data.
                entry.user_headers.push(Vec::new());
                match check_blob(&message.data) {
                    Ok(sequence) => entry.sequences.push(sequence),
                    Err(error) => entry.bad.push(error),
                }
                continue;
            }
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

/// Checks the proof inside a `Blob` and that the message's own sequence field agrees.
fn check_blob(message: &[u8]) -> Result<u64, String> {
    let blob = blob::parse(message).map_err(|e| e.to_string())?;
    let sequence = proof::check(blob.data).map_err(|e| e.to_string())?;
    if sequence as u32 != blob.sequence {
        return Err(format!(
            "Blob sequence {} disagrees with its payload's {sequence}",
            blob.sequence
        ));
    }
    Ok(sequence)
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    /// A Blob of `len` bytes carrying the proven payload of `sequence`.
    fn blob_message(len: usize, sequence: u64) -> Vec<u8> {
        let mut message = blob::empty_message(len);
        let data = blob::data_mut(&mut message);
        data.fill(3);
        let crc = proof::body_checksum(&data[proof::PROOF_LEN..]);
        proof::stamp(data, sequence, crc);
        blob::stamp(&mut message, sequence, 1);
        message
    }

    #[test]
    fn cdr_channels_are_checked_inside_their_blobs() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("dds.mcap");
        let mut writer = mcap::Writer::new(std::fs::File::create(&path).unwrap()).unwrap();
        let schema = writer
            .add_schema(
                blob::ROS_TYPE_NAME,
                "ros2msg",
                blob::MESSAGE_DEFINITION.as_bytes(),
            )
            .unwrap();
        let channel = writer
            .add_channel(schema, "/t", CDR, &BTreeMap::new())
            .unwrap();
        let mut messages: Vec<Vec<u8>> = (0..3).map(|s| blob_message(100, s)).collect();
        messages[2][50] ^= 1;
        for (sequence, data) in messages.iter().enumerate() {
            let header = mcap::records::MessageHeader {
                channel_id: channel,
                sequence: sequence as u32,
                log_time: 1,
                publish_time: 1,
            };
            writer.write_to_known_channel(&header, data).unwrap();
        }
        writer.finish().unwrap();
        drop(writer);

        let checks = check_files(&[&path]).unwrap();
        let check = &checks["/t"];
        assert_eq!(check.messages, 3);
        assert_eq!(check.sequences, vec![0, 1]);
        assert_eq!(check.bad, vec!["payload 2 fails its checksum".to_string()]);
    }
}
