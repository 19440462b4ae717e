//! `rec fleet --broker URL campaign push FILE`: rules for the vehicles, as a campaign.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use clap::{Args, Subcommand};
use recd_fleet::{Action, Campaign, Request};
use recd_rules::RuleConfig;
use serde::Deserialize;

use super::connect::Settings;
use super::replies::{addressed, ask_each, fresh_id, Target};
use super::BrokerArgs;

/// Rules pushed to the vehicles: a campaign.
#[derive(Debug, Args)]
pub struct CampaignArgs {
    #[command(subcommand)]
    action: CampaignAction,
}

#[derive(Debug, Subcommand)]
enum CampaignAction {
    Push(PushArgs),
}

/// Push FILE's [[rule]] tables to the vehicles as the campaign --name at --version.
///
/// Each vehicle checks the rules exactly as it checks recd.toml's (and refuses the
/// campaign with the same message), runs them beside its own, keeps them across
/// restarts, and drops them at --expires. A higher --version replaces the campaign; a
/// FILE without rules removes it. The rules are checked here first, as far as they can be
/// without the topics' schemas. Waits for each named vehicle's reply (or, for every
/// vehicle, listens --listen) and exits 1 naming a vehicle that refused or did not reply.
#[derive(Debug, Args)]
pub struct PushArgs {
    /// A TOML file of [[rule]] tables, written as in recd.toml.
    #[arg(value_name = "FILE")]
    file: PathBuf,
    /// The campaign's name (letters, digits, '-', '_', '.').
    #[arg(long, value_name = "NAME")]
    name: String,
    /// Its version: a vehicle takes only a higher one than it runs.
    #[arg(long, value_name = "N")]
    version: u64,
    /// When it ends: RFC 3339 in UTC, ns since the epoch, or a duration from now (7d,
    /// +12h). Default: never (until replaced or removed).
    #[arg(long, value_name = "TIME")]
    expires: Option<String>,
    /// A vehicle to push it to (repeat for more; default every vehicle).
    #[arg(long, value_name = "ID")]
    vehicle: Vec<String>,
    /// Print the outcome (every reply, who refused, who did not reply) as JSON at the end.
    #[arg(long)]
    json: bool,
}

/// What FILE may hold: [[rule]] tables only.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RuleFile {
    #[serde(default)]
    rule: Vec<RuleConfig>,
}

/// The [[rule]] tables of `file`, checked as recd.toml's are.
fn read_rules(file: &Path) -> Result<Vec<RuleConfig>, String> {
    let text = std::fs::read_to_string(file)
        .map_err(|e| format!("cannot read {}: {e}", file.display()))?;
    let rules = toml::from_str::<RuleFile>(&text)
        .map_err(|e| {
            format!(
                "{}: {e}(a campaign holds [[rule]] tables only)",
                file.display()
            )
        })?
        .rule;
    recd_rules::check_rules(&rules).map_err(|e| format!("{}: [[rule]]: {e}", file.display()))?;
    Ok(rules)
}

/// When `text` says a campaign ends, at `now_ns`: a moment as `--at` takes it, or a
/// duration from now.
fn expiry(text: &str, now_ns: u64) -> Result<u64, String> {
    if let Ok(at) = recd_control::units::parse_time_ns(text) {
        return Ok(at);
    }
    let ahead = text.trim().trim_start_matches('+').trim();
    recd_control::units::parse_duration(ahead)
        .map(|ahead| now_ns.saturating_add(ahead.as_nanos() as u64))
        .map_err(|_| {
            format!(
                "--expires {text:?}: give a time (2026-12-31T00:00:00Z) or a duration from now (7d)"
            )
        })
}

