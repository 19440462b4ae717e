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
