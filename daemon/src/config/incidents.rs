//! `[incidents]`: how long an incident keeps its window's files, how much they may take,
//! and whether uploading its cut ends its pin.

use std::time::Duration;

use bytesize::ByteSize;
use serde::{Deserialize, Serialize};

use super::units;

/// The `[incidents]` table of recd.toml.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct IncidentsConfig {
    /// The most the files incidents pin may take (the recordings their windows overlap and
    /// their cut files, e.g. "20GiB"); an incident that would go beyond is refused with a
    /// reason naming this bound. None: half of `max_total_size`, or a quarter of the data
    /// directory's file system when `max_total_size` is not set.
    #[serde(with = "units::option_size")]
    pub max_pinned_size: Option<ByteSize>,
    /// How long an incident's pin lasts unless released sooner (e.g. "7d"); "0" keeps
    /// it until `rec incidents release`.
    #[serde(with = "units::duration")]
    pub keep: Duration,
    /// End an incident's pin once its cut files are uploaded and verified.
    pub release_after_upload: bool,
}

impl Default for IncidentsConfig {
    fn default() -> Self {
        Self {
            max_pinned_size: None,
            keep: Duration::from_secs(7 * 24 * 3600),
            release_after_upload: false,
        }
    }
}

impl IncidentsConfig {
    /// The bound on pinned bytes: `max_pinned_size`, else half of `max_total`, else a
    /// quarter of `file_system` bytes.
    pub fn pinned_bound(&self, max_total: Option<u64>, file_system: u64) -> u64 {
        match (self.max_pinned_size, max_total) {
            (Some(size), _) => size.as_u64(),
            (None, Some(total)) => total / 2,
            (None, None) => file_system / 4,
        }
    }

    /// When an incident taken at `now_ns` stops holding by itself, if ever.
    pub fn keep_until_ns(&self, now_ns: u64) -> Option<u64> {
        (!self.keep.is_zero())
            .then(|| now_ns.saturating_add(recd_storage::window::nanos(self.keep)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pinned_bound_defaults_to_half_the_total_or_a_quarter_of_the_disk() {
        let mut config = IncidentsConfig::default();
        assert_eq!(config.pinned_bound(Some(1000), 1 << 40), 500);
        assert_eq!(config.pinned_bound(None, 4000), 1000);
        config.max_pinned_size = Some(ByteSize::b(7));
        assert_eq!(config.pinned_bound(Some(1000), 4000), 7);
        assert_eq!(
            config.keep_until_ns(5),
            Some(5 + 7 * 24 * 3600 * 1_000_000_000)
        );
        config.keep = Duration::ZERO;
        assert_eq!(config.keep_until_ns(5), None);
    }
}
