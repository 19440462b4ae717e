//! The topics of one vehicle: `<prefix>/<vehicle>/online`, `…/holdings`, `…/requests`, and
//! the fleet-wide `<prefix>/all/requests`.

/// The prefix of every topic unless `[fleet] prefix` says otherwise.
pub const DEFAULT_PREFIX: &str = "recd";
/// The vehicle id of requests meant for every vehicle; no vehicle may be called so.
pub const ALL: &str = "all";

/// Why a prefix or vehicle id cannot make a topic; names the value and the rule.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TopicError {
    /// A vehicle id that is empty, holds `/`, `+`, `#` or a control character, or is `all`.
    #[error("vehicle id {0:?} cannot be one level of an MQTT topic: it must be non-empty, without '/', '+', '#' or control characters, and not \"all\"")]
    Vehicle(String),
    /// A prefix with an empty level, a wildcard or a control character, or starting
    /// with `$` (the broker's own topics).
    #[error("prefix {0:?} cannot start MQTT topics: its levels must be non-empty, without '+', '#' or control characters, and it must not start with '$'")]
    Prefix(String),
}

/// Where one vehicle publishes and which requests it reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Topics {
    prefix: String,
    vehicle: String,
}

impl Topics {
    /// The topics of `vehicle` under `prefix` (levels separated by `/`).
    pub fn new(prefix: &str, vehicle: &str) -> Result<Self, TopicError> {
        let bad = |c: char| c == '+' || c == '#' || c.is_control();
        if prefix.starts_with('$')
            || prefix
                .split('/')
                .any(|level| level.is_empty() || level.contains(bad))
        {
            return Err(TopicError::Prefix(prefix.to_string()));
        }
        if vehicle.is_empty() || vehicle == ALL || vehicle.contains(|c| c == '/' || bad(c)) {
            return Err(TopicError::Vehicle(vehicle.to_string()));
        }
        Ok(Self {
            prefix: prefix.to_string(),
            vehicle: vehicle.to_string(),
        })
    }

    /// The vehicle's id.
    pub fn vehicle(&self) -> &str {
        &self.vehicle
    }

    /// Whether the vehicle is connected (retained [`Presence`](crate::Presence)).
    pub fn online(&self) -> String {
        self.of(&self.vehicle, "online")
    }

    /// What the vehicle holds (retained [`Holdings`](crate::Holdings)).
    pub fn holdings(&self) -> String {
        self.of(&self.vehicle, "holdings")
    }

    /// Requests for this vehicle.
    pub fn requests(&self) -> String {
        self.of(&self.vehicle, "requests")
    }

    /// Where the vehicle replies to a request that names no response topic.
    pub fn replies(&self) -> String {
        self.of(&self.vehicle, "replies")
    }

    /// Requests for every vehicle.
    pub fn all_requests(&self) -> String {
        self.of(ALL, "requests")
    }

    fn of(&self, vehicle: &str, what: &str) -> String {
        format!("{}/{vehicle}/{what}", self.prefix)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn topics_are_prefix_vehicle_and_what() {
        let topics = Topics::new("fleet/recd", "car-3").unwrap();
        assert_eq!(topics.online(), "fleet/recd/car-3/online");
        assert_eq!(topics.holdings(), "fleet/recd/car-3/holdings");
        assert_eq!(topics.requests(), "fleet/recd/car-3/requests");
        assert_eq!(topics.all_requests(), "fleet/recd/all/requests");
        assert_eq!(topics.replies(), "fleet/recd/car-3/replies");
    }

    #[test]
    fn ids_and_prefixes_that_would_change_the_topic_layout_are_refused() {
        for vehicle in ["", "a/b", "car+", "car#", "all", "car\n"] {
            assert_eq!(
                Topics::new("recd", vehicle),
                Err(TopicError::Vehicle(vehicle.to_string())),
                "{vehicle:?}"
            );
        }
        for prefix in ["", "a//b", "/recd", "recd/", "re+cd", "$SYS", "recd/#"] {
            assert_eq!(
                Topics::new(prefix, "car"),
                Err(TopicError::Prefix(prefix.to_string())),
                "{prefix:?}"
            );
        }
        let error = Topics::new("recd", "a/b").unwrap_err().to_string();
        assert!(
            error.contains("\"a/b\"") && error.contains("'/'"),
            "{error}"
        );
    }
}
