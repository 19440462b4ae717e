//! `[remote_control]`: commands and status over DDS (eProsima DDS Record & Replay's
//! topics and rosbag2's recorder services). Off by default.

use std::net::IpAddr;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::units;

/// Every name `allow` may hold: the contract's commands and the ROS 2 services that
/// change something (`is_paused` only reads, so it is always served).
pub const COMMAND_NAMES: [&str; 9] = [
    "start",
    "pause",
    "resume",
    "suspend",
    "event",
    "stop",
    "close",
    "split_bagfile",
    "snapshot",
];

/// The `[remote_control]` table of recd.toml.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RemoteControlConfig {
    /// Take commands from the DDS domain. Anyone who can reach it can then drive recd
    /// within `allow`; off by default.
    pub enabled: bool,
    /// Publish recd's status on the status topic (so `rec fleet status` sees it); by
    /// default as `enabled`.
    pub status: Option<bool>,
    /// The DDS domain of the control topics.
    pub domain: u16,
    /// The addresses (of this host's interfaces) DDS control uses; none uses all.
    pub interfaces: Vec<IpAddr>,
    /// The commands taken (see [`COMMAND_NAMES`]); others are answered with a refusal.
    pub allow: Vec<String>,
    /// This recorder's name in the fleet; the host's name by default.
    pub recorder: Option<String>,
    /// The command topic.
    pub command_topic: String,
    /// The status topic.
    pub status_topic: String,
    /// How often the status is published when nothing changes.
    #[serde(with = "units::duration")]
    pub status_interval: Duration,
    /// Serve rosbag2's recorder services (`~/pause`, `~/resume`, `~/is_paused`,
    /// `~/split_bagfile`, `~/snapshot`, `~/stop`) when enabled.
    pub ros2_services: bool,
    /// The ROS 2 node name the services are under (`/<ros2_node>/pause`, …), rosbag2's
    /// recorder's by default so that its scripts work unchanged.
    pub ros2_node: String,
}

impl Default for RemoteControlConfig {
    fn default() -> Self {
        Self {
            enabled: false,
            status: None,
            domain: 0,
            interfaces: Vec::new(),
            allow: COMMAND_NAMES.iter().map(|name| name.to_string()).collect(),
            recorder: None,
            command_topic: recd_remote::COMMAND_TOPIC.into(),
            status_topic: recd_remote::STATUS_TOPIC.into(),
            status_interval: Duration::from_secs(5),
            ros2_services: true,
            ros2_node: "rosbag2_recorder".into(),
        }
    }
}

impl RemoteControlConfig {
    /// Whether the status is published.
    pub fn publishes_status(&self) -> bool {
        self.status.unwrap_or(self.enabled)
    }

    /// Whether DDS control is on at all (commands or status).
    pub fn active(&self) -> bool {
        self.enabled || self.publishes_status()
    }

    /// Whether `name` (a command or service) is allowed.
    pub fn allows(&self, name: &str) -> bool {
        self.allow.iter().any(|allowed| allowed == name)
    }

    /// Checks what TOML cannot: the allow-list's names, the domain, the node name.
    pub fn validate(&self) -> Result<(), String> {
        if let Some(unknown) = self
            .allow
            .iter()
            .find(|name| !COMMAND_NAMES.contains(&name.as_str()))
        {
            return Err(format!(
                "[remote_control] allow: {unknown:?} is not a command (they are {})",
                COMMAND_NAMES.join(", ")
            ));
        }
        if self.domain > 232 {
            return Err(format!(
                "[remote_control] domain {} is beyond DDS's 232",
                self.domain
            ));
        }
        let valid_node = self
            .ros2_node
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_')
            && self
                .ros2_node
                .starts_with(|c: char| c.is_ascii_alphabetic());
        if !valid_node {
            return Err(format!(
                "[remote_control] ros2_node {:?} is not a ROS 2 node name (letters, digits, _; a letter first)",
                self.ros2_node
            ));
        }
        if self.status_interval < Duration::from_millis(100) {
            return Err("[remote_control] status_interval must be at least 100ms".into());
        }
        Ok(())
    }
}
