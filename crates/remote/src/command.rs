//! The commands of the remote-control contract and recd's fields in their `args`.

use std::fmt;
use std::time::Duration;

use serde::{Deserialize, Deserializer, Serialize};

/// What a controller asks a recorder to do (eProsima's command names, lowercase).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RemoteCommand {
    /// Record: resume a paused session, or start one when none records.
    Start,
    /// Stop writing (a pre-trigger session keeps buffering, which it does anyway).
    Pause,
    /// Stop writing and be reported as suspended.
    Suspend,
    /// Keep the window around a moment: a trigger (a marker in a session that writes
    /// everything).
    Event,
    /// Stop the session.
    Stop,
    /// Stop every session; recd itself keeps running, as the service it is.
    Close,
}

impl RemoteCommand {
    /// Every command, in the contract's order.
    pub const ALL: [RemoteCommand; 6] = [
        Self::Start,
        Self::Pause,
        Self::Suspend,
        Self::Event,
        Self::Stop,
        Self::Close,
    ];

    /// The command's name on the wire.
    pub fn name(self) -> &'static str {
        match self {
            Self::Start => "start",
            Self::Pause => "pause",
            Self::Suspend => "suspend",
            Self::Event => "event",
            Self::Stop => "stop",
            Self::Close => "close",
        }
    }

    /// The command a name on the wire means (case-insensitive, as eProsima's).
    pub fn parse(name: &str) -> Result<Self, ArgsError> {
        Self::ALL
            .into_iter()
            .find(|command| command.name().eq_ignore_ascii_case(name.trim()))
            .ok_or_else(|| ArgsError::UnknownCommand(name.to_string()))
    }
}

impl fmt::Display for RemoteCommand {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// recd's fields in a command's `args` JSON; every one optional, no other allowed.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CommandArgs {
    /// The session; left out, the only one running (or a new one, for `start`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
    /// The trigger's moment, ns since the Unix epoch in the vehicle's time base; left
    /// out, when the command arrives.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub trigger_ns: Option<u64>,
    /// How far back from the moment to keep: seconds (a number) or a duration such as
    /// `"30s"`; left out, the whole buffer.
    #[serde(
        deserialize_with = "duration",
        serialize_with = "seconds",
        skip_serializing_if = "Option::is_none"
    )]
    pub before: Option<Duration>,
    /// How long after the moment to keep, as `before`.
    #[serde(
        deserialize_with = "duration",
        serialize_with = "seconds",
        skip_serializing_if = "Option::is_none"
    )]
    pub after: Option<Duration>,
    /// Why; it goes into the trigger's record or the marker.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// The command's id: a trigger repeated with it writes nothing new; replies carry it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// `start` only: keep this long in memory until triggered (a pre-trigger session).
    #[serde(
        deserialize_with = "duration",
        serialize_with = "seconds",
        skip_serializing_if = "Option::is_none"
    )]
    pub pre_trigger: Option<Duration>,
    /// `start` only: glob patterns of topics to record. A running session records them
    /// from now on (as `rec topics-set --add`), a new one records them (`rec start
    /// --topic`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub add_topics: Vec<String>,
    /// `start` only: glob patterns of topics to record no more (`rec topics-set
    /// --remove`), or never, for a new session (`rec start --exclude`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub remove_topics: Vec<String>,
}

impl CommandArgs {
    /// Reads `args` text: empty means no fields.
    pub fn parse(text: &str) -> Result<Self, ArgsError> {
        if text.trim().is_empty() {
            return Ok(Self::default());
        }
        serde_json::from_str(text).map_err(|error| ArgsError::Malformed(error.to_string()))
    }

    /// The args as JSON text.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("args serialize")
    }
}

/// Why a command cannot be taken.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ArgsError {
    /// The command's name is none of the contract's.
    #[error("unknown command {0:?} (recd takes start, pause, suspend, event, stop and close)")]
    UnknownCommand(String),
    /// `args` is not the JSON object recd reads.
    #[error("malformed args: {0} (recd reads a JSON object with session, trigger_ns, before, after, note, id, pre_trigger, add_topics, remove_topics)")]
    Malformed(String),
}

/// A duration given as seconds (a number) or as text such as `"500ms"`.
fn duration<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<Duration>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Given {
        Seconds(f64),
        Text(String),
    }
    let given = Option::<Given>::deserialize(deserializer)?;
    let duration = match given {
        None => return Ok(None),
        Some(Given::Seconds(seconds)) => Duration::try_from_secs_f64(seconds).map_err(|_| {
            serde::de::Error::custom(format!("{seconds} is not a number of seconds ≥ 0"))
        })?,
        Some(Given::Text(text)) => {
            recd_control::units::parse_duration(&text).map_err(serde::de::Error::custom)?
        }
    };
    Ok(Some(duration))
}

fn seconds<S: serde::Serializer>(
    duration: &Option<Duration>,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    match duration {
        Some(duration) => serializer.serialize_f64(duration.as_secs_f64()),
        None => serializer.serialize_none(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn args_read_recd_fields_in_seconds_or_durations_and_name_what_is_wrong() {
        let args = CommandArgs::parse(
            r#"{"session":"drive","trigger_ns":1795428930250000000,"before":30,"after":"500ms","note":"hard brake","id":"b-1"}"#,
        )
        .unwrap();
        assert_eq!(args.session.as_deref(), Some("drive"));
        assert_eq!(args.trigger_ns, Some(1_795_428_930_250_000_000));
        assert_eq!(args.before, Some(Duration::from_secs(30)));
        assert_eq!(args.after, Some(Duration::from_millis(500)));
        assert_eq!(CommandArgs::parse(&args.to_json()).unwrap(), args);
        assert_eq!(CommandArgs::parse("  ").unwrap(), CommandArgs::default());
        let unknown = CommandArgs::parse(r#"{"befor":3}"#)
            .unwrap_err()
            .to_string();
        assert!(unknown.contains("unknown field `befor`"), "{unknown}");
        let negative = CommandArgs::parse(r#"{"before":-1}"#)
            .unwrap_err()
            .to_string();
        assert!(negative.contains("malformed args"), "{negative}");
        assert!(CommandArgs::parse("[1]").is_err());
    }

    #[test]
    fn args_carry_topics_to_add_and_remove() {
        let args =
            CommandArgs::parse(r#"{"add_topics":["/imu"],"remove_topics":["camera/*","/x"]}"#)
                .unwrap();
        assert_eq!(args.add_topics, ["/imu"]);
        assert_eq!(args.remove_topics, ["camera/*", "/x"]);
        assert_eq!(CommandArgs::parse(&args.to_json()).unwrap(), args);
        assert_eq!(CommandArgs::default().to_json(), "{}");
    }

    #[test]
    fn commands_are_the_contracts_names() {
        assert_eq!(RemoteCommand::parse("EVENT").unwrap(), RemoteCommand::Event);
        for command in RemoteCommand::ALL {
            assert_eq!(RemoteCommand::parse(command.name()).unwrap(), command);
        }
        let unknown = RemoteCommand::parse("explode").unwrap_err().to_string();
        assert!(unknown.contains("unknown command \"explode\""), "{unknown}");
    }
}
