//! What a trigger keeps, as `rec trigger` and `rec fleet trigger` both take it.

use std::time::Duration;

use clap::Args;

/// The window around a trigger's moment, its moment, note and id.
#[derive(Debug, Args)]
pub struct WindowArgs {
    /// How far back from the moment to keep, e.g. 30s (default: the whole buffer).
    #[arg(long, value_name = "DURATION", value_parser = recd_control::units::parse_duration)]
    pub before: Option<Duration>,
    /// How long after the moment messages still go to the file, e.g. 10s.
    #[arg(long, value_name = "DURATION", value_parser = recd_control::units::parse_duration, default_value = "0s")]
    pub after: Duration,
    /// Why, e.g. "hard brake"; it goes into the file's trigger record.
    #[arg(long, value_name = "TEXT", default_value = "")]
    pub note: String,
    /// The moment instead of now: RFC 3339 in UTC or ns since the epoch. A moment ahead
    /// is waited for; one older than the buffer is refused.
    #[arg(long, value_name = "TIME", value_parser = recd_control::units::parse_time_ns)]
    pub at: Option<u64>,
    /// An id of the trigger: repeated with the same id, it writes no second file.
    #[arg(long, value_name = "ID")]
    pub id: Option<String>,
}

impl WindowArgs {
    /// `--before` and `--after` in milliseconds, as the control protocol carries them; a
    /// side beyond what recd accepts (`recd_storage::window::MAX_SIDE`) is refused here,
    /// naming it, rather than sent.
    pub fn sides_ms(&self) -> Result<(Option<u64>, u64), String> {
        use recd_storage::window::side_to_ms;
        let before = (self.before)
            .map(|before| side_to_ms("--before", before))
            .transpose()
            .map_err(|refused| refused.to_string())?;
        let after = side_to_ms("--after", self.after).map_err(|refused| refused.to_string())?;
        Ok((before, after))
    }
}

/// A moment as `rec fleet` takes it (`--from`, `--to`): what `--at` takes (RFC 3339 in UTC
/// or ns since the epoch, read by [`recd_control::units::parse_time_ns`]), or relative to
/// now: `now`, `-10m` or `10m ago` (a duration as `--before` takes it).
pub fn parse_moment(text: &str) -> Result<u64, String> {
    moment_at(text, now_ns())
}

/// Nanoseconds since the Unix epoch now.
pub fn now_ns() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default()
        .as_nanos() as u64
}

/// [`parse_moment`] with `now_ns` for now.
fn moment_at(text: &str, now_ns: u64) -> Result<u64, String> {
    let text = text.trim();
    if text == "now" {
        return Ok(now_ns);
    }
    let back = (text.strip_prefix('-')).or_else(|| text.strip_suffix("ago").map(str::trim_end));
    match back {
        Some(duration) => recd_control::units::parse_duration(duration)
            .map(|back| now_ns.saturating_sub(back.as_nanos() as u64))
            .map_err(|_| {
                format!("`{text}` is not a time before now (try -10m, 10m ago or 2h ago)")
            }),
        None => recd_control::units::parse_time_ns(text)
            .map_err(|refused| format!("{refused}; or now, -10m, 10m ago")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: u64 = 1_795_428_930_250_000_000;
    const MINUTE: u64 = 60_000_000_000;

    #[test]
    fn moments_are_absolute_as_at_takes_them_or_before_now() {
        assert_eq!(moment_at("2026-11-23T10:15:30.250Z", 0), Ok(NOW));
        assert_eq!(moment_at(&NOW.to_string(), 0), Ok(NOW));
        assert_eq!(moment_at("now", NOW), Ok(NOW));
        assert_eq!(moment_at("-10m", NOW), Ok(NOW - 10 * MINUTE));
        assert_eq!(moment_at("10m ago", NOW), Ok(NOW - 10 * MINUTE));
        assert_eq!(moment_at(" 1h 30m ago ", NOW), Ok(NOW - 90 * MINUTE));
        assert!(moment_at("-soon", NOW).unwrap_err().contains("10m ago"));
        let refused = moment_at("yesterday", NOW).unwrap_err();
        assert!(
            refused.contains("not a time") && refused.contains("-10m"),
            "{refused}"
        );
    }
}
