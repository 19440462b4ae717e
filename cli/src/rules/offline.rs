//! `rec rules test`: the content rules of a recd.toml run over recorded files, printing
//! when each would have fired and the values it read. It evaluates the messages in the
//! order and with the log times recd wrote them, through the same code recd runs live
//! (`recd_rules`), so its firings are the live ones; a latched message recd repeats at
//! the start of a split file is seen once, as live.

use std::collections::{BTreeMap, HashMap};
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Args;
use recd_rules::{ChannelView, Rule, RuleConfig, RuleKind, RuleRunner};
use serde::{Deserialize, Serialize};

use crate::output::outln;

/// Run the rules over recorded files: when each would have fired.
///
/// FILE is an MCAP file, a directory of them, or a session of recd's catalog (its files
/// in the order they were written; incident cut files left out). The rules are the
/// [[rule]]s of --config. No incident is made. Health rules fire on live health changes
/// only and are not evaluated here. Exits 1 when a rule cannot run on its topic (a field
/// its schema lacks, no schema), 2 when a rule is invalid.
#[derive(Debug, Args)]
pub struct TestArgs {
    /// An MCAP file, a directory of them, or a session.
    #[arg(value_name = "FILE|SESSION")]
    target: PathBuf,
    /// Only this rule.
    #[arg(long, value_name = "NAME")]
    rule: Option<String>,
    /// The recd configuration holding the rules.
    #[arg(long, value_name = "FILE", default_value = "/etc/recd/recd.toml")]
    config: PathBuf,
    /// Print the firings and each rule's counts as JSON.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    socket: crate::socket::SocketArg,
}

/// The part of recd.toml this reads.
#[derive(Deserialize)]
struct RulesOnly {
    #[serde(default)]
    rule: Vec<RuleConfig>,
}

/// When a rule would have fired.
#[derive(Debug, Serialize)]
struct Firing {
    rule: String,
    topic: String,
    /// The firing sample's log time, ns since the Unix epoch (the incident's T).
    time_ns: u64,
    values: BTreeMap<String, serde_json::Value>,
}

/// A rule's counts over the files.
#[derive(Debug, Serialize)]
struct Tally {
    name: String,
    evaluated: u64,
    fired: u64,
    errors: u64,
    /// Why it could not run on its topic, or its first evaluation error.
    problem: Option<String>,
}

/// What `--json` prints.
#[derive(Debug, Serialize)]
struct Outcome {
    firings: Vec<Firing>,
    rules: Vec<Tally>,
}

/// A content rule as it runs over the files.
struct Running {
    rule: Rule,
    topic: String,
    runner: Option<RuleRunner>,
    tally: Tally,
}

