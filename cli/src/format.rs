//! Numbers and times as people read them.

use std::time::{Duration, SystemTime};

/// `1536` → `1.5 KiB`.
pub fn bytes(n: u64) -> String {
    bytesize::ByteSize::b(n).display().iec().to_string()
}

/// Bytes per second → `123.4 MiB/s`.
pub fn rate(bytes_per_sec: f64) -> String {
    format!("{}/s", bytes(bytes_per_sec.max(0.0) as u64))
}

/// Nanoseconds since the Unix epoch → RFC 3339 with nanoseconds.
pub fn timestamp(ns: u64) -> String {
    let time = SystemTime::UNIX_EPOCH + Duration::from_nanos(ns);
    humantime::format_rfc3339_nanos(time).to_string()
}

/// Parses a size such as `4MiB`, `512 KiB` or `1048576`.
pub fn parse_size(text: &str) -> Result<u64, String> {
    text.parse::<bytesize::ByteSize>()
        .map(|size| size.as_u64())
        .map_err(|_| format!("`{text}` is not a size (try 4MiB, 512KiB or 1048576)"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_in_the_usual_spellings() {
        assert_eq!(parse_size("4MiB").unwrap(), 4 << 20);
        assert_eq!(parse_size("512 KiB").unwrap(), 512 << 10);
        assert_eq!(parse_size("1048576").unwrap(), 1 << 20);
        assert!(parse_size("four").is_err());
    }

    #[test]
    fn bytes_read_naturally() {
        assert_eq!(bytes(1536), "1.5 KiB");
    }
}
