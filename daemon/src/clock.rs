//! The wall clock as recd keeps times: ns since the Unix epoch.

use std::time::{SystemTime, UNIX_EPOCH};

/// Now, in ns since the Unix epoch, as the catalog keeps times (0 before 1970).
pub fn now_ns() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as i64)
}
