//! Topics: what `rec topics` finds on offer, and each recorded topic's counts and rates.

use recd_health::TopicHealth;
use serde::{Deserialize, Serialize};

/// Which sources `rec topics` looks at, and for how long.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct TopicsRequest {
    /// Look at DDS / ROS 2 topics of this domain too (overrides recd's configuration).
    pub dds_domain: Option<u16>,
    /// Leave iceoryx2 shared memory out.
    pub no_iceoryx2: bool,
    /// Milliseconds of discovery before rates are measured.
    pub discovery_ms: u64,
    /// Milliseconds over which rates are measured.
    pub window_ms: u64,
    /// Glob patterns of message types to list (`rec topics --topic-type`); empty means
    /// all.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub topic_types: Vec<String>,
    /// Glob patterns of message types to leave out.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub exclude_topic_types: Vec<String>,
}

/// Topics that could be recorded now.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TopicsFound {
    /// Topics, in the order found (`rec topics` sorts them by name).
    pub topics: Vec<TopicOnOffer>,
    /// Services that match but could not be subscribed to, with the reason.
    pub problems: std::collections::BTreeMap<String, String>,
}

/// One topic that could be recorded now.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TopicOnOffer {
    /// Its channel name in a recording (`/chatter` for DDS topic `rt/chatter`).
    pub name: String,
    /// Where it comes from: the iceoryx2 service, or `dds:` and the DDS topic.
    pub service: String,
    /// Its message type.
    pub type_name: String,
    /// Publishers (iceoryx2) or writers (DDS).
    pub publishers: u64,
    /// Messages per second.
    pub messages_per_s: f64,
    /// Payload bytes per second.
    pub bytes_per_s: f64,
}

/// A topic's counts as recd reports them: live in a status, final in a stop report and
/// in the catalog.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TopicReport {
    /// The channel name in the file.
    pub name: String,
    /// The source's name of the topic: the iceoryx2 service name, or `dds:<topic>` for a
    /// DDS topic.
    pub service: String,
    /// Samples taken from the source.
    pub received: u64,
    /// Messages written.
    pub written: u64,
    /// Received but not written (full handoff, failed write).
    pub dropped: u64,
    /// Never received: gaps in the publishers' sequence numbers.
    pub lost: u64,
    /// Receive passes that found the subscriber's queue full: samples may have been
    /// overwritten there that no sequence number shows.
    #[serde(default)]
    pub overflows: u64,
    /// Payload bytes written.
    pub bytes_written: u64,
    /// Received while the session was paused, so not written.
    #[serde(default)]
    pub paused: u64,
    /// Let go of by a pre-trigger session's buffer without a trigger.
    #[serde(default)]
    pub evicted: u64,
    /// Not kept by the topic's rate limit or downsampling (released unwritten).
    #[serde(default)]
    pub filtered: u64,
    /// Arrived again and let go of: the publisher's sequence number was seen already.
    /// Not in `received` (`received + repeated` is what arrived).
    #[serde(default)]
    pub repeated: u64,
    /// A receive pass found the queue full on a topic whose samples carry no sequence
    /// numbers: samples may have been overwritten there, and nobody can say how many.
    #[serde(default)]
    pub unknown_loss: bool,
}

/// A topic's counts with its recent rates.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RatedTopic {
    /// The counts (their fields appear inline on the wire).
    #[serde(flatten)]
    pub report: TopicReport,
    /// Messages per second lately (status only; 0 in a stop report).
    pub messages_per_s: f64,
    /// Payload bytes per second lately (status only; 0 in a stop report).
    pub bytes_per_s: f64,
    /// Its health: state, since when, what is expected of it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub health: Option<TopicHealth>,
    /// When its newest sample was received, ns since the Unix epoch (renewed every 20 ms
    /// by the health watch); absent before its first sample, and in a stop report.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_sample_ns: Option<u64>,
}
