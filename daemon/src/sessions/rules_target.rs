//! What the rules need of the sessions: who is recording, and the trigger path.

use std::sync::Arc;
use std::time::Duration;

use recd_control::{ErrorReply, SessionTriggered, TriggerRequest};
use recd_remote::{CommandArgs, DdsRecorderCommand, RemoteCommand};
use tokio::sync::mpsc::UnboundedSender;

use super::Sessions;
use crate::background::Worker;
use crate::config::DaemonConfig;
use crate::locks::lock;
use crate::rules::campaigns::Pushed;
use crate::rules::{Rules, Target};

/// Remote control's command writer, once it has one.
pub(super) type FleetOutbox = std::sync::Mutex<Option<UnboundedSender<DdsRecorderCommand>>>;

/// The rules of `config` (checked when it was read) and, with `[fleet]`, the campaigns
/// kept in the state directory.
pub(super) fn rules_of(config: &DaemonConfig) -> Arc<Rules> {
    let campaigns = config.fleet.is_some();
    let rules = Rules::new(
        config
            .rules()
            .expect("the rules were checked when the configuration was read"),
        campaigns,
        campaigns.then(|| config.state_dir.join("campaigns")),
    );
    if campaigns {
        let now_ns = crate::clock::now_ns().max(0) as u64;
        crate::rules::campaigns::restore(&rules, |c| config.check_rules(c), now_ns);
    }
    rules
}

impl Sessions {
    /// Takes a campaign the fleet pushed: its rules run, checked as recd.toml's are
    /// ([`crate::rules::campaigns::push`]).
    pub fn push_campaign(&self, campaign: recd_fleet::Campaign) -> Result<Pushed, String> {
        let now_ns = crate::clock::now_ns().max(0) as u64;
        crate::rules::campaigns::push(
            &self.rules,
            campaign,
            |c| self.config.check_rules(c),
            now_ns,
        )
    }

    /// Where `fleet = true` rules' triggers go to every recorder of the DDS domain (set
    /// by remote control once its command writer exists).
    pub fn set_fleet_outbox(&self, outbox: UnboundedSender<DdsRecorderCommand>) {
        *lock(&self.fleet_outbox) = Some(outbox);
    }

    /// Starts the rules' thread and their own subscription to their topics, when there
    /// are rules.
    pub fn start_rules(self: &Arc<Self>) -> Option<Worker> {
        crate::rules::listener::prepare(&self.config, &self.rules);
        self.rules.start(self.clone())
    }

    /// Stops the rules' thread `worker` and their own subscription.
    pub fn stop_rules(&self, worker: Option<Worker>) {
        if let Some(worker) = worker {
            worker.stop();
        }
        crate::rules::listener::stop(&self.rules);
    }

    /// The rules as `rec status` shows them.
    pub fn rule_status(&self) -> Vec<recd_control::RuleStatus> {
        self.rules.status()
    }
}

impl Target for Sessions {
    fn running(&self) -> Vec<String> {
        self.registry.names()
    }

    fn trigger(&self, request: &TriggerRequest) -> Result<SessionTriggered, ErrorReply> {
        self.incidents.trigger(request)
    }

    fn tell_fleet(&self, request: &TriggerRequest) -> Result<(), String> {
        let outbox = lock(&self.fleet_outbox);
        let Some(outbox) = outbox.as_ref() else {
            return Err("remote control has no command writer (is [remote_control] enabled and its participant up?)".into());
        };
        let args = CommandArgs {
            trigger_ns: request.at_ns,
            before: request.before_ms.map(Duration::from_millis),
            after: Some(Duration::from_millis(request.after_ms)),
            note: Some(request.note.clone()),
            id: request.id.clone(),
            ..CommandArgs::default()
        };
        outbox
            .send(DdsRecorderCommand {
                command: RemoteCommand::Event.name().to_string(),
                args: args.to_json(),
            })
            .map_err(|_| "remote control has stopped".to_string())
    }
}
