//! The `recorder` metadata record every file of a recording carries.

use std::collections::BTreeMap;

use crate::config::RecordingConfig;

/// What recorded the files, where, when and how: the library, the host, the start and
/// the whole configuration, beside the metadata the configuration names.
pub(super) fn recorder_metadata(
    config: &RecordingConfig,
    started_ns: u64,
) -> BTreeMap<String, String> {
    let mut metadata = config.metadata.clone();
    metadata.insert("recorder".into(), recd_storage::LIBRARY.into());
    metadata.insert("host".into(), host_name());
    metadata.insert("started_ns".into(), started_ns.to_string());
    metadata.insert(
        "config".into(),
        serde_json::to_string(config).expect("config serializes"),
    );
    metadata
}

fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|name| name.trim().to_string())
        .unwrap_or_default()
}