/// `rec rules test`.
pub fn run(args: &TestArgs) -> Result<ExitCode, String> {
    let rules = match load(&args.config, args.rule.as_deref()) {
        Ok(rules) => rules,
        Err(error) => {
            eprintln!("rec: {error}");
            return Ok(ExitCode::from(2));
        }
    };
    let files = files(&args.socket.path, &args.target)?;
    let mut running: Vec<Running> = rules
        .into_iter()
        .filter_map(|rule| match &rule.kind {
            RuleKind::Content { topic, .. } => Some(Running {
                topic: topic.clone(),
                tally: Tally {
                    name: rule.name.clone(),
                    evaluated: 0,
                    fired: 0,
                    errors: 0,
                    problem: None,
                },
                rule,
                runner: None,
            }),
            RuleKind::Health { .. } => None,
        })
        .collect();
    let mut firings = Vec::new();
    let mut latched = Latched::default();
    for file in &files {
        latched.next_file();
        // Only the rules' topics are looked at: the other messages' bytes (camera frames)
        // are skipped, not read.
        recd_storage::for_each_message_skipping(file, |message| {
            let topic = &message.channel.topic;
            if !running.iter().any(|r| &r.topic == topic) || latched.repeats(&message) {
                return ControlFlow::Continue(());
            }
            for rule in running.iter_mut().filter(|r| &r.topic == topic) {
                offer(rule, &message, &mut firings);
            }
            ControlFlow::Continue(())
        })
        .map_err(|e| e.to_string())?;
    }
    let refused = running
        .iter()
        .any(|r| r.runner.is_none() && r.tally.problem.is_some());
    let outcome = Outcome {
        firings,
        rules: running.into_iter().map(|r| r.tally).collect(),
    };
    if args.json {
        crate::output::print_json(&outcome)?;
    } else {
        print(&outcome, files.len());
    }
    Ok(if refused {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

/// The checked rules of `config` (only `only`, when given).
fn load(config: &Path, only: Option<&str>) -> Result<Vec<Rule>, String> {
    let text = std::fs::read_to_string(config)
        .map_err(|e| format!("cannot read {}: {e}", config.display()))?;
    let table: RulesOnly =
        toml::from_str(&text).map_err(|e| format!("{}: {e}", config.display()))?;
    let rules = recd_rules::check_rules(&table.rule)
        .map_err(|e| format!("{}: [[rule]]: {e}", config.display()))?;
    match only {
        None if rules.is_empty() => Err(format!("{} has no [[rule]]", config.display())),
        None => Ok(rules),
        Some(name) => {
            let names: Vec<&str> = rules.iter().map(|r| r.name.as_str()).collect();
            let known = names.join(", ");
            rules
                .iter()
                .find(|r| r.name == name)
                .cloned()
                .map(|rule| vec![rule])
                .ok_or_else(|| format!("{} has no rule {name:?}; it has {known}", config.display()))
        }
    }
}

/// The files `target` stands for, an incident's cut files left out (they repeat windows
/// of the session's own).
fn files(socket: &Path, target: &Path) -> Result<Vec<PathBuf>, String> {
    let files: Vec<PathBuf> = crate::files::files_of(socket, target)?
        .into_iter()
        .filter(|file| {
            file.parent()
                .and_then(Path::file_name)
                .is_none_or(|dir| dir != "incidents")
        })
        .collect();
    crate::files::refuse_sealed(&files)?;
    if files.is_empty() {
        return Err(format!("{} holds no recording files", target.display()));
    }
    Ok(files)
}

fn offer(
    rule: &mut Running,
    message: &recd_storage::RecordedMessage<'_>,
    firings: &mut Vec<Firing>,
) {
    if rule.runner.is_none() {
        if rule.tally.problem.is_some() {
            return;
        }
        let channel = message.channel;
        match rule.rule.runner_for(&ChannelView {
            topic: &channel.topic,
            message_encoding: &channel.message_encoding,
            schema_name: &channel.schema_name,
            schema_encoding: &channel.schema_encoding,
            schema_data: &channel.schema_data,
            metadata: &channel.metadata,
        }) {
            Ok(runner) => rule.runner = Some(runner),
            Err(problem) => {
                rule.tally.problem = Some(problem.to_string());
                return;
            }
        }
    }
    let runner = rule.runner.as_mut().expect("compiled above");
    rule.tally.evaluated += 1;
    match runner.offer(message.log_time, message.data) {
        Ok(Some(fired)) => {
            rule.tally.fired += 1;
            firings.push(Firing {
                rule: rule.rule.name.clone(),
                topic: rule.topic.clone(),
                time_ns: fired.log_time_ns,
                values: fired.values,
            });
        }
        Ok(None) => {}
        Err(error) => {
            rule.tally.errors += 1;
            rule.tally.problem.get_or_insert(error.to_string());
        }
    }
}

/// The last message of each topic in the file before, to recognise the latched message
/// recd repeats at the start of a split file (same log time, publish time and bytes).
#[derive(Default)]
struct Latched {
    previous: HashMap<String, (u64, u64, Vec<u8>)>,
    current: HashMap<String, (u64, u64, Vec<u8>)>,
}

impl Latched {
    fn next_file(&mut self) {
        let finished = std::mem::take(&mut self.current);
        self.previous.extend(finished);
    }

    /// Whether `message` repeats its topic's last message of an earlier file (only its
    /// first in this file can).
    fn repeats(&mut self, message: &recd_storage::RecordedMessage<'_>) -> bool {
        let topic = &message.channel.topic;
        let first_here = !self.current.contains_key(topic);
        let seen = (
            message.log_time,
            message.publish_time,
            message.data.to_vec(),
        );
        let repeat = first_here && self.previous.get(topic) == Some(&seen);
        self.current.insert(topic.clone(), seen);
        repeat
    }
}

fn print(outcome: &Outcome, files: usize) {
    for firing in &outcome.firings {
        outln!(
            "{}  {}  {}  {}",
            crate::format::timestamp(firing.time_ns),
            firing.rule,
            firing.topic,
            serde_json::Value::from_iter(firing.values.clone())
        );
    }
    for tally in &outcome.rules {
        outln!(
            "rule {}: {} evaluated, {} fired, {} errors over {files} file(s){}",
            tally.name,
            tally.evaluated,
            tally.fired,
            tally.errors,
            tally
                .problem
                .as_ref()
                .map_or(String::new(), |p| format!("; {p}"))
        );
    }
}
