//! Reading `offered_qos_profiles` back: the YAML recd and rosbag2 write, in the policy
//! spellings of metadata version 9 (`keep_last`, `reliable`, …) and the numbers older
//! rosbag2 versions wrote (rmw's enum values: `reliability: 1`).

use std::time::Duration;

use yaml_rust2::{Yaml, YamlLoader};

use super::{Durability, History, Liveliness, QosProfile, Reliability};
use super::{INFINITE_NSEC, INFINITE_SEC};

/// Why `offered_qos_profiles` could not be read.
#[derive(Debug, thiserror::Error)]
pub enum QosReadError {
    /// Not YAML.
    #[error("offered_qos_profiles is not YAML: {0}")]
    Yaml(#[from] yaml_rust2::ScanError),
    /// YAML, but not a list of profiles.
    #[error("offered_qos_profiles is not a list of QoS profiles")]
    NotAList,
}

/// The profiles in an `offered_qos_profiles` value; a policy left out or spelled in a way
/// not known here reads as unknown, a duration left out as infinite.
pub fn parse_offered_qos_profiles(yaml: &str) -> Result<Vec<QosProfile>, QosReadError> {
    let documents = YamlLoader::load_from_str(yaml)?;
    let Some(document) = documents.first() else {
        return Ok(Vec::new());
    };
    let Some(profiles) = document.as_vec() else {
        return Err(QosReadError::NotAList);
    };
    profiles.iter().map(profile).collect()
}

fn profile(yaml: &Yaml) -> Result<QosProfile, QosReadError> {
    if yaml.as_hash().is_none() {
        return Err(QosReadError::NotAList);
    }
    let policy = |key: &str, names: &[&str]| -> Option<usize> {
        match &yaml[key] {
            Yaml::String(name) => names.iter().position(|known| known == name),
            Yaml::Integer(value) => usize::try_from(*value).ok().filter(|&v| v < names.len()),
            _ => None,
        }
    };
    // In rmw's enum order, so that a number indexes its name.
    let history = match policy("history", &["system_default", "keep_last", "keep_all"]) {
        Some(0) => History::SystemDefault,
        Some(1) => History::KeepLast,
        Some(2) => History::KeepAll,
        _ => History::Unknown,
    };
    let reliability = match policy(
        "reliability",
        &["system_default", "reliable", "best_effort"],
    ) {
        Some(0) => Reliability::SystemDefault,
        Some(1) => Reliability::Reliable,
        Some(2) => Reliability::BestEffort,
        _ => Reliability::Unknown,
    };
    let durability = match policy(
        "durability",
        &["system_default", "transient_local", "volatile"],
    ) {
        Some(0) => Durability::SystemDefault,
        Some(1) => Durability::TransientLocal,
        Some(2) => Durability::Volatile,
        _ => Durability::Unknown,
    };
    let liveliness = match policy(
        "liveliness",
        &[
            "system_default",
            "automatic",
            "manual_by_node",
            "manual_by_topic",
        ],
    ) {
        Some(0) => Liveliness::SystemDefault,
        Some(1) => Liveliness::Automatic,
        Some(3) => Liveliness::ManualByTopic,
        _ => Liveliness::Unknown,
    };
    Ok(QosProfile {
        history,
        depth: yaml["depth"]
            .as_i64()
            .and_then(|d| u32::try_from(d).ok())
            .unwrap_or(0),
        reliability,
        durability,
        deadline: duration(&yaml["deadline"]),
        lifespan: duration(&yaml["lifespan"]),
        liveliness,
        liveliness_lease_duration: duration(&yaml["liveliness_lease_duration"]),
        avoid_ros_namespace_conventions: yaml["avoid_ros_namespace_conventions"]
            .as_bool()
            .unwrap_or(false),
    })
}

/// A `sec:`/`nsec:` map; `None` (infinite) when missing or at rmw's infinity.
fn duration(yaml: &Yaml) -> Option<Duration> {
    let sec = u64::try_from(yaml["sec"].as_i64()?).ok()?;
    let nsec = u32::try_from(yaml["nsec"].as_i64()?).ok()?;
    if (sec, nsec) >= (INFINITE_SEC, INFINITE_NSEC) {
        return None;
    }
    Some(Duration::new(sec, 0) + Duration::from_nanos(nsec.into()))
}

#[cfg(test)]
mod tests {
    use super::super::offered_qos_profiles_yaml;
    use super::*;

    #[test]
    fn what_recd_writes_reads_back_the_same() {
        let profiles = vec![
            QosProfile {
                history: History::KeepLast,
                depth: 7,
                reliability: Reliability::Reliable,
                durability: Durability::TransientLocal,
                deadline: Some(Duration::from_millis(1500)),
                lifespan: None,
                liveliness: Liveliness::ManualByTopic,
                liveliness_lease_duration: Some(Duration::ZERO),
                avoid_ros_namespace_conventions: true,
            },
            QosProfile {
                history: History::Unknown,
                depth: 0,
                reliability: Reliability::BestEffort,
                durability: Durability::Volatile,
                deadline: None,
                lifespan: None,
                liveliness: Liveliness::Automatic,
                liveliness_lease_duration: None,
                avoid_ros_namespace_conventions: false,
            },
        ];
        let yaml = offered_qos_profiles_yaml(&profiles);
        assert_eq!(parse_offered_qos_profiles(&yaml).unwrap(), profiles);
        assert_eq!(parse_offered_qos_profiles("[]").unwrap(), []);
        assert_eq!(parse_offered_qos_profiles("").unwrap(), []);
    }

    /// rosbag2 before metadata version 9 (Humble) wrote rmw's enum values as numbers.
    #[test]
    fn humble_numbers_are_read() {
        let yaml = "- history: 3\n  depth: 0\n  reliability: 1\n  durability: 1\n  \
                    deadline:\n    sec: 2147483647\n    nsec: 4294967295\n  \
                    liveliness: 1\n  avoid_ros_namespace_conventions: false";
        let profile = &parse_offered_qos_profiles(yaml).unwrap()[0];
        assert_eq!(profile.history, History::Unknown);
        assert_eq!(profile.reliability, Reliability::Reliable);
        assert_eq!(profile.durability, Durability::TransientLocal);
        assert_eq!(profile.liveliness, Liveliness::Automatic);
        assert_eq!(profile.lifespan, None);
    }

    #[test]
    fn what_is_not_a_list_of_profiles_is_refused() {
        assert!(matches!(
            parse_offered_qos_profiles("reliability: reliable"),
            Err(QosReadError::NotAList)
        ));
        assert!(matches!(
            parse_offered_qos_profiles("- [1, 2]"),
            Err(QosReadError::NotAList)
        ));
        assert!(matches!(
            parse_offered_qos_profiles("- {a: [}"),
            Err(QosReadError::Yaml(_))
        ));
    }
}
