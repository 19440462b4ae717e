//! rmw_zenoh's QoS field of a liveliness token:
//! `<reliability>:<durability>:<history>,<depth>:<deadline s>,<ns>:<lifespan s>,<ns>:<liveliness>,<lease s>,<ns>`,
//! each value the number of its `rmw_qos_*_policy_t` and an empty value that of
//! rmw_zenoh's default profile: reliable, volatile, keep last 42, infinite durations,
//! automatic liveliness (`::,7:,:,:,,` is reliable, volatile, keep last 7). Peers older
//! than Jazzy's rmw_zenoh 0.2.3 had transient local as their default: an empty
//! durability from them is read as volatile.

use std::time::Duration;

use recd_ros2::qos::{Durability, History, Liveliness, QosProfile, Reliability};

/// The profile of a QoS field, or `None` when it does not parse.
pub(super) fn parse(field: &str) -> Option<QosProfile> {
    let parts: Vec<&str> = field.split(':').collect();
    let [reliability, durability, history, deadline, lifespan, liveliness] = parts[..] else {
        return None;
    };
    let (history, depth) = history.split_once(',')?;
    let (liveliness, lease) = liveliness.split_once(',')?;
    Some(QosProfile {
        reliability: match number(reliability)? {
            None | Some(1) => Reliability::Reliable,
            Some(2) => Reliability::BestEffort,
            Some(0) => Reliability::SystemDefault,
            Some(_) => Reliability::Unknown,
        },
        durability: match number(durability)? {
            None | Some(2) => Durability::Volatile,
            Some(1) => Durability::TransientLocal,
            Some(0) => Durability::SystemDefault,
            Some(_) => Durability::Unknown,
        },
        history: match number(history)? {
            None | Some(1) => History::KeepLast,
            Some(2) => History::KeepAll,
            Some(0) => History::SystemDefault,
            Some(_) => History::Unknown,
        },
        depth: number(depth)?.unwrap_or(DEFAULT_DEPTH) as u32,
        deadline: duration(deadline)?,
        lifespan: duration(lifespan)?,
        liveliness: match number(liveliness)? {
            None | Some(1) => Liveliness::Automatic,
            Some(3) => Liveliness::ManualByTopic,
            Some(0) => Liveliness::SystemDefault,
            Some(_) => Liveliness::Unknown,
        },
        liveliness_lease_duration: duration(lease)?,
        avoid_ros_namespace_conventions: false,
    })
}

/// The QoS field of a token for `profile`, values of rmw_zenoh's default profile left
/// empty, as rmw_zenoh writes it.
pub fn to_field(profile: &QosProfile) -> String {
    let reliability = match profile.reliability {
        Reliability::BestEffort => "2",
        _ => "",
    };
    let durability = match profile.durability {
        Durability::TransientLocal => "1",
        _ => "",
    };
    let (history, depth) = match profile.history {
        History::KeepAll => ("2", String::new()),
        _ if u64::from(profile.depth) == DEFAULT_DEPTH || profile.depth == 0 => ("", String::new()),
        _ => ("", profile.depth.to_string()),
    };
    let liveliness = match profile.liveliness {
        Liveliness::ManualByTopic => "3",
        _ => "",
    };
    format!(
        "{reliability}:{durability}:{history},{depth}:{}:{}:{liveliness},{}",
        duration_field(profile.deadline),
        duration_field(profile.lifespan),
        duration_field(profile.liveliness_lease_duration)
    )
}

fn duration_field(duration: Option<Duration>) -> String {
    match duration {
        Some(d) => format!("{},{}", d.as_secs(), d.subsec_nanos()),
        None => ",".into(),
    }
}

/// The depth of rmw_zenoh's default profile, which its tokens leave out.
const DEFAULT_DEPTH: u64 = 42;

/// Whether a publisher keeps its samples for late subscribers.
pub(super) fn transient_local(profile: &QosProfile) -> bool {
    profile.durability == Durability::TransientLocal
}

/// An empty value (`None` inside) or a number; `None` when it is neither.
fn number(text: &str) -> Option<Option<u64>> {
    if text.is_empty() {
        return Some(None);
    }
    text.parse().ok().map(Some)
}

/// `<s>,<ns>`: empty parts are rmw's default, an infinite duration (`None` inside).
fn duration(text: &str) -> Option<Option<Duration>> {
    let (seconds, nanos) = text.split_once(',')?;
    match (number(seconds)?, number(nanos)?) {
        (None, None) => Some(None),
        (s, n) => Some(Some(
            Duration::from_secs(s.unwrap_or(0)) + Duration::from_nanos(n.unwrap_or(0)),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_values_are_rmws_defaults() {
        assert_eq!(parse("::,:,:,:,,").unwrap().depth, 42);
        let profile = parse("::,7:,:,:,,").unwrap();
        assert_eq!(profile.reliability, Reliability::Reliable);
        assert_eq!(profile.durability, Durability::Volatile);
        assert_eq!(profile.history, History::KeepLast);
        assert_eq!(profile.depth, 7);
        assert_eq!(profile.deadline, None);
        assert_eq!(profile.liveliness, Liveliness::Automatic);
        assert!(!transient_local(&profile));
    }

    #[test]
    fn numbers_are_rmws_policies() {
        let profile = parse("2:1:2,:1,500:,:3,4,0").unwrap();
        assert_eq!(profile.reliability, Reliability::BestEffort);
        assert_eq!(profile.durability, Durability::TransientLocal);
        assert_eq!(profile.history, History::KeepAll);
        assert_eq!(profile.deadline, Some(Duration::new(1, 500)));
        assert_eq!(profile.lifespan, None);
        assert_eq!(profile.liveliness, Liveliness::ManualByTopic);
        assert_eq!(
            profile.liveliness_lease_duration,
            Some(Duration::from_secs(4))
        );
        assert!(transient_local(&profile));
        assert_eq!(parse(&to_field(&profile)), Some(profile));
        assert_eq!(to_field(&parse("::,7:,:,:,,").unwrap()), "::,7:,:,:,,");
        assert_eq!(parse("1:1"), None);
        assert_eq!(parse("x::,7:,:,:,,"), None);
    }
}
