//! `rec fleet trigger`: every recorder of the domain keeps the window around one
//! moment; each must answer.

use std::collections::BTreeMap;
use std::process::ExitCode;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use clap::Args;
use recd_remote::{CommandArgs, DdsRecorderCommand, RemoteCommand};
use serde::Serialize;

use super::link::{newest_by_recorder, Domain, Link};
use crate::output::outln;

/// Trigger every recorder of the domain at one moment and wait for each to answer.
///
/// The moment is now (when rec runs) unless --at: each recd cuts its window around it in
/// its own clock, however late the command arrives, so files of several ECUs line up as
/// well as their clocks do (each trigger record keeps its host's clock-sync evidence).
/// Recorders are those whose status was heard within --listen; one that does not answer
/// within --timeout is named, and the exit status is 1.
#[derive(Debug, Args)]
pub struct TriggerArgs {
    #[command(flatten)]
    window: crate::window::WindowArgs,
    /// The session on each recorder (default: the only one each records).
    #[arg(long, value_name = "NAME")]
    session: Option<String>,
    /// How long to wait for the answers.
    #[arg(long, value_name = "DURATION", default_value = "10s", value_parser = recd_control::units::parse_duration)]
    timeout: Duration,
    /// Print the answers as JSON.
    #[arg(long)]
    json: bool,
}

/// One recorder's answer.
#[derive(Debug, Serialize)]
struct Answer {
    recorder: String,
    host: String,
    ok: bool,
    error: Option<String>,
    files: Vec<String>,
    /// The incident a recorder's session on disk made (or found) of the window.
    incident: Option<String>,
    repeated: bool,
    /// Seconds from the command's write to the answer.
    latency_s: f64,
}

/// What `--json` prints.
#[derive(Debug, Serialize)]
struct Outcome {
    id: String,
    trigger_ns: u64,
    answers: Vec<Answer>,
    silent: Vec<String>,
}

/// `rec fleet trigger`.
pub fn run(domain: &Domain, listen: Duration, args: &TriggerArgs) -> Result<ExitCode, String> {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
        .as_nanos() as u64;
    let window = &args.window;
    // Checked before anything is sent: a side beyond what recd accepts is refused here.
    window.sides_ms()?;
    let trigger_ns = window.at.unwrap_or(now);
    let id = window
        .id
        .clone()
        .unwrap_or_else(|| format!("fleet-{now}-{}", std::process::id()));
    let mut link = Link::join(domain)?;
    let heard = link.listen(Instant::now() + listen, |_| false);
    let recorders: BTreeMap<String, String> = newest_by_recorder(&heard)
        .into_iter()
        .filter_map(|(key, one)| one.info.map(|info| (key, info.recorder)))
        .collect();
    if recorders.is_empty() {
        return Err(format!(
            "no recorder answered on DDS domain {} within {} (is [remote_control] on?)",
            domain.id,
            humantime::format_duration(listen)
        ));
    }
    // A command written before a recorder's reader matched would never reach it.
    let matched_by = Instant::now() + listen;
    while link.command_readers() < recorders.len() && Instant::now() < matched_by {
        std::thread::sleep(Duration::from_millis(10));
    }
    let args_json = CommandArgs {
        session: args.session.clone(),
        trigger_ns: Some(trigger_ns),
        before: window.before,
        after: Some(window.after),
        note: Some(window.note.clone()),
        id: Some(id.clone()),
        ..CommandArgs::default()
    };
    let sent = Instant::now();
    link.send(DdsRecorderCommand {
        command: RemoteCommand::Event.name().to_string(),
        args: args_json.to_json(),
    })?;
    let mut answers: BTreeMap<String, Answer> = BTreeMap::new();
    // A trigger ahead is answered once its moment has come.
    let ahead = Duration::from_nanos(trigger_ns.saturating_sub(now));
    let deadline = sent + args.timeout + ahead;
    link.listen(deadline, |one| {
        let Some(info) = &one.info else { return false };
        let Some(reply) = &info.reply else {
            return false;
        };
        if reply.id.as_deref() != Some(id.as_str()) || reply.command != "event" {
            return false;
        }
        let key = one.recorder_key();
        answers.insert(
            key,
            Answer {
                recorder: info.recorder.clone(),
                host: info.host.clone(),
                ok: reply.ok,
                error: reply.error.clone(),
                files: reply.files.clone(),
                incident: reply.incident.clone(),
                repeated: reply.repeated,
                latency_s: one.at.duration_since(sent).as_secs_f64(),
            },
        );
        recorders.keys().all(|key| answers.contains_key(key))
    });
    let silent: Vec<String> = recorders
        .iter()
        .filter(|(key, _)| !answers.contains_key(*key))
        .map(|(_, name)| name.clone())
        .collect();
    let failed = answers.values().any(|a| !a.ok) || !silent.is_empty();
    let outcome = Outcome {
        id,
        trigger_ns,
        answers: answers.into_values().collect(),
        silent,
    };
    if args.json {
        crate::output::print_json(&outcome)?;
    } else {
        outln!(
            "trigger {} at {}",
            outcome.id,
            crate::format::timestamp(outcome.trigger_ns)
        );
        for answer in &outcome.answers {
            let kept = match &answer.incident {
                Some(id) => format!("incident {id}"),
                None => answer.files.join(", "),
            };
            let what = match (&answer.error, answer.repeated) {
                (Some(error), _) => format!("refused: {error}"),
                (None, true) => format!("already triggered: {kept}"),
                (None, false) => kept,
            };
            outln!(
                "  {} ({}) after {:.0} ms: {what}",
                answer.recorder,
                answer.host,
                answer.latency_s * 1000.0
            );
        }
        for name in &outcome.silent {
            outln!(
                "  {name}: no answer within {}",
                humantime::format_duration(args.timeout)
            );
        }
    }
    Ok(if failed {
        ExitCode::from(crate::EXIT_FAILURE)
    } else {
        ExitCode::SUCCESS
    })
}
