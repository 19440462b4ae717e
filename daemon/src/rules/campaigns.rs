//! Campaigns: rules the fleet pushes ([`recd_fleet::Campaign`]), checked exactly as
//! recd.toml's rules are, kept in the state directory (one JSON file per campaign) across
//! restarts, replaced by a higher version, removed by a push without rules or at expiry.
//! Their rules run beside recd.toml's; a name may be used by one rule only.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use recd_fleet::Campaign;
use recd_rules::{Rule, RuleConfig};

use super::{Origin, Rules};
use crate::locks::lock;

/// The campaigns that run, and where they are kept.
pub struct Shelf {
    /// The directory, one `<name>.json` per campaign; `None` keeps them in memory only.
    dir: Option<PathBuf>,
    held: BTreeMap<String, Campaign>,
    /// The earliest expiry among them, ns since the Unix epoch.
    next_expiry: Option<u64>,
}

impl Shelf {
    pub(super) fn new(dir: Option<PathBuf>) -> Self {
        Self {
            dir,
            held: BTreeMap::new(),
            next_expiry: None,
        }
    }

    fn file(&self, name: &str) -> Option<PathBuf> {
        Some(self.dir.as_ref()?.join(format!("{name}.json")))
    }

    fn keep(&mut self, campaign: Campaign) -> Result<(), String> {
        if let Some(file) = self.file(&campaign.name) {
            write_file(&file, &campaign)
                .map_err(|e| format!("cannot keep the campaign in {}: {e}", file.display()))?;
        }
        self.held.insert(campaign.name.clone(), campaign);
        self.note_expiries();
        Ok(())
    }

    fn drop_campaign(&mut self, name: &str) -> Option<Campaign> {
        if let Some(file) = self.file(name) {
            if let Err(error) = std::fs::remove_file(&file) {
                if error.kind() != std::io::ErrorKind::NotFound {
                    tracing::warn!(file = %file.display(), "cannot remove a campaign's file: {error}");
                }
            }
        }
        let dropped = self.held.remove(name);
        self.note_expiries();
        dropped
    }

    fn note_expiries(&mut self) {
        self.next_expiry = self.held.values().filter_map(|c| c.expires_ns).min();
    }
}

/// What a push did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Pushed {
    /// The campaign runs its rules now; `replaced` is the version it replaced.
    Runs {
        /// Its rules.
        rules: usize,
        /// The version it replaced, if any.
        replaced: Option<u64>,
    },
    /// The campaign was removed (it had no rules); `was` is the version that ran.
    Removed {
        /// The version that ran, if any did.
        was: Option<u64>,
    },
}

impl std::fmt::Display for Pushed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Pushed::Runs {
                rules,
                replaced: None,
            } => write!(f, "{rules} rule(s) run"),
            Pushed::Runs {
                rules,
                replaced: Some(version),
            } => write!(f, "{rules} rule(s) run, replacing version {version}"),
            Pushed::Removed { was: Some(version) } => write!(f, "version {version} removed"),
            Pushed::Removed { was: None } => f.write_str("no such campaign ran: nothing removed"),
        }
    }
}

/// Takes `campaign` at `now_ns`: its rules run (replacing a lower version), or it is
/// removed when it has none; refused, changing nothing, with what is wrong. `check`
/// checks rules as recd.toml's are checked.
pub fn push(
    rules: &Rules,
    campaign: Campaign,
    check: impl Fn(&[RuleConfig]) -> Result<Vec<Rule>, String>,
    now_ns: u64,
) -> Result<Pushed, String> {
    Campaign::check_name(&campaign.name)?;
    let mut shelf = lock(&rules.campaigns);
    let running = shelf.held.get(&campaign.name).map(|held| held.version);
    if let Some(version) = running.filter(|&version| version >= campaign.version) {
        return Err(format!(
            "campaign {} is at version {version} on this vehicle: push a higher version than {}",
            campaign.name, campaign.version
        ));
    }
    if campaign.rules.is_empty() {
        shelf.drop_campaign(&campaign.name);
        rules.replace(|origin| of(origin, &campaign.name), Vec::new());
        tracing::info!(campaign = %campaign.label(), "the fleet removed a campaign");
        return Ok(Pushed::Removed { was: running });
    }
    if let Some(expires_ns) = campaign.expires_ns.filter(|_| campaign.expired(now_ns)) {
        return Err(format!(
            "campaign {} expired at {}: push it with a later expiry",
            campaign.label(),
            crate::clock::rfc3339(expires_ns)
        ));
    }
    let checked = checked_rules(&campaign, &check)?;
    clashes(rules, &campaign.name, &checked)?;
    let origin = Origin::Campaign {
        name: campaign.name.clone(),
        version: campaign.version,
    };
    let count = checked.len();
    let label = campaign.label();
    let name = campaign.name.clone();
    shelf.keep(campaign)?;
    let added = (checked.into_iter())
        .map(|rule| (rule, origin.clone()))
        .collect();
    rules.replace(|origin| of(origin, &name), added);
    tracing::info!(campaign = %label, rules = count, replaced = ?running, "the fleet pushed a campaign: its rules run");
    Ok(Pushed::Runs {
        rules: count,
        replaced: running,
    })
}

