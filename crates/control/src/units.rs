//! Sizes and durations as people type them, read the same way by `rec`'s flags and
//! recd's configuration, with the same help when they are wrong.

use std::time::Duration;

/// Parses a size such as `4MiB`, `512 KiB` or `1048576`.
pub fn parse_size(text: &str) -> Result<u64, String> {
    text.trim()
        .parse::<bytesize::ByteSize>()
        .map(|size| size.as_u64())
        .map_err(|_| format!("`{text}` is not a size (try 4MiB, 512KiB or 1048576)"))
}

/// Parses a duration such as `500ms`, `10s` or `5min`.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    humantime::parse_duration(text.trim())
        .map_err(|_| format!("`{text}` is not a duration (try 500ms, 10s or 5min)"))
}

/// Parses a moment: RFC 3339 (`2026-11-23T10:15:30.250Z`, `2026-11-23 10:15:30Z`) or
/// nanoseconds since the Unix epoch; gives nanoseconds since the epoch.
pub fn parse_time_ns(text: &str) -> Result<u64, String> {
    let text = text.trim();
    if let Ok(ns) = text.parse::<u64>() {
        return Ok(ns);
    }
    humantime::parse_rfc3339_weak(text)
        .ok()
        .and_then(|time| time.duration_since(std::time::UNIX_EPOCH).ok())
        .map(|since| since.as_nanos() as u64)
        .ok_or_else(|| {
            format!("`{text}` is not a time (try 2026-11-23T10:15:30.250Z, in UTC, or nanoseconds since the epoch)")
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_and_durations_parse_in_the_usual_spellings_and_say_how_when_not() {
        assert_eq!(parse_size("4MiB").unwrap(), 4 << 20);
        assert_eq!(parse_size("512 KiB").unwrap(), 512 << 10);
        assert_eq!(parse_size("1048576").unwrap(), 1 << 20);
        assert_eq!(
            parse_size("abc").unwrap_err(),
            "`abc` is not a size (try 4MiB, 512KiB or 1048576)"
        );
        assert_eq!(parse_duration("10min").unwrap(), Duration::from_secs(600));
        assert_eq!(parse_duration("500ms").unwrap(), Duration::from_millis(500));
        assert!(parse_duration("soon")
            .unwrap_err()
            .contains("not a duration (try"));
    }

    #[test]
    fn times_parse_as_rfc3339_or_epoch_nanoseconds() {
        let ns = 1_795_428_930_250_000_000;
        assert_eq!(parse_time_ns("2026-11-23T10:15:30.250Z").unwrap(), ns);
        assert_eq!(parse_time_ns("2026-11-23 10:15:30.25Z").unwrap(), ns);
        assert_eq!(parse_time_ns(&ns.to_string()).unwrap(), ns);
        assert!(parse_time_ns("tomorrow")
            .unwrap_err()
            .contains("not a time"));
    }
}
