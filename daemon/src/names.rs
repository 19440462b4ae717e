//! Session names: they become directory names under the data directory, so only plain
//! names are accepted.

use std::time::SystemTime;

/// The longest session name.
const MAX_LEN: usize = 64;

/// Checks that `name` can be a directory name directly under the data directory.
pub fn validate(name: &str) -> Result<(), String> {
    if name.is_empty() {
        return Err("a session name cannot be empty".into());
    }
    if name.len() > MAX_LEN {
        return Err(format!(
            "session name {name:?} is longer than {MAX_LEN} characters"
        ));
    }
    if name.contains('/') || name.contains("..") || name.starts_with('.') {
        return Err(format!(
            "session name {name:?} would leave the data directory: names cannot contain '/' or '..' or start with '.'"
        ));
    }
    if let Some(bad) = name
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.')))
    {
        return Err(format!(
            "session name {name:?} contains {bad:?}; use letters, digits, '-', '_' and '.'"
        ));
    }
    Ok(())
}

/// A UTC time stamp for names: `20261121T185500Z`.
pub fn timestamp(at: SystemTime) -> String {
    humantime::format_rfc3339_seconds(at)
        .to_string()
        .replace(['-', ':'], "")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_names_pass_and_escapes_are_refused() {
        for good in ["drive1", "2026-11-21_run.3", "A"] {
            assert!(validate(good).is_ok(), "{good}");
        }
        for bad in [
            "", "..", "../etc", "a/b", "/abs", ".hidden", "sp ace", "x\n",
        ] {
            assert!(validate(bad).is_err(), "{bad:?}");
        }
        assert!(validate(&"x".repeat(65)).is_err());
    }

    #[test]
    fn time_stamps_are_compact_utc() {
        let at = SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1_795_000_000);
        assert_eq!(timestamp(at), "20261118T110640Z");
    }
}
