//! What the rules need of the sessions: who is recording, and the trigger path.

use std::sync::Arc;

use recd_control::{ErrorReply, SessionTriggered, TriggerRequest};

use super::Sessions;
use crate::background::Worker;
use crate::config::DaemonConfig;
use crate::rules::{Rules, Target};

/// The rules of `config` (checked when it was read).
pub(super) fn rules_of(config: &DaemonConfig) -> Arc<Rules> {
    Rules::new(
        config
            .rules()
            .expect("the rules were checked when the configuration was read"),
    )
}

impl Sessions {
    /// Starts the rules' thread, when there are rules.
    pub fn start_rules(self: &Arc<Self>) -> Option<Worker> {
        self.rules.start(self.clone())
    }

    /// The rules as `rec status` shows them.
    pub fn rule_status(&self) -> Vec<recd_control::RuleStatus> {
        self.rules.status()
    }
}

impl Target for Sessions {
    fn running(&self) -> Vec<String> {
        self.running
            .lock()
            .expect("sessions lock")
            .keys()
            .cloned()
            .collect()
    }

    fn trigger(&self, request: &TriggerRequest) -> Result<SessionTriggered, ErrorReply> {
        Sessions::trigger(self, request)
    }
}
