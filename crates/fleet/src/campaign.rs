//! A campaign: `[[rule]]` tables the fleet's cloud pushes to vehicles, by name and version,
//! until they expire. A vehicle checks them exactly as it checks recd.toml's rules, keeps
//! them across restarts, replaces them by a higher version, and drops them at expiry or
//! when the same name comes with no rules.

use serde::{Deserialize, Serialize};

/// The longest campaign name: it names a file on the vehicle.
pub const MAX_CAMPAIGN_NAME_LEN: usize = 64;

/// A campaign as it travels and as a vehicle keeps it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Campaign {
    /// Its name: letters, digits, `-`, `_` and `.`.
    pub name: String,
    /// Its version: a push replaces a campaign of the same name only with a higher one.
    pub version: u64,
    /// When it ends, ns since the Unix epoch; none: until replaced or removed.
    #[serde(default, alias = "expires", skip_serializing_if = "Option::is_none")]
    pub expires_ns: Option<u64>,
    /// Its rules: recd.toml's `[[rule]]` tables as JSON objects, keys as in recd.toml.
    /// None removes the campaign.
    #[serde(default)]
    pub rules: Vec<serde_json::Map<String, serde_json::Value>>,
}

impl Campaign {
    /// Whether its name can name a file: 1 to [`MAX_CAMPAIGN_NAME_LEN`] letters, digits,
    /// `-`, `_` or `.`, not starting with `.`; else what is wrong.
    pub fn check_name(name: &str) -> Result<(), String> {
        let fits = |c: char| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.');
        if name.is_empty() || name.len() > MAX_CAMPAIGN_NAME_LEN {
            return Err(format!(
                "a campaign's name has 1 to {MAX_CAMPAIGN_NAME_LEN} characters, not {}",
                name.len()
            ));
        }
        if name.starts_with('.') || !name.chars().all(fits) {
            return Err(format!(
                "campaign name {name:?}: use letters, digits, '-', '_' and '.' (not first)"
            ));
        }
        Ok(())
    }

    /// Whether it has ended at `now_ns`.
    pub fn expired(&self, now_ns: u64) -> bool {
        self.expires_ns.is_some_and(|expires| expires <= now_ns)
    }

    /// `name@version`, as `rec rules` shows where a rule came from.
    pub fn label(&self) -> String {
        format!("{}@{}", self.name, self.version)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_that_cannot_name_a_file_are_refused() {
        assert!(Campaign::check_name("braking-2026.11_a").is_ok());
        for bad in ["", ".hidden", "a/b", "../x", "a b", &"x".repeat(65)] {
            assert!(Campaign::check_name(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn expires_is_read_as_expires_ns_and_a_campaign_without_one_never_ends() {
        let campaign: Campaign =
            serde_json::from_str(r#"{"name":"a","version":2,"expires":10,"rules":[]}"#).unwrap();
        assert_eq!(campaign.expires_ns, Some(10));
        assert!(campaign.expired(10) && !campaign.expired(9));
        let forever = Campaign {
            expires_ns: None,
            ..campaign
        };
        assert!(!forever.expired(u64::MAX));
        assert_eq!(forever.label(), "a@2");
    }
}
