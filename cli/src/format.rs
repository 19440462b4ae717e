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

/// Microseconds → `850 µs`, `12.3 ms`.
pub fn micros(us: f64) -> String {
    if us < 1000.0 {
        format!("{us:.0} µs")
    } else {
        format!("{:.1} ms", us / 1000.0)
    }
}

/// Nanoseconds since the Unix epoch → RFC 3339 with nanoseconds.
pub fn timestamp(ns: u64) -> String {
    let time = SystemTime::UNIX_EPOCH + Duration::from_nanos(ns);
    humantime::format_rfc3339_nanos(time).to_string()
}

pub use recd_control::units::parse_size;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_read_naturally() {
        assert_eq!(bytes(1536), "1.5 KiB");
        assert_eq!(micros(850.2), "850 µs");
        assert_eq!(micros(12_340.0), "12.3 ms");
    }
}
