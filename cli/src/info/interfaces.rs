//! The ROS 2 services and actions a recording holds, apart from its topics, as `ros2 bag
//! info` lists them: a service's introspection events counted as requests and responses
//! (distinct calls), an action's feedback and status messages and its three services'
//! calls.

use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;
use std::ops::ControlFlow;

use recd_ros2::names::{self, ActionPart, Interface};
use recd_ros2::service_event::CallCount;
use recd_storage::{ChannelInfo, FileInfo};
use serde::Serialize;

/// Requests and responses of one service.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Calls {
    /// Distinct requests (a call seen by its client and its server counts once).
    pub requests: u64,
    /// Distinct responses.
    pub responses: u64,
}

impl Calls {
    fn add(&mut self, count: &CallCount) {
        self.requests += count.requests();
        self.responses += count.responses();
    }
}

/// A service whose introspection events were recorded.
#[derive(Debug, Clone, Serialize)]
pub struct ServiceSummary {
    /// Its ROS name (`/add_two_ints`).
    pub name: String,
    /// Its type (`example_interfaces/srv/AddTwoInts`).
    pub service_type: String,
    /// Events recorded.
    pub events: u64,
    /// The calls they show.
    #[serde(flatten)]
    pub calls: Calls,
    /// Events whose info could not be read (counted in neither).
    #[serde(skip_serializing_if = "is_zero")]
    pub unreadable: u64,
}

/// An action whose topics or services' events were recorded.
#[derive(Debug, Clone, Serialize)]
pub struct ActionSummary {
    /// Its ROS name (`/fibonacci`).
    pub name: String,
    /// Its type (`example_interfaces/action/Fibonacci`), once a channel names it.
    pub action_type: Option<String>,
    /// Feedback messages.
    pub feedback: u64,
    /// Status messages.
    pub status: u64,
    /// Goals sent.
    pub send_goal: Calls,
    /// Results asked for.
    pub get_result: Calls,
    /// Cancellations.
    pub cancel_goal: Calls,
    /// Service events whose info could not be read.
    #[serde(skip_serializing_if = "is_zero")]
    pub unreadable: u64,
}

/// The services and actions of some files.
#[derive(Debug, Default, Clone, Serialize)]
pub struct Interfaces {
    /// Services, by name.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub services: Vec<ServiceSummary>,
    /// Actions, by name.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub actions: Vec<ActionSummary>,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// What a channel is, by its topic and type.
pub fn interface_of(channel: &ChannelInfo) -> Interface {
    match &channel.schema_name {
        Some(schema) if channel.message_encoding == "cdr" => {
            names::interface_of(&channel.topic, schema)
        }
        _ => Interface::Topic,
    }
}

/// The services and actions of `files`: feedback and status from the summaries, calls
/// from a pass over each file that has service events, reading only their messages.
pub fn of(files: &[FileInfo]) -> Result<Interfaces, String> {
    let mut services: BTreeMap<String, ServiceSummary> = BTreeMap::new();
    let mut actions: BTreeMap<String, ActionSummary> = BTreeMap::new();
    for file in files {
        let mut events: HashMap<String, (Interface, CallCount)> = HashMap::new();
        for channel in &file.channels {
            let interface = interface_of(channel);
            let schema = channel.schema_name.clone().unwrap_or_default();
            match &interface {
                Interface::Topic => continue,
                Interface::Service { service } => {
                    services
                        .entry(service.clone())
                        .or_insert_with(|| ServiceSummary {
                            name: service.clone(),
                            service_type: names::service_type_of(&schema).unwrap_or(schema),
                            events: 0,
                            calls: Calls::default(),
                            unreadable: 0,
                        })
                        .events += channel.message_count;
                }
                Interface::Action { action, part } => {
                    let summary = actions
                        .entry(action.clone())
                        .or_insert_with(|| ActionSummary {
                            name: action.clone(),
                            action_type: None,
                            feedback: 0,
                            status: 0,
                            send_goal: Calls::default(),
                            get_result: Calls::default(),
                            cancel_goal: Calls::default(),
                            unreadable: 0,
                        });
                    if summary.action_type.is_none() {
                        summary.action_type = names::action_type_of(&schema);
                    }
                    match part {
                        ActionPart::Feedback => summary.feedback += channel.message_count,
                        ActionPart::Status => summary.status += channel.message_count,
                        _ => {}
                    }
                }
            }
            let counts_calls = !matches!(
                interface,
                Interface::Action {
                    part: ActionPart::Feedback | ActionPart::Status,
                    ..
                }
            );
            if counts_calls && channel.message_count > 0 {
                events.insert(channel.topic.clone(), (interface, CallCount::default()));
            }
        }
        if events.is_empty() {
            continue;
        }
        recd_storage::for_each_message_skipping(&file.path, |message| {
            if let Some((_, count)) = events.get_mut(&message.channel.topic) {
                count.add(message.data);
            }
            ControlFlow::Continue(())
        })
        .map_err(|e| e.to_string())?;
        for (interface, count) in events.into_values() {
            match interface {
                Interface::Service { service } => {
                    if let Some(summary) = services.get_mut(&service) {
                        summary.calls.add(&count);
                        summary.unreadable += count.unreadable();
                    }
                }
                Interface::Action { action, part } => {
                    let Some(summary) = actions.get_mut(&action) else {
                        continue;
                    };
                    summary.unreadable += count.unreadable();
                    match part {
                        ActionPart::SendGoal => summary.send_goal.add(&count),
                        ActionPart::GetResult => summary.get_result.add(&count),
                        ActionPart::CancelGoal => summary.cancel_goal.add(&count),
                        ActionPart::Feedback | ActionPart::Status => {}
                    }
                }
                Interface::Topic => {}
            }
        }
    }
    Ok(Interfaces {
        services: services.into_values().collect(),
        actions: actions.into_values().collect(),
    })
}

impl Interfaces {
    /// The `services:` and `actions:` sections of `rec info`, nothing when there are none.
    pub fn render(&self) -> String {
        let mut out = String::new();
        if !self.services.is_empty() {
            let _ = writeln!(out, "services:    {}", self.services.len());
            let width = self
                .services
                .iter()
                .map(|s| s.name.len())
                .max()
                .unwrap_or(0);
            for s in &self.services {
                let _ = writeln!(
                    out,
                    "  {:<width$}  {:>5} requests {:>5} responses ({} events)  {}{}",
                    s.name,
                    s.calls.requests,
                    s.calls.responses,
                    s.events,
                    s.service_type,
                    unreadable_note(s.unreadable)
                );
            }
        }
        if !self.actions.is_empty() {
            let _ = writeln!(out, "actions:     {}", self.actions.len());
            let width = self.actions.iter().map(|a| a.name.len()).max().unwrap_or(0);
            for a in &self.actions {
                let _ = writeln!(
                    out,
                    "  {:<width$}  {}{}",
                    a.name,
                    a.action_type.as_deref().unwrap_or("type unknown"),
                    unreadable_note(a.unreadable)
                );
                let calls =
                    |c: &Calls| format!("{} requests {} responses", c.requests, c.responses);
                let _ = writeln!(
                    out,
                    "  {:<width$}    feedback {}  status {}  send_goal {}  get_result {}  cancel_goal {}",
                    "",
                    a.feedback,
                    a.status,
                    calls(&a.send_goal),
                    calls(&a.get_result),
                    calls(&a.cancel_goal)
                );
            }
        }
        out
    }
}

fn unreadable_note(unreadable: u64) -> String {
    if unreadable == 0 {
        String::new()
    } else {
        format!("  ({unreadable} events unreadable, not counted)")
    }
}
