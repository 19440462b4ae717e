//! `[encryption]`: seal every file recd writes to the fleet's public keys.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use recd_seal::Recipients;
use serde::{Deserialize, Serialize};

use super::units;

/// The default of `key_reach`: an hour back, well beyond the 30 s a trigger or a rule
/// keeps before its moment unless told otherwise.
pub const DEFAULT_KEY_REACH: Duration = Duration::from_secs(3600);

/// The `[encryption]` table of recd.toml; its presence turns sealing on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EncryptionConfig {
    /// The fleet's X25519 public keys (`age1…`, as `age-keygen -y` prints them) and
    /// recipients files (an absolute path, one `age1…` a line, `#` comments); one or
    /// a list. Every file is sealed to all of them.
    #[serde(deserialize_with = "one_or_many")]
    pub recipients: Vec<String>,
    /// How far back from now an incident may still cut a sealed session's files: recd
    /// forgets a file's key once the file is finished, no incident pins it, and its newest
    /// message is older than this; a trigger whose window reaches a file whose key is
    /// gone is refused, naming it. At most 7 days.
    #[serde(default = "default_key_reach", with = "units::duration")]
    pub key_reach: Duration,
}

fn default_key_reach() -> Duration {
    DEFAULT_KEY_REACH
}

impl EncryptionConfig {
    /// `key_reach` within the longest side a window may have, and no `[[rule]]` or
    /// `[[preset]]` asking to keep more before its moment than it: their cuts would find
    /// keys gone. `befores` names each asker and its `before`.
    pub fn check_reach<'a>(
        &self,
        befores: impl IntoIterator<Item = (String, Duration)> + 'a,
    ) -> Result<(), String> {
        let max = recd_storage::window::MAX_SIDE;
        if self.key_reach > max {
            return Err(format!(
                "[encryption] key_reach {} is longer than the {} a window may reach back",
                humantime::format_duration(self.key_reach),
                humantime::format_duration(max)
            ));
        }
        for (asker, before) in befores {
            if before > self.key_reach {
                return Err(format!(
                    "{asker} keeps {} before its moment, further back than [encryption] key_reach ({}): recd forgets a sealed file's key beyond it, so the cut could not read the file; raise key_reach or shorten before",
                    humantime::format_duration(before),
                    humantime::format_duration(self.key_reach)
                ));
            }
        }
        Ok(())
    }

    /// The recipients, each key and file read and checked; the error names the entry.
    pub fn recipients(&self) -> Result<Recipients, String> {
        let mut all: Option<Recipients> = None;
        for (index, entry) in self.recipients.iter().enumerate() {
            let entry = entry.trim();
            let some = if entry.starts_with('/') {
                Recipients::read_file(Path::new(entry)).map_err(|e| e.to_string())?
            } else {
                Recipients::parse(&[entry.to_string()]).map_err(|e| {
                    e.to_string()
                        .replacen("recipient 1", &format!("recipient {}", index + 1), 1)
                })?
            };
            all = Some(match all {
                Some(all) => all
                    .join(some)
                    .map_err(|e| format!("recipients up to entry {}: {e}", index + 1))?,
                None => some,
            });
        }
        all.ok_or_else(|| {
            "no recipients: give at least one X25519 public key (age1…) or recipients file"
                .to_string()
        })
    }

    /// What a session's files are sealed with: the recipients, and an empty store for the
    /// keys of the files written.
    pub fn sealing(&self) -> Result<recd_storage::Sealing, String> {
        Ok(recd_storage::Sealing {
            recipients: Arc::new(self.recipients()?),
            keys: recd_storage::SealKeys::default(),
        })
    }
}

/// `recipients = "age1…"` or `recipients = ["age1…", "/etc/recd/fleet.txt"]`.
fn one_or_many<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<Vec<String>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum OneOrMany {
        One(String),
        Many(Vec<String>),
    }
    Ok(match OneOrMany::deserialize(deserializer)? {
        OneOrMany::One(one) => vec![one],
        OneOrMany::Many(many) => many,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(recipients: &[&str]) -> EncryptionConfig {
        EncryptionConfig {
            recipients: recipients.iter().map(|s| s.to_string()).collect(),
            key_reach: DEFAULT_KEY_REACH,
        }
    }

    #[test]
    fn keys_and_files_join_and_bad_entries_are_named() {
        let a = age::x25519::Identity::generate();
        let b = age::x25519::Identity::generate();
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("fleet.txt");
        std::fs::write(&file, format!("# fleet\n{}\n", b.to_public())).unwrap();
        let key = a.to_public().to_string();
        let both = config(&[&key, file.to_str().unwrap()])
            .recipients()
            .unwrap();
        assert_eq!(both.to_strings(), [key.clone(), b.to_public().to_string()]);

        let error = config(&[&key, "age1nope"]).recipients().unwrap_err();
        assert!(
            error.contains("recipient 2") && error.contains("age1nope"),
            "{error}"
        );
        let secret = a.to_string();
        let error = config(&[age::secrecy::ExposeSecret::expose_secret(&secret)])
            .recipients()
            .unwrap_err();
        assert!(
            error.contains("private key") && !error.contains("AGE-SECRET-KEY-1"),
            "{error}"
        );
        let error = config(&["/nonexistent/fleet.txt"])
            .recipients()
            .unwrap_err();
        assert!(error.contains("/nonexistent/fleet.txt"), "{error}");
        assert!(config(&[])
            .recipients()
            .unwrap_err()
            .contains("no recipients"));
    }

    #[test]
    fn more_keys_in_all_than_a_header_may_have_stanzas_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("fleet.txt");
        let keys: Vec<String> = (0..recd_seal::MAX_STANZAS)
            .map(|_| age::x25519::Identity::generate().to_public().to_string())
            .collect();
        std::fs::write(&file, keys.join("\n")).unwrap();
        let file = file.to_str().unwrap();
        // A key the file already holds is counted once.
        let repeated = config(&[file, &keys[0]]);
        assert_eq!(repeated.recipients().unwrap().len(), recd_seal::MAX_STANZAS);
        let extra = age::x25519::Identity::generate().to_public().to_string();
        let error = config(&[file, &extra]).recipients().unwrap_err();
        assert!(
            error.starts_with("recipients up to entry 2: 65 recipients, more than the 64"),
            "{error}"
        );
    }

    #[test]
    fn a_rule_reaching_back_past_key_reach_or_a_reach_beyond_a_week_is_refused() {
        let public = age::x25519::Identity::generate().to_public().to_string();
        let parse = |extra: &str| {
            crate::config::DaemonConfig::parse(&format!(
                "[encryption]\nrecipients = {public:?}\n{extra}"
            ))
        };
        assert_eq!(
            parse("").unwrap().encryption.unwrap().key_reach,
            DEFAULT_KEY_REACH
        );
        let rule = "\n[[rule]]\nname = \"late\"\nhealth = \"lidar/*\"\nstates = [\"stalled\"]\nbefore = \"2h\"\n";
        let error = parse(rule).unwrap_err();
        assert!(
            error.contains("[[rule]] \"late\" keeps 2h") && error.contains("key_reach (1h)"),
            "{error}"
        );
        assert!(parse(&format!("key_reach = \"3h\"\n{rule}")).is_ok());
        let error = parse("key_reach = \"8days\"\n").unwrap_err();
        assert!(
            error.contains("key_reach 8days") && error.contains("7days"),
            "{error}"
        );
    }
}