/// Brings back the campaigns kept in the shelf's directory at `now_ns`: expired ones are
/// removed, ones that no longer pass `check` (recd.toml changed) are logged and left
/// unrun in their files.
pub fn restore(
    rules: &Rules,
    check: impl Fn(&[RuleConfig]) -> Result<Vec<Rule>, String>,
    now_ns: u64,
) {
    let Some(dir) = lock(&rules.campaigns).dir.clone() else {
        return;
    };
    for (file, read) in read_dir(&dir) {
        let campaign = match read {
            Ok(campaign) => campaign,
            Err(error) => {
                tracing::error!(file = %file.display(), "a kept campaign cannot be read, so it does not run: {error}");
                continue;
            }
        };
        let label = campaign.label();
        if campaign.expired(now_ns) {
            tracing::info!(campaign = %label, "a kept campaign expired while recd was down: removed");
            lock(&rules.campaigns).drop_campaign(&campaign.name);
            continue;
        }
        match push(rules, campaign, &check, now_ns) {
            Ok(_) => {}
            Err(error) => {
                tracing::error!(campaign = %label, file = %file.display(), "a kept campaign does not run: {error}")
            }
        }
    }
}

/// Removes the campaigns that expired by `now_ns`; cheap while none has.
pub fn expire(rules: &Rules, now_ns: i64) {
    let now_ns = now_ns.max(0) as u64;
    let mut shelf = lock(&rules.campaigns);
    if shelf.next_expiry.is_none_or(|next| next > now_ns) {
        return;
    }
    let expired: Vec<String> = (shelf.held.values())
        .filter(|campaign| campaign.expired(now_ns))
        .map(|campaign| campaign.name.clone())
        .collect();
    for name in expired {
        if let Some(campaign) = shelf.drop_campaign(&name) {
            rules.replace(|origin| of(origin, &name), Vec::new());
            tracing::info!(campaign = %campaign.label(), "a campaign expired: its rules stop");
        }
    }
}

/// Whether `origin` is the campaign `name`.
fn of(origin: &Origin, name: &str) -> bool {
    matches!(origin, Origin::Campaign { name: n, .. } if n == name)
}

/// The campaign's rule tables read and checked as recd.toml's.
fn checked_rules(
    campaign: &Campaign,
    check: &impl Fn(&[RuleConfig]) -> Result<Vec<Rule>, String>,
) -> Result<Vec<Rule>, String> {
    let configs = (campaign.rules.iter().enumerate())
        .map(|(i, table)| {
            serde_json::from_value::<RuleConfig>(serde_json::Value::Object(table.clone()))
                .map_err(|e| format!("[[rule]] #{}: {e}", i + 1))
        })
        .collect::<Result<Vec<_>, _>>()?;
    check(&configs)
}

/// Refuses rules whose names rules of another origin (recd.toml, another campaign) use.
fn clashes(rules: &Rules, campaign: &str, checked: &[Rule]) -> Result<(), String> {
    for slot in rules.slots() {
        if of(&slot.origin, campaign) {
            continue;
        }
        if let Some(rule) = checked.iter().find(|rule| rule.name == slot.rule.name) {
            return Err(format!(
                "[[rule]] {:?} is already a rule of {}: give the campaign's rule another name",
                rule.name, slot.origin
            ));
        }
    }
    Ok(())
}

/// The campaigns kept in `dir`, each with its file.
fn read_dir(dir: &Path) -> Vec<(PathBuf, Result<Campaign, String>)> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = (entries.filter_map(Result::ok))
        .map(|entry| entry.path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "json"))
        .collect();
    files.sort();
    (files.into_iter())
        .map(|file| {
            let read = std::fs::read(&file)
                .map_err(|e| e.to_string())
                .and_then(|bytes| serde_json::from_slice(&bytes).map_err(|e| e.to_string()));
            (file, read)
        })
        .collect()
}

