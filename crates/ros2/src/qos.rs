//! The `offered_qos_profiles` channel metadata rosbag2 writes: the QoS each writer of a topic
//! offered, as YAML. Written here, read back (for a replay) by [`parse_offered_qos_profiles`].
//!
//! rosbag2_storage_mcap puts `serialize_rclcpp_qos_vector(offered_qos_profiles)` under that
//! key (`mcap_storage.cpp`). The encoding is rosbag2_storage's `qos.cpp`
//! (`YAML::convert<rclcpp::QoS>::encode`) at metadata version 9 (Jazzy and later), dumped
//! by yaml-cpp's `YAML::Dump`:
//!
//! - a block sequence with one map per profile, keys in this order: `history`, `depth`,
//!   `reliability`, `durability`, `deadline`, `lifespan`, `liveliness`,
//!   `liveliness_lease_duration`, `avoid_ros_namespace_conventions`;
//! - policies as rmw's `rmw_qos_*_policy_to_str` spells them (`keep_last`, `best_effort`,
//!   `transient_local`, `manual_by_topic`, `system_default`, …), and `unknown` for the
//!   unknown value;
//! - durations as a nested map `sec:`/`nsec:` (an `rmw_time_t`), infinite as rmw's
//!   `RMW_DURATION_INFINITE`, `sec: 9223372036` `nsec: 854775807`;
//! - `avoid_ros_namespace_conventions` as `true`/`false`;
//! - two-space indentation, profiles separated by a newline, no newline at the end (yaml-cpp
//!   ends a document without one); an empty list is `[]`.

mod read;

use std::time::Duration;

pub use read::{parse_offered_qos_profiles, QosReadError};

/// `RMW_DURATION_INFINITE`'s seconds (rmw/time.h): `i64::MAX` nanoseconds.
const INFINITE_SEC: u64 = 9_223_372_036;
/// `RMW_DURATION_INFINITE`'s nanoseconds.
const INFINITE_NSEC: u32 = 854_775_807;

/// One writer's offered QoS, as rosbag2 stores it in the `offered_qos_profiles` channel
/// metadata. A duration of `None` is infinite.
///
/// What a DDS writer's discovery data (SEDP) says maps one to one, except history: SEDP does
/// not carry it, so rmw reports a discovered writer's history as [`History::Unknown`] with
/// depth 0, and rosbag2 records that.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct QosProfile {
    /// History kind.
    pub history: History,
    /// History depth (0 when unknown).
    pub depth: u32,
    /// Reliability kind.
    pub reliability: Reliability,
    /// Durability kind.
    pub durability: Durability,
    /// Deadline period; `None` is infinite.
    pub deadline: Option<Duration>,
    /// Lifespan; `None` is infinite.
    pub lifespan: Option<Duration>,
    /// Liveliness kind.
    pub liveliness: Liveliness,
    /// Liveliness lease duration; `None` is infinite.
    pub liveliness_lease_duration: Option<Duration>,
    /// Whether the topic and type names are used without ROS's `rt/` and `dds_` mangling.
    pub avoid_ros_namespace_conventions: bool,
}

/// The history policy (`rmw_qos_history_policy_t`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum History {
    /// The DDS implementation's default.
    SystemDefault,
    /// Keep the last `depth` samples.
    KeepLast,
    /// Keep all samples.
    KeepAll,
    /// Not known (a discovered endpoint's history is not announced).
    Unknown,
}

/// The reliability policy (`rmw_qos_reliability_policy_t`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Reliability {
    /// Samples may be lost.
    BestEffort,
    /// Lost samples are resent.
    Reliable,
    /// The DDS implementation's default.
    SystemDefault,
    /// Not known.
    Unknown,
}

/// The durability policy (`rmw_qos_durability_policy_t`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Durability {
    /// Late joiners get only new samples.
    Volatile,
    /// The writer keeps samples for late joiners ("latched").
    TransientLocal,
    /// The DDS implementation's default.
    SystemDefault,
    /// Not known.
    Unknown,
}

