//! eProsima DDS Record & Replay's remote-control topics: a controller writes
//! [`DdsRecorderCommand`] on [`COMMAND_TOPIC`], each recorder writes
//! [`DdsRecorderStatus`] on [`STATUS_TOPIC`].

use rustdds::policy::{Durability, History, Reliability};
use rustdds::{
    DomainParticipant, Duration as DdsDuration, QosPolicies, QosPolicyBuilder, Topic, TopicKind,
};
use serde::{Deserialize, Serialize};

/// The default command topic.
pub const COMMAND_TOPIC: &str = "/ddsrecorder/command";
/// The default status topic.
pub const STATUS_TOPIC: &str = "/ddsrecorder/status";
/// The command's DDS type name (IDL `struct DdsRecorderCommand`, no module).
pub const COMMAND_TYPE: &str = "DdsRecorderCommand";
/// The status's DDS type name.
pub const STATUS_TYPE: &str = "DdsRecorderStatus";

/// A command to recorders: `start`, `pause`, `event`, … with its `args` (JSON text).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DdsRecorderCommand {
    /// The command's name.
    pub command: String,
    /// Its arguments, a JSON object as text (may be empty).
    pub args: String,
}

/// A recorder's state change or answer: the state before and after, and recd's detail
/// as JSON text ([`crate::StatusInfo`]).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DdsRecorderStatus {
    /// The state before (e.g. `PAUSED`).
    pub previous: String,
    /// The state now.
    pub current: String,
    /// Detail, JSON text.
    pub info: String,
}

/// Commands: reliable, volatile (what any controller's writer offers), the last 16.
pub fn command_qos() -> QosPolicies {
    QosPolicyBuilder::new()
        .reliability(Reliability::Reliable {
            max_blocking_time: DdsDuration::from_millis(100),
        })
        .durability(Durability::Volatile)
        .history(History::KeepLast { depth: 16 })
        .build()
}

/// Statuses: reliable, and the last one kept for a reader that joins later (`rec fleet
/// status` sees each recorder at once), which volatile readers accept too.
pub fn status_qos() -> QosPolicies {
    QosPolicyBuilder::new()
        .reliability(Reliability::Reliable {
            max_blocking_time: DdsDuration::from_millis(100),
        })
        .durability(Durability::TransientLocal)
        .history(History::KeepLast { depth: 16 })
        .build()
}

/// The two topics of the contract in a participant.
pub struct Topics {
    /// Where commands go.
    pub command: Topic,
    /// Where statuses go.
    pub status: Topic,
}

impl Topics {
    /// Creates the command topic `command` and the status topic `status` in
    /// `participant`, with the contract's types and QoS.
    pub fn create(
        participant: &DomainParticipant,
        command: &str,
        status: &str,
    ) -> Result<Self, String> {
        let topic = |name: &str, type_name: &str, qos: QosPolicies, what: &str| {
            participant
                .create_topic(
                    name.to_string(),
                    type_name.to_string(),
                    &qos,
                    TopicKind::NoKey,
                )
                .map_err(|error| format!("cannot create the {what} topic {name}: {error}"))
        };
        Ok(Self {
            command: topic(command, COMMAND_TYPE, command_qos(), "command")?,
            status: topic(status, STATUS_TYPE, status_qos(), "status")?,
        })
    }
}
