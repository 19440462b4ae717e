//! What the contract's commands do to recd's sessions, through the same requests as
//! the control socket.

use recd_control::{
    Request, Response, SessionStatus, SetTopicsRequest, StartRequest, TriggerRequest,
};
use recd_remote::{CommandArgs, RecorderState, RemoteCommand, Reply};

use super::status::{state_of, statuses, Suspended};
use crate::sessions::Sessions;

/// A command's outcome: the state before and after, and the reply.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// The state before the command.
    pub previous: RecorderState,
    /// The state after it.
    pub current: RecorderState,
    /// What became of it.
    pub reply: Reply,
}

/// Carries out `command` with `args` (blocking: a trigger ahead waits for its moment).
pub fn carry_out(
    sessions: &Sessions,
    suspended: &Suspended,
    command: RemoteCommand,
    args: &CommandArgs,
) -> Outcome {
    let before = statuses(sessions);
    let target = args.session.as_deref();
    let previous = state_of(&before, target, suspended);
    let mut reply = Reply {
        command: command.name().to_string(),
        id: args.id.clone(),
        ..Reply::default()
    };
    match act(sessions, suspended, command, args, &before) {
        Ok(response) => {
            reply.ok = true;
            describe(&response, &mut reply);
        }
        Err(message) => reply.error = Some(message),
    }
    let current = state_of(&statuses(sessions), target, suspended);
    Outcome {
        previous,
        current,
        reply,
    }
}

fn act(
    sessions: &Sessions,
    suspended: &Suspended,
    command: RemoteCommand,
    args: &CommandArgs,
    running: &[SessionStatus],
) -> Result<Response, String> {
    let name = args.session.clone();
    let ask = |request| sessions.answer(request).map_err(|error| error.message);
    match command {
        RemoteCommand::Start => match target(running, name.as_deref()) {
            Some(session) => {
                if !args.add_topics.is_empty() || !args.remove_topics.is_empty() {
                    ask(Request::SetTopics(SetTopicsRequest {
                        name: Some(session.name.clone()),
                        add: args.add_topics.clone(),
                        remove: args.remove_topics.clone(),
                    }))?;
                }
                suspended.set(&session.name, false);
                ask(Request::Resume {
                    name: Some(session.name.clone()),
                })
            }
            None if name.is_some() || running.is_empty() => ask(Request::Start(StartRequest {
                name,
                pre_trigger_ms: args.pre_trigger.map(recd_storage::window::millis),
                topics: args.add_topics.clone(),
                exclude: args.remove_topics.clone(),
                ..StartRequest::default()
            })),
            // Several running, none named: the socket's error says so.
            None => ask(Request::Resume { name }),
        },
        RemoteCommand::Pause | RemoteCommand::Suspend => {
            let session = target(running, name.as_deref()).ok_or_else(|| no_target(&name))?;
            let suspend = command == RemoteCommand::Suspend;
            suspended.set(&session.name, suspend);
            if session.buffer.is_some() && !suspend {
                // Keeping its buffer until an event is what a pause is to the contract.
                return Ok(Response::Done);
            }
            ask(Request::Pause {
                name: Some(session.name.clone()),
            })
        }
        RemoteCommand::Event => {
            let session = target(running, name.as_deref()).ok_or_else(|| no_target(&name))?;
            // A moment and an id shared by every recorder: a fleet's trigger.
            let origin = match (args.trigger_ns, &args.id) {
                (Some(_), Some(_)) => recd_control::origin::FLEET,
                _ => recd_control::origin::REMOTE,
            };
            ask(Request::Trigger(TriggerRequest {
                origin: Some(origin.to_string()),
                name: Some(session.name.clone()),
                before_ms: args.before.map(recd_storage::window::millis),
                after_ms: args.after.map_or(0, recd_storage::window::millis),
                note: args.note.clone().unwrap_or_default(),
                at_ns: args.trigger_ns,
                id: args.id.clone(),
                rule: None,
            }))
        }
        RemoteCommand::Stop => {
            if let Some(session) = target(running, name.as_deref()) {
                suspended.set(&session.name, false);
            }
            ask(Request::Stop { name, all: false })
        }
        RemoteCommand::Close => ask(Request::Stop {
            name: None,
            all: true,
        }),
    }
}

/// The running session `name` names, or the only one when it names none.
fn target<'a>(running: &'a [SessionStatus], name: Option<&str>) -> Option<&'a SessionStatus> {
    match name {
        Some(name) => running.iter().find(|status| status.name == name),
        None if running.len() == 1 => running.first(),
        None => None,
    }
}

fn no_target(name: &Option<String>) -> String {
    match name {
        Some(name) => format!("no session {name:?} is recording"),
        None => "no single session is recording: name one in args.session".to_string(),
    }
}

/// Puts what a response tells into the reply.
fn describe(response: &Response, reply: &mut Reply) {
    match response {
        Response::Started(started) => reply.session = Some(started.name.clone()),
        Response::Paused(paused) => reply.session = Some(paused.name.clone()),
        Response::Marked(marked) => {
            reply.session = Some(marked.name.clone());
            reply.files = marked
                .files
                .iter()
                .map(|f| f.display().to_string())
                .collect();
        }
        Response::Triggered(triggered) => {
            reply.session = Some(triggered.name.clone());
            reply.trigger_ns = Some(triggered.time_ns);
            reply.repeated = triggered.repeated;
            reply.incident = triggered.incident.as_ref().map(|i| i.id.clone());
            reply.files = (triggered.files.iter())
                .map(|f| f.path.display().to_string())
                .collect();
        }
        Response::Stopped { sessions } => {
            reply.session = sessions.first().map(|s| s.name.clone());
            reply.files = (sessions.iter())
                .flat_map(|s| &s.files)
                .map(|f| f.path.display().to_string())
                .collect();
        }
        _ => {}
    }
}
