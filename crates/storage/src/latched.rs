//! Which channels are latched: their last message stays in force for late joiners, so a
//! cut starts with the one sent before its window.

use std::collections::BTreeMap;

/// Whether a channel with this metadata is latched: an iceoryx2 service with a history,
/// or DDS writers that all offered `transient_local` durability (rosbag2's YAML, read
/// leniently: older rosbag2 writes the policy as its number, 1).
pub(crate) fn is_latched(metadata: &BTreeMap<String, String>) -> bool {
    if let Some(history) = metadata.get(crate::iceoryx2::HISTORY_SIZE) {
        return history.trim().parse::<u64>().is_ok_and(|size| size > 0);
    }
    let Some(profiles) = metadata.get(crate::dds::OFFERED_QOS_PROFILES) else {
        return false;
    };
    let mut durabilities = profiles.lines().filter_map(|line| {
        let (key, value) = line.trim().trim_start_matches("- ").split_once(':')?;
        (key.trim() == "durability").then(|| value.trim().trim_matches(['"', '\'']))
    });
    let mut any = false;
    let all = durabilities.all(|value| {
        any = true;
        value.eq_ignore_ascii_case("transient_local") || value == "1"
    });
    any && all
}

#[cfg(test)]
mod tests {
    use super::*;

    fn metadata(key: &str, value: &str) -> BTreeMap<String, String> {
        BTreeMap::from([(key.to_string(), value.to_string())])
    }

    #[test]
    fn a_history_or_transient_local_writers_latch_a_channel() {
        let history = crate::iceoryx2::HISTORY_SIZE;
        assert!(is_latched(&metadata(history, "1")));
        assert!(!is_latched(&metadata(history, "0")));
        assert!(!is_latched(&metadata(history, "many")));
        let qos = crate::dds::OFFERED_QOS_PROFILES;
        let latched = "- history: keep_last\n  depth: 1\n  reliability: reliable\n  durability: transient_local\n  avoid_ros_namespace_conventions: false";
        assert!(is_latched(&metadata(qos, latched)));
        let old = "- history: 1\n  depth: 1\n  reliability: 1\n  durability: 1\n";
        assert!(is_latched(&metadata(qos, old)));
        let mixed = format!("{latched}\n- history: keep_last\n  durability: volatile");
        assert!(!is_latched(&metadata(qos, &mixed)));
        assert!(!is_latched(&metadata(qos, "[]")));
        assert!(!is_latched(&BTreeMap::new()));
    }
}