/// The liveliness policy (`rmw_qos_liveliness_policy_t`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Liveliness {
    /// The DDS implementation asserts liveliness.
    Automatic,
    /// The application asserts liveliness per topic.
    ManualByTopic,
    /// The DDS implementation's default.
    SystemDefault,
    /// Not known.
    Unknown,
}

impl History {
    /// The spelling rosbag2 writes (`rmw_qos_history_policy_to_str`, `unknown`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::SystemDefault => "system_default",
            Self::KeepLast => "keep_last",
            Self::KeepAll => "keep_all",
            Self::Unknown => "unknown",
        }
    }
}

impl Reliability {
    /// The spelling rosbag2 writes (`rmw_qos_reliability_policy_to_str`, `unknown`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::BestEffort => "best_effort",
            Self::Reliable => "reliable",
            Self::SystemDefault => "system_default",
            Self::Unknown => "unknown",
        }
    }
}

impl Durability {
    /// The spelling rosbag2 writes (`rmw_qos_durability_policy_to_str`, `unknown`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Volatile => "volatile",
            Self::TransientLocal => "transient_local",
            Self::SystemDefault => "system_default",
            Self::Unknown => "unknown",
        }
    }
}

impl Liveliness {
    /// The spelling rosbag2 writes (`rmw_qos_liveliness_policy_to_str`, `unknown`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Automatic => "automatic",
            Self::ManualByTopic => "manual_by_topic",
            Self::SystemDefault => "system_default",
            Self::Unknown => "unknown",
        }
    }
}

/// The YAML rosbag2 (metadata version 9: Jazzy and later) writes as the
/// `offered_qos_profiles` channel metadata for these profiles, byte for byte: see the
/// [module docs](self) for the format. Durations at or beyond rmw's infinity are written as
/// infinity.
pub fn offered_qos_profiles_yaml(profiles: &[QosProfile]) -> String {
    if profiles.is_empty() {
        return "[]".to_owned();
    }
    let mut out = String::new();
    for (i, p) in profiles.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        out.push_str(&format!(
            "- history: {}\n  depth: {}\n  reliability: {}\n  durability: {}\n",
            p.history.as_str(),
            p.depth,
            p.reliability.as_str(),
            p.durability.as_str(),
        ));
        push_duration(&mut out, "deadline", p.deadline);
        push_duration(&mut out, "lifespan", p.lifespan);
        out.push_str(&format!("  liveliness: {}\n", p.liveliness.as_str()));
        push_duration(
            &mut out,
            "liveliness_lease_duration",
            p.liveliness_lease_duration,
        );
        out.push_str(&format!(
            "  avoid_ros_namespace_conventions: {}",
            p.avoid_ros_namespace_conventions
        ));
    }
    out
}

