//! Object keys: the `prefix` template of `[upload]` with `{vehicle}`, `{session}` and
//! `{date}` filled in, then the file's name.

use std::path::Path;

/// A key prefix with placeholders, checked when the configuration is read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyTemplate(String);

/// A prefix template with a placeholder recd does not know.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("upload prefix {template:?}: unknown placeholder {{{name}}} (known: {{vehicle}}, {{session}}, {{date}})")]
pub struct KeyTemplateError {
    template: String,
    name: String,
}

const PLACEHOLDERS: [&str; 3] = ["vehicle", "session", "date"];

impl KeyTemplate {
    /// Checks `template`'s placeholders.
    pub fn new(template: &str) -> Result<Self, KeyTemplateError> {
        let mut rest = template;
        while let Some(open) = rest.find('{') {
            let after = &rest[open + 1..];
            let close = after.find('}').unwrap_or(after.len());
            let name = &after[..close];
            if !PLACEHOLDERS.contains(&name) {
                return Err(KeyTemplateError {
                    template: template.to_string(),
                    name: name.to_string(),
                });
            }
            rest = &after[close.min(after.len())..];
        }
        Ok(Self(template.to_string()))
    }

    /// The template as written.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The prefix for a file of `session`, started `started_ns` after the Unix epoch.
    pub fn render(&self, vehicle: &str, session: &str, started_ns: i64) -> String {
        self.0
            .replace("{vehicle}", vehicle)
            .replace("{session}", session)
            .replace("{date}", &utc_date(started_ns))
    }
}

/// The key of `file` under `prefix`: the prefix's segments and the file's name, joined
/// by single slashes.
pub fn object_key(prefix: &str, file: &Path) -> String {
    let name = file
        .file_name()
        .map(|name| name.to_string_lossy().into_owned())
        .unwrap_or_default();
    prefix
        .split('/')
        .filter(|segment| !segment.is_empty())
        .chain(std::iter::once(name.as_str()))
        .collect::<Vec<_>>()
        .join("/")
}

/// `YYYY-MM-DD` in UTC of a time in ns since the Unix epoch.
fn utc_date(ns: i64) -> String {
    // Days to civil date, after Howard Hinnant's `civil_from_days`.
    let days = ns.div_euclid(86_400_000_000_000);
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let day_of_era = z - era * 146_097;
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let mp = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_are_filled_and_unknown_ones_refused() {
        let template = KeyTemplate::new("fleet/{vehicle}/{date}/{session}").unwrap();
        // 2026-11-23T20:45:00Z
        let prefix = template.render("car-3", "drive1", 1_795_466_700_000_000_000);
        assert_eq!(prefix, "fleet/car-3/2026-11-23/drive1");
        assert_eq!(
            object_key(&prefix, Path::new("/data/drive1/drive1_0.mcap")),
            "fleet/car-3/2026-11-23/drive1/drive1_0.mcap"
        );
        assert_eq!(object_key("", Path::new("a.mcap")), "a.mcap");
        assert_eq!(object_key("/x//y/", Path::new("a.mcap")), "x/y/a.mcap");
        let error = KeyTemplate::new("{vehicle}/{car}").unwrap_err();
        assert!(error.to_string().contains("{car}"), "{error}");
    }

    #[test]
    fn dates_are_utc_days() {
        assert_eq!(utc_date(0), "1970-01-01");
        assert_eq!(utc_date(951_782_400_000_000_000), "2000-02-29");
        assert_eq!(utc_date(-1), "1969-12-31");
    }
}