/// Writes `campaign` to `file` whole or not at all: a temporary file, synced, renamed.
fn write_file(file: &Path, campaign: &Campaign) -> std::io::Result<()> {
    let dir = file.parent().expect("a campaign's file is in a directory");
    std::fs::create_dir_all(dir)?;
    let staged = dir.join(format!(
        ".{}.tmp",
        file.file_name().unwrap_or_default().to_string_lossy()
    ));
    let bytes = serde_json::to_vec_pretty(campaign).expect("a campaign serializes");
    {
        use std::io::Write;
        let mut out = std::fs::File::create(&staged)?;
        out.write_all(&bytes)?;
        out.sync_all()?;
    }
    std::fs::rename(&staged, file)?;
    std::fs::File::open(dir)?.sync_all()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn table(value: serde_json::Value) -> serde_json::Map<String, serde_json::Value> {
        value.as_object().unwrap().clone()
    }

    fn campaign(name: &str, version: u64, rules: &[&str]) -> Campaign {
        Campaign {
            name: name.into(),
            version,
            expires_ns: None,
            rules: (rules.iter())
                .map(|rule| table(json!({"name": rule, "health": "lidar/*"})))
                .collect(),
        }
    }

    fn check(configs: &[RuleConfig]) -> Result<Vec<Rule>, String> {
        recd_rules::check_rules(configs).map_err(|e| format!("[[rule]]: {e}"))
    }

    fn names(rules: &Rules) -> Vec<(String, String)> {
        (rules.status().into_iter())
            .map(|status| (status.name, status.origin))
            .collect()
    }

    #[test]
    fn a_campaign_runs_beside_recd_toml_is_replaced_by_a_higher_version_and_survives_a_restart() {
        let dir = tempfile::tempdir().unwrap();
        let own = check(&[serde_json::from_value(json!({"name": "own", "health": "a"})).unwrap()])
            .unwrap();
        let rules = Rules::new(own.clone(), true, Some(dir.path().to_path_buf()));
        let pushed = push(&rules, campaign("brakes", 1, &["hard"]), check, 0).unwrap();
        assert_eq!(
            pushed,
            Pushed::Runs {
                rules: 1,
                replaced: None
            }
        );
        let refused = push(&rules, campaign("brakes", 1, &["soft"]), check, 0).unwrap_err();
        assert!(refused.contains("at version 1"), "{refused}");
        push(&rules, campaign("brakes", 2, &["soft", "softer"]), check, 0).unwrap();
        let expected = vec![
            ("own".to_string(), "recd.toml".to_string()),
            ("soft".to_string(), "campaign brakes@2".to_string()),
            ("softer".to_string(), "campaign brakes@2".to_string()),
        ];
        assert_eq!(names(&rules), expected);

        let again = Rules::new(own, true, Some(dir.path().to_path_buf()));
        restore(&again, check, 0);
        assert_eq!(names(&again), expected);

        let removed = push(&again, campaign("brakes", 3, &[]), check, 0).unwrap();
        assert_eq!(removed, Pushed::Removed { was: Some(2) });
        assert_eq!(names(&again).len(), 1);
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }

    #[test]
    fn a_bad_rule_or_a_name_in_use_is_refused_and_changes_nothing() {
        let own = check(&[serde_json::from_value(json!({"name": "own", "health": "a"})).unwrap()])
            .unwrap();
        let rules = Rules::new(own, true, None);
        let mut bad = campaign("x", 1, &["ok"]);
        bad.rules.push(table(
            json!({"name": "late", "health": "a", "before": "8d"}),
        ));
        let refused = push(&rules, bad, check, 0).unwrap_err();
        let toml = check(&[serde_json::from_value(
            json!({"name": "late", "health": "a", "before": "8d"}),
        )
        .unwrap()])
        .unwrap_err();
        assert_eq!(refused, toml, "the message recd.toml would give");
        let mut unknown = campaign("x", 1, &[]);
        unknown
            .rules
            .push(table(json!({"name": "u", "helth": "a"})));
        let refused = push(&rules, unknown, check, 0).unwrap_err();
        assert!(
            refused.starts_with("[[rule]] #1: unknown field `helth`"),
            "{refused}"
        );
        let refused = push(&rules, campaign("x", 1, &["own"]), check, 0).unwrap_err();
        assert!(refused.contains("already a rule of recd.toml"), "{refused}");
        assert_eq!(names(&rules).len(), 1);
        let generation = rules.generation();
        assert!(push(&rules, campaign("../x", 1, &["a"]), check, 0).is_err());
        assert_eq!(rules.generation(), generation);
    }

    #[test]
    fn a_campaign_stops_at_its_expiry_and_an_expired_one_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let rules = Rules::new(Vec::new(), true, Some(dir.path().to_path_buf()));
        let mut timed = campaign("t", 1, &["a"]);
        timed.expires_ns = Some(1_000);
        let refused = push(&rules, timed.clone(), check, 1_000).unwrap_err();
        assert!(refused.contains("expired at"), "{refused}");
        push(&rules, timed, check, 999).unwrap();
        expire(&rules, 999);
        assert_eq!(names(&rules).len(), 1);
        expire(&rules, 1_000);
        assert!(names(&rules).is_empty());
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }
}
