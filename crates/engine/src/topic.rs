//! A recorded topic: how it is named and described in the file, and its counters.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};

use recd_storage::iceoryx2 as keys;

/// Type details of a payload or user header, as iceoryx2 keeps them in the static config.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TypeDetails {
    /// The type's name.
    pub type_name: String,
    /// Size in bytes (of one element, for a slice payload).
    pub size: usize,
    /// Alignment in bytes.
    pub alignment: usize,
    /// `FixedSize` or `Dynamic`.
    pub variant: String,
}

/// What the writer needs to know of a topic; shared by both threads and the status.
#[derive(Debug)]
pub struct Topic {
    /// Index of the topic within its recording.
    pub index: u32,
    /// The name the channel gets in the file.
    pub name: String,
    /// The iceoryx2 service it is recorded from.
    pub service: String,
    /// The payload's type details; its type name names the schema.
    pub payload: TypeDetails,
    /// The user header's type details.
    pub user_header: TypeDetails,
    /// Non-zero when the service keeps a history for late subscribers (a latched topic).
    pub history_size: usize,
    /// Live counts.
    pub counters: TopicCounters,
}

impl Topic {
    /// Channel metadata describing the service and its types (keys in
    /// [`recd_storage::iceoryx2`]).
    pub fn channel_metadata(&self) -> BTreeMap<String, String> {
        let entries = [
            (keys::SERVICE_NAME, self.service.clone()),
            (keys::PAYLOAD_TYPE_NAME, self.payload.type_name.clone()),
            (keys::PAYLOAD_SIZE, self.payload.size.to_string()),
            (keys::PAYLOAD_ALIGNMENT, self.payload.alignment.to_string()),
            (keys::PAYLOAD_VARIANT, self.payload.variant.clone()),
            (
                keys::USER_HEADER_TYPE_NAME,
                self.user_header.type_name.clone(),
            ),
            (keys::USER_HEADER_SIZE, self.user_header.size.to_string()),
            (
                keys::USER_HEADER_ALIGNMENT,
                self.user_header.alignment.to_string(),
            ),
            (keys::USER_HEADER_VARIANT, self.user_header.variant.clone()),
            (keys::HISTORY_SIZE, self.history_size.to_string()),
        ];
        entries
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect()
    }

    /// Whether the last message is repeated at the start of every new file.
    pub fn is_latched(&self) -> bool {
        self.history_size > 0
    }

    /// Whether the user header is rmw_iceoryx2's, carrying a source time stamp and a
    /// sequence number.
    pub fn has_rmw_header(&self) -> bool {
        self.user_header.type_name == keys::RMW_MESSAGE_INFO_HEADER && self.user_header.size == 16
    }
}

/// The name a service's channel gets: rmw_iceoryx2 topics by their ROS name.
pub fn channel_name(service: &str) -> String {
    match service.strip_prefix(keys::RMW_TOPIC_PREFIX) {
        Some(ros) => format!("/{}", ros.trim_start_matches('/')),
        None => service.to_string(),
    }
}

/// Reads rmw_iceoryx2's user header: (source time stamp in ns, sequence number).
pub fn read_rmw_header(header: &[u8]) -> Option<(i64, u64)> {
    let stamp = i64::from_ne_bytes(header.get(0..8)?.try_into().ok()?);
    let sequence = u64::from_ne_bytes(header.get(8..16)?.try_into().ok()?);
    Some((stamp, sequence))
}

/// Per-topic counts, updated without locks while recording.
#[derive(Debug, Default)]
pub struct TopicCounters {
    receive: ReceiveCounts,
    write: WriteCounts,
}

/// The receive thread's counts, on a cache line of their own so that the writer
/// thread's updates do not bounce it between cores at every message.
#[derive(Debug, Default)]
#[repr(align(128))]
struct ReceiveCounts {
    received: AtomicU64,
    dropped: AtomicU64,
    lost: AtomicU64,
}

/// The writer thread's counts.
#[derive(Debug, Default)]
#[repr(align(128))]
struct WriteCounts {
    written: AtomicU64,
    bytes_written: AtomicU64,
}

/// A snapshot of [`TopicCounters`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct TopicCounts {
    /// Samples taken from iceoryx2.
    pub received: u64,
    /// Received samples that were not written: the handoff was full, or the write failed.
    pub dropped: u64,
    /// Samples never received: gaps in the publishers' sequence numbers.
    pub lost: u64,
    /// Messages written to the file(s), latched repeats not included.
    pub written: u64,
    /// Payload bytes written (user header included).
    pub bytes_written: u64,
}

impl TopicCounters {
    pub(crate) fn add_received(&self) {
        self.receive.received.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn add_dropped(&self) {
        self.receive.dropped.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn add_lost(&self, n: u64) {
        self.receive.lost.fetch_add(n, Ordering::Relaxed);
    }

    pub(crate) fn add_written(&self, bytes: u64) {
        self.write.written.fetch_add(1, Ordering::Relaxed);
        self.write.bytes_written.fetch_add(bytes, Ordering::Relaxed);
    }

    /// The counts as of now.
    pub fn snapshot(&self) -> TopicCounts {
        TopicCounts {
            received: self.receive.received.load(Ordering::Relaxed),
            dropped: self.receive.dropped.load(Ordering::Relaxed),
            lost: self.receive.lost.load(Ordering::Relaxed),
            written: self.write.written.load(Ordering::Relaxed),
            bytes_written: self.write.bytes_written.load(Ordering::Relaxed),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ros_topics_get_their_ros_names() {
        assert_eq!(channel_name("ros2://topics/chatter"), "/chatter");
        assert_eq!(channel_name("ros2://topics/a/b"), "/a/b");
        assert_eq!(channel_name("camera/front"), "camera/front");
    }

    #[test]
    fn rmw_header_is_read_in_native_order() {
        let mut bytes = Vec::new();
        bytes.extend_from_slice(&(-5i64).to_ne_bytes());
        bytes.extend_from_slice(&42u64.to_ne_bytes());
        assert_eq!(read_rmw_header(&bytes), Some((-5, 42)));
        assert_eq!(read_rmw_header(&bytes[..10]), None);
    }
}
