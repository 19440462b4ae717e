//! eProsima DDS Record & Replay's remote-control contract: commands read from the
//! command topic, a status written for each (its reply in `info`), on every change and
//! every `status_interval`.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use futures::StreamExt;
use recd_remote::{
    command_qos, status_qos, CommandArgs, DdsRecorderCommand, DdsRecorderStatus, RemoteCommand,
    Reply, Topics,
};
use rustdds::QosPolicyBuilder;
use tokio::sync::mpsc;

use super::commands::{carry_out, Outcome};
use super::status::{info, state_of, statuses};
use super::{origin, Context};
use crate::config::RemoteControlConfig;

/// Serves the contract until the task is dropped or the reader ends.
pub async fn serve(context: Arc<Context>) -> Result<(), String> {
    let config = &context.config;
    let participant = &context.participant;
    let failed =
        |what: &str, error: &dyn std::fmt::Display| format!("cannot create the {what}: {error}");
    let topics = Topics::create(participant, &config.command_topic, &config.status_topic)?;
    let subscriber = participant
        .create_subscriber(&QosPolicyBuilder::new().build())
        .map_err(|e| failed("subscriber", &e))?;
    let publisher = participant
        .create_publisher(&QosPolicyBuilder::new().build())
        .map_err(|e| failed("publisher", &e))?;
    let reader = subscriber
        .create_datareader_no_key_cdr::<DdsRecorderCommand>(&topics.command, Some(command_qos()))
        .map_err(|e| failed("command reader", &e))?;
    let writer = publisher
        .create_datawriter_no_key_cdr::<DdsRecorderStatus>(&topics.status, Some(status_qos()))
        .map_err(|e| failed("status writer", &e))?;
    // `fleet = true` rules tell every recorder of the domain (this one hears itself too,
    // and takes the incident once: it keeps its id).
    let fleet_writer = publisher
        .create_datawriter_no_key_cdr::<DdsRecorderCommand>(&topics.command, Some(command_qos()))
        .map_err(|e| failed("command writer", &e))?;
    let (fleet_tx, mut fleet_rx) = mpsc::unbounded_channel::<DdsRecorderCommand>();
    context.sessions.set_fleet_outbox(fleet_tx);

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
            Some(command) = fleet_rx.recv() => {
                if let Err(error) = fleet_writer.async_write(command, None).await {
                    tracing::warn!("cannot send a rule's incident to the fleet: {error}");
                }
            }
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
    if context.config.enabled {
        tracing::info!(%origin, command = %command.command, args = %command.args, "remote command");
    } else if !told_disabled.swap(true, Ordering::Relaxed) {
        tracing::warn!(
            %origin,
            command = %command.command,
            "a remote command came, and remote control is off ([remote_control] enabled = false): it and any later ones are ignored (logged once)"
        );
    }
    let worker = context.worker.clone();
    let context = context.clone();
    match judge(&context.config, &command) {
        Err(refusal) => {
            if context.config.enabled {
                tracing::warn!(command = %command.command, "remote command refused: {refusal}");
            }
            worker.run(move || {
                let reply = Reply {
                    id: id_of(&command.args),
                    command: command.command,
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
        Ok((name, args)) => {
            let ahead = name == RemoteCommand::Event
                && args
                    .trigger_ns
                    .is_some_and(|at| at > crate::clock::now_ns().max(0) as u64);
            let work = move || {
                let outcome = carry_out(&context.sessions, &context.suspended, name, &args);
                if let Some(error) = &outcome.reply.error {
                    tracing::warn!(command = %name, "remote command failed: {error}");
                }
                let _ = replies.send(status_of(&context, outcome));
            };
            if ahead {
                // It waits for its moment on a thread of its own, not holding the others.
                std::thread::spawn(work);
            } else {
                worker.run(work);
            }
        }
    }
}

/// The command and its args when recd takes it, or why not.
fn judge(
    config: &RemoteControlConfig,
    command: &DdsRecorderCommand,
) -> Result<(RemoteCommand, CommandArgs), String> {
    if !config.enabled {
        return Err(
            "remote control is off on this recorder ([remote_control] enabled = false)".into(),
        );
    }
    let name = RemoteCommand::parse(&command.command).map_err(|e| e.to_string())?;
    let args = CommandArgs::parse(&command.args).map_err(|e| e.to_string())?;
    if !config.allows(name.name()) {
        return Err(format!(
            "{name} is not allowed on this recorder ([remote_control] allow = {:?})",
            config.allow
        ));
    }
    Ok((name, args))
}

/// The `id` in a command's args, when there is one, so that even a refusal can be
/// matched to its command.
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

#[cfg(test)]
mod tests {
    use super::*;

    fn command(command: &str, args: &str) -> DdsRecorderCommand {
        DdsRecorderCommand {
            command: command.into(),
            args: args.into(),
        }
    }

    #[test]
    fn judge_takes_allowed_commands_and_names_what_is_wrong_with_the_rest() {
        let mut config = RemoteControlConfig {
            enabled: true,
            allow: vec!["event".into()],
            ..RemoteControlConfig::default()
        };
        let (name, args) = judge(&config, &command("event", r#"{"id":"a"}"#)).unwrap();
        assert_eq!(
            (name, args.id.as_deref()),
            (RemoteCommand::Event, Some("a"))
        );
        let refused = |config: &RemoteControlConfig, c: &str, a: &str| {
            judge(config, &command(c, a)).unwrap_err()
        };
        assert!(refused(&config, "stop", "").contains("stop is not allowed"));
        assert!(refused(&config, "explode", "").contains("unknown command"));
        assert!(refused(&config, "event", "{").contains("malformed args"));
        config.enabled = false;
        assert!(refused(&config, "event", "").contains("remote control is off"));
        assert_eq!(id_of(r#"{"id":"b","befor":1}"#).as_deref(), Some("b"));
        assert_eq!(id_of("{"), None);
    }
}
