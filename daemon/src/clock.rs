//! The wall clock as recd keeps times: ns since the Unix epoch.

use std::time::{SystemTime, UNIX_EPOCH};

/// Now, in ns since the Unix epoch, as the catalog keeps times (0 before 1970).
pub fn now_ns() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as i64)
}

/// `ns` since the Unix epoch as RFC 3339 in UTC, to the millisecond, for messages.
pub fn rfc3339(ns: u64) -> String {
    let at = UNIX_EPOCH + std::time::Duration::from_nanos(ns);
    humantime::format_rfc3339_millis(at).to_string()
}