/// The campaign `args` push, at `now_ns`, as one request per vehicle (or one for all).
pub fn requests(
    args: &PushArgs,
    prefix: &str,
    id: &str,
    now_ns: u64,
) -> Result<(Vec<Request>, Target), String> {
    Campaign::check_name(&args.name).map_err(|e| format!("--name: {e}"))?;
    let expires_ns = args
        .expires
        .as_deref()
        .map(|text| expiry(text, now_ns))
        .transpose()?;
    if let Some(expires_ns) = expires_ns.filter(|&at| at <= now_ns) {
        return Err(format!(
            "--expires: {} has passed",
            crate::format::timestamp(expires_ns)
        ));
    }
    let rules = (read_rules(&args.file)?.iter())
        .map(|rule| match serde_json::to_value(rule) {
            Ok(serde_json::Value::Object(table)) => table,
            _ => unreachable!("a rule serializes to a table"),
        })
        .collect();
    let campaign = Campaign {
        name: args.name.clone(),
        version: args.version,
        expires_ns,
        rules,
    };
    addressed(
        &args.vehicle,
        prefix,
        id,
        now_ns,
        &Action::Campaign(campaign),
    )
}

/// `rec fleet --broker URL campaign …`.
pub fn run(
    settings: &Settings,
    broker: &BrokerArgs,
    listen: Duration,
    args: &CampaignArgs,
) -> Result<ExitCode, String> {
    let CampaignAction::Push(push) = &args.action;
    let id = fresh_id("campaign");
    let asked = requests(push, broker.prefix(), &id, crate::window::now_ns())?;
    let what = format!("campaign {}@{}", push.name, push.version);
    ask_each(settings, broker, listen, asked, &what, push.json)
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;

    #[derive(Debug, Parser)]
    struct Push {
        #[command(flatten)]
        args: PushArgs,
    }

    fn args(file: &Path, more: &[&str]) -> PushArgs {
        let file = file.to_str().unwrap();
        let words = ["push", file, "--name", "brakes", "--version", "3"];
        Push::try_parse_from(words.iter().chain(more.iter()).copied())
            .unwrap()
            .args
    }

    #[test]
    fn a_rule_file_becomes_a_campaign_for_each_vehicle_with_its_expiry() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("rules.toml");
        let rules = "[[rule]]\nname = \"hard\"\ntopic = \"/brake\"\nwhen = \"msg.data > 5\"\nbefore = \"20s\"\n";
        std::fs::write(&file, rules).unwrap();
        let push = args(&file, &["--expires", "7d", "--vehicle", "car-1"]);
        let (requests, target) = super::requests(&push, "recd", "c1", 1_000).unwrap();
        assert_eq!(target, Target::Named(vec!["car-1".into()]));
        let Action::Campaign(campaign) = &requests[0].action else {
            panic!("{requests:?}")
        };
        assert_eq!(
            (
                campaign.name.as_str(),
                campaign.version,
                campaign.expires_ns
            ),
            ("brakes", 3, Some(1_000 + 7 * 86_400 * 1_000_000_000))
        );
        assert_eq!(campaign.rules.len(), 1);
        assert_eq!(campaign.rules[0]["when"], "msg.data > 5");
        assert_eq!(campaign.rules[0]["before"], "20s");
    }

    #[test]
    fn bad_rules_names_and_expiries_are_refused_before_anything_is_sent() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("rules.toml");
        std::fs::write(
            &file,
            "[[rule]]\nname = \"x\"\nhealth = \"a\"\nbefore = \"8d\"\n",
        )
        .unwrap();
        let refused = super::requests(&args(&file, &[]), "recd", "c", 0).unwrap_err();
        assert!(
            refused.contains("[[rule]]") && refused.contains("before"),
            "{refused}"
        );
        std::fs::write(&file, "[recording]\nio_mode = \"direct\"\n").unwrap();
        let refused = super::requests(&args(&file, &[]), "recd", "c", 0).unwrap_err();
        assert!(refused.contains("[[rule]] tables only"), "{refused}");
        std::fs::write(&file, "").unwrap();
        let removal = super::requests(&args(&file, &[]), "recd", "c", 0).unwrap();
        assert!(matches!(&removal.0[0].action, Action::Campaign(c) if c.rules.is_empty()));
        let refused = super::requests(
            &args(&file, &["--expires", "1970-01-01T00:00:01Z"]),
            "recd",
            "c",
            5_000_000_000,
        )
        .unwrap_err();
        assert!(refused.contains("has passed"), "{refused}");
        let refused =
            super::requests(&args(&file, &["--expires", "soon"]), "recd", "c", 0).unwrap_err();
        assert!(refused.contains("--expires \"soon\""), "{refused}");
    }
}