fn push_duration(out: &mut String, key: &str, duration: Option<Duration>) {
    let (sec, nsec) = match duration {
        Some(d) if (d.as_secs(), d.subsec_nanos()) < (INFINITE_SEC, INFINITE_NSEC) => {
            (d.as_secs(), d.subsec_nanos())
        }
        _ => (INFINITE_SEC, INFINITE_NSEC),
    };
    out.push_str(&format!("  {key}:\n    sec: {sec}\n    nsec: {nsec}\n"));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reliable_volatile_keep_last_10() -> QosProfile {
        QosProfile {
            history: History::KeepLast,
            depth: 10,
            reliability: Reliability::Reliable,
            durability: Durability::Volatile,
            deadline: None,
            lifespan: None,
            liveliness: Liveliness::Automatic,
            liveliness_lease_duration: None,
            avoid_ros_namespace_conventions: false,
        }
    }

    fn best_effort_transient_local_infinite() -> QosProfile {
        QosProfile {
            history: History::Unknown,
            depth: 0,
            reliability: Reliability::BestEffort,
            durability: Durability::TransientLocal,
            deadline: None,
            lifespan: None,
            liveliness: Liveliness::ManualByTopic,
            liveliness_lease_duration: None,
            avoid_ros_namespace_conventions: true,
        }
    }

    /// The layout of rosbag2's own bags (e.g. rosbag2_py/test/resources/sqlite3/convert_a/
    /// metadata.yaml: `"- history: 1\n  depth: 1\n  reliability: 1\n  durability: 1\n
    /// deadline:\n    sec: 9223372036\n    nsec: 854775807\n …
    /// avoid_ros_namespace_conventions: false"`) with version 9's policy names.
    #[test]
    fn reliable_volatile_keep_last_10_as_rosbag2_writes_it() {
        assert_eq!(
            offered_qos_profiles_yaml(&[reliable_volatile_keep_last_10()]),
            "- history: keep_last\n\
             \x20 depth: 10\n\
             \x20 reliability: reliable\n\
             \x20 durability: volatile\n\
             \x20 deadline:\n\
             \x20   sec: 9223372036\n\
             \x20   nsec: 854775807\n\
             \x20 lifespan:\n\
             \x20   sec: 9223372036\n\
             \x20   nsec: 854775807\n\
             \x20 liveliness: automatic\n\
             \x20 liveliness_lease_duration:\n\
             \x20   sec: 9223372036\n\
             \x20   nsec: 854775807\n\
             \x20 avoid_ros_namespace_conventions: false"
        );
    }

    #[test]
    fn best_effort_transient_local_infinite_as_rosbag2_writes_it() {
        assert_eq!(
            offered_qos_profiles_yaml(&[best_effort_transient_local_infinite()]),
            "- history: unknown\n\
             \x20 depth: 0\n\
             \x20 reliability: best_effort\n\
             \x20 durability: transient_local\n\
             \x20 deadline:\n\
             \x20   sec: 9223372036\n\
             \x20   nsec: 854775807\n\
             \x20 lifespan:\n\
             \x20   sec: 9223372036\n\
             \x20   nsec: 854775807\n\
             \x20 liveliness: manual_by_topic\n\
             \x20 liveliness_lease_duration:\n\
             \x20   sec: 9223372036\n\
             \x20   nsec: 854775807\n\
             \x20 avoid_ros_namespace_conventions: true"
        );
    }

    #[test]
    fn finite_durations_and_several_profiles() {
        let finite = QosProfile {
            history: History::KeepAll,
            depth: 0,
            reliability: Reliability::SystemDefault,
            durability: Durability::SystemDefault,
            deadline: Some(Duration::from_millis(1500)),
            lifespan: Some(Duration::ZERO),
            liveliness: Liveliness::SystemDefault,
            liveliness_lease_duration: Some(Duration::new(INFINITE_SEC, INFINITE_NSEC)),
            avoid_ros_namespace_conventions: false,
        };
        let yaml = offered_qos_profiles_yaml(&[reliable_volatile_keep_last_10(), finite]);
        let first = offered_qos_profiles_yaml(&[reliable_volatile_keep_last_10()]);
        assert_eq!(
            yaml,
            format!(
                "{first}\n\
                 - history: keep_all\n\
                 \x20 depth: 0\n\
                 \x20 reliability: system_default\n\
                 \x20 durability: system_default\n\
                 \x20 deadline:\n\
                 \x20   sec: 1\n\
                 \x20   nsec: 500000000\n\
                 \x20 lifespan:\n\
                 \x20   sec: 0\n\
                 \x20   nsec: 0\n\
                 \x20 liveliness: system_default\n\
                 \x20 liveliness_lease_duration:\n\
                 \x20   sec: 9223372036\n\
                 \x20   nsec: 854775807\n\
                 \x20 avoid_ros_namespace_conventions: false"
            )
        );
    }

    #[test]
    fn durations_beyond_rmw_infinity_are_infinity() {
        let mut p = reliable_volatile_keep_last_10();
        p.deadline = Some(Duration::MAX);
        p.lifespan = Some(Duration::new(INFINITE_SEC, INFINITE_NSEC - 1));
        let yaml = offered_qos_profiles_yaml(&[p]);
        assert!(
            yaml.contains("  deadline:\n    sec: 9223372036\n    nsec: 854775807\n"),
            "{yaml}"
        );
        assert!(
            yaml.contains("  lifespan:\n    sec: 9223372036\n    nsec: 854775806\n"),
            "{yaml}"
        );
    }

    #[test]
    fn no_profiles_is_an_empty_flow_sequence() {
        assert_eq!(offered_qos_profiles_yaml(&[]), "[]");
    }
}
