//! A state change as the `recd/health` channel of a file carries it (JSON, described by a
//! JSON Schema, so Foxglove's State Transitions and Raw Messages panels show it).

use serde::{Deserialize, Serialize};

use crate::state::HealthState;

/// The channel (topic) name of the health messages in a file.
pub const HEALTH_CHANNEL: &str = "recd/health";

/// The schema name of the health messages.
pub const HEALTH_SCHEMA_NAME: &str = "recd.HealthEvent";

/// The JSON Schema every health message validates against.
pub const HEALTH_SCHEMA: &str = r#"{
  "$schema": "https://json-schema.org/draft/2020-12/schema",
  "title": "recd.HealthEvent",
  "description": "A recorded topic's health changed: it stalled, became slow, went missing, or came back.",
  "type": "object",
  "properties": {
    "topic": {"type": "string", "description": "The topic (channel name); for a required pattern that matched nothing, the pattern."},
    "from": {"type": "string", "enum": ["unchecked", "ok", "slow", "stalled", "missing"]},
    "to": {"type": "string", "enum": ["unchecked", "ok", "slow", "stalled", "missing"]},
    "since_ns": {"type": "integer", "minimum": 0, "description": "Since when the new state holds (stalled: the last sample before the silence), ns since the epoch."},
    "gap_ns": {"type": ["integer", "null"], "minimum": 0, "description": "On the way back from stalled: the silence, last sample to this one, in ns."},
    "min_rate": {"type": ["number", "null"], "description": "Samples per second expected at least."},
    "max_gap_ns": {"type": ["integer", "null"], "minimum": 0, "description": "The longest silence expected, in ns."},
    "required": {"type": "boolean"}
  },
  "required": ["topic", "from", "to", "since_ns", "gap_ns", "min_rate", "max_gap_ns", "required"],
  "additionalProperties": false
}"#;

/// A topic's health changed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HealthEvent {
    /// The topic's channel name (or the required pattern that matched nothing).
    pub topic: String,
    /// The state it left.
    pub from: HealthState,
    /// The state it is in now.
    pub to: HealthState,
    /// Since when the new state holds, ns since the epoch.
    pub since_ns: u64,
    /// Leaving `stalled`: the silence, from the last sample before it to the first after.
    pub gap_ns: Option<u64>,
    /// The expectation: samples per second at least.
    pub min_rate: Option<f64>,
    /// The expectation: the longest silence, in ns.
    pub max_gap_ns: Option<u64>,
    /// Whether the topic is required.
    pub required: bool,
}

impl HealthEvent {
    /// Whether the change is for the worse (logged as a warning) rather than a recovery.
    pub fn is_worse(&self) -> bool {
        rank(self.to) > rank(self.from)
    }

    /// The message's bytes in the `recd/health` channel.
    pub fn to_json(&self) -> Vec<u8> {
        serde_json::to_vec(self).expect("a health event serializes")
    }
}

fn rank(state: HealthState) -> u8 {
    match state {
        HealthState::Unchecked | HealthState::Ok => 0,
        HealthState::Slow => 1,
        HealthState::Stalled => 2,
        HealthState::Missing => 3,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_schema_is_json_and_names_every_field_an_event_has() {
        let schema: serde_json::Value = serde_json::from_str(HEALTH_SCHEMA).unwrap();
        let event = HealthEvent {
            topic: "camera/front".into(),
            from: HealthState::Ok,
            to: HealthState::Stalled,
            since_ns: 5,
            gap_ns: None,
            min_rate: Some(25.0),
            max_gap_ns: Some(200_000_000),
            required: true,
        };
        let value: serde_json::Value = serde_json::from_slice(&event.to_json()).unwrap();
        let properties = schema["properties"].as_object().unwrap();
        let fields = value.as_object().unwrap();
        assert_eq!(
            properties.keys().collect::<Vec<_>>(),
            fields.keys().collect::<Vec<_>>(),
            "the schema and the event have the same fields"
        );
        assert_eq!(value["to"], "stalled");
        assert!(event.is_worse());
    }
}
