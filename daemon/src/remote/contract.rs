//! eProsima DDS Record & Replay's remote-control contract: commands read from the
//! command topic, a status written for each (its reply in `info`), on every change and
//! every `status_interval`.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use futures::StreamExt;
use recd_remote::{
    command_qos, status_qos, CommandArgs, DdsRecorderCommand, DdsRecorderStatus, RemoteCommand,
    Reply, COMMAND_TYPE, STATUS_TYPE,
};
use rustdds::{QosPolicyBuilder, TopicKind};
use tokio::sync::mpsc;

use super::commands::{carry_out, Outcome};
use super::status::{info, state_of, statuses};
use super::{origin, Context};

/// Serves the contract until the task is dropped or the reader ends.
pub async fn serve(context: Arc<Context>) -> Result<(), String> {
    let config = &context.config;
    let participant = &context.participant;
    let failed =
        |what: &str, error: &dyn std::fmt::Display| format!("cannot create the {what}: {error}");
    let command_topic = participant
        .create_topic(
            config.command_topic.clone(),
            COMMAND_TYPE.to_string(),
            &command_qos(),
            TopicKind::NoKey,
        )
        .map_err(|e| failed("command topic", &e))?;
    let status_topic = participant
        .create_topic(
            config.status_topic.clone(),
            STATUS_TYPE.to_string(),
            &status_qos(),
            TopicKind::NoKey,
        )
        .map_err(|e| failed("status topic", &e))?;
    let subscriber = participant
        .create_subscriber(&QosPolicyBuilder::new().build())
        .map_err(|e| failed("subscriber", &e))?;
    let publisher = participant
        .create_publisher(&QosPolicyBuilder::new().build())
        .map_err(|e| failed("publisher", &e))?;
    let reader = subscriber
        .create_datareader_no_key_cdr::<DdsRecorderCommand>(&command_topic, Some(command_qos()))
        .map_err(|e| failed("command reader", &e))?;
    let writer = publisher
        .create_datawriter_no_key_cdr::<DdsRecorderStatus>(&status_topic, Some(status_qos()))
        .map_err(|e| failed("status writer", &e))?;

    let mut commands = reader.async_sample_stream();
    let (statuses_tx, mut statuses_rx) = mpsc::unbounded_channel::<DdsRecorderStatus>();
    let mut tick = tokio::time::interval(config.status_interval);
    let told_disabled = Arc::new(AtomicBool::new(false));
    loop {
        tokio::select! {
            sample = commands.next() => match sample {
                Some(Ok(sample)) => {
                    let origin = origin::describe(participant, sample.sample_info().writer_guid());
                    let command = sample.into_value();
                    take(&context, command, origin, &told_disabled, statuses_tx.clone());
                }
                Some(Err(error)) => tracing::warn!("a remote command could not be read: {error}"),
                None => return Err("the command reader ended".into()),
            },
            Some(status) = statuses_rx.recv() => {
                if let Err(error) = writer.async_write(status, None).await {
                    tracing::warn!("cannot write the remote-control status: {error}");
                }
            }
            _ = tick.tick(), if config.publishes_status() => {
                let context = context.clone();
                let statuses_tx = statuses_tx.clone();
                context.clone().worker.run(move || {
                    let _ = statuses_tx.send(periodic(&context));
                });
            }
        }
    }
}

/// A status with no reply.
fn periodic(context: &Context) -> DdsRecorderStatus {
    let running = statuses(&context.sessions);
    let state = state_of(&running, None, &context.suspended);
    let info = info(
        &context.identity,
        &context.sessions,
        &running,
        &context.suspended,
    );
    DdsRecorderStatus {
        previous: state.to_string(),
        current: state.to_string(),
        info: info.to_json(),
    }
}

/// Logs a command with its origin and carries it out (on the worker), or refuses it;
/// either way a status with the reply goes to `replies`.
fn take(
    context: &Arc<Context>,
    command: DdsRecorderCommand,
    origin: String,
    told_disabled: &AtomicBool,
    replies: mpsc::UnboundedSender<DdsRecorderStatus>,
) {
    let config = &context.config;
    let refusal = if !config.enabled {
        if !told_disabled.swap(true, Ordering::Relaxed) {
            tracing::warn!(
                %origin,
                command = %command.command,
                "a remote command came, and remote control is off ([remote_control] enabled = false): it and any later ones are ignored (logged once)"
            );
        }
        Some(
            "remote control is off on this recorder ([remote_control] enabled = false)".to_string(),
        )
    } else {
        tracing::info!(%origin, command = %command.command, args = %command.args, "remote command");
        None
    };
    let parsed = RemoteCommand::parse(&command.command).and_then(|name| {
        let args = CommandArgs::parse(&command.args)?;
        Ok((name, args))
    });
    let refusal = refusal.or_else(|| match &parsed {
        Err(error) => Some(error.to_string()),
        Ok((name, _)) if !config.allows(name.name()) => Some(format!(
            "{name} is not allowed on this recorder ([remote_control] allow = {:?})",
            config.allow
        )),
        Ok(_) => None,
    });
    let worker = context.worker.clone();
    let context = context.clone();
    match (refusal, parsed) {
        (Some(refusal), parsed) => {
            if config.enabled {
                tracing::warn!(command = %command.command, "remote command refused: {refusal}");
            }
            let id = parsed
                .ok()
                .and_then(|(_, args)| args.id)
                .or_else(|| id_of(&command.args));
            worker.run(move || {
                let reply = Reply {
                    command: command.command,
                    id,
                    ok: false,
                    error: Some(refusal),
                    ..Reply::default()
                };
                let running = statuses(&context.sessions);
                let state = state_of(&running, None, &context.suspended);
                let outcome = Outcome {
                    previous: state,
                    current: state,
                    reply,
                };
                let _ = replies.send(status_of(&context, outcome));
            });
        }
        (None, Ok((name, args))) => {
            let work = move || {
                let outcome = carry_out(&context.sessions, &context.suspended, name, &args);
                if let Some(error) = &outcome.reply.error {
                    tracing::warn!(command = %name, "remote command failed: {error}");
                }
                let _ = replies.send(status_of(&context, outcome));
            };
            if waits_for_its_moment(name, &command.args) {
                std::thread::spawn(work);
            } else {
                worker.run(work);
            }
        }
        (None, Err(_)) => unreachable!("a parse error is a refusal"),
    }
}

/// An event whose moment is ahead: it waits on a thread of its own.
fn waits_for_its_moment(name: RemoteCommand, args: &str) -> bool {
    let ahead = CommandArgs::parse(args)
        .ok()
        .and_then(|args| args.trigger_ns)
        .is_some_and(|at| at > crate::sessions::now_ns().max(0) as u64);
    name == RemoteCommand::Event && ahead
}

/// The `id` of args that did not parse as recd's, when it is there, so that the
/// refusal can still be matched to its command.
fn id_of(args: &str) -> Option<String> {
    let value: serde_json::Value = serde_json::from_str(args).ok()?;
    value.get("id")?.as_str().map(str::to_string)
}

/// The status that answers a command.
fn status_of(context: &Context, outcome: Outcome) -> DdsRecorderStatus {
    let running = statuses(&context.sessions);
    let mut info = info(
        &context.identity,
        &context.sessions,
        &running,
        &context.suspended,
    );
    info.reply = Some(outcome.reply);
    DdsRecorderStatus {
        previous: outcome.previous.to_string(),
        current: outcome.current.to_string(),
        info: info.to_json(),
    }
}
