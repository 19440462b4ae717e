//! One content rule running over its topic's samples: decode, evaluate with the previous
//! message, step the trigger.

use std::collections::BTreeMap;
use std::time::Duration;

use crate::condition::{Condition, Decoded};
use crate::error::EvalError;
use crate::trigger::Trigger;

/// A rule firing: the sample's log time and the values the condition read.
#[derive(Debug, Clone, PartialEq)]
pub struct Firing {
    /// The log time of the sample that fired, ns since the Unix epoch.
    pub log_time_ns: u64,
    /// The values of the paths read (`msg.accel.x`, `prev.mode`, …).
    pub values: BTreeMap<String, serde_json::Value>,
}

/// A [`Condition`], a [`Trigger`] and the previous decoded message of the topic.
#[derive(Debug)]
pub struct RuleRunner {
    condition: Condition,
    trigger: Trigger,
    prev: Option<Decoded>,
}

impl RuleRunner {
    /// A runner that has seen no sample yet.
    pub fn new(condition: Condition, hold: Duration, holdoff: Duration) -> RuleRunner {
        RuleRunner {
            condition,
            trigger: Trigger::new(hold, holdoff),
            prev: None,
        }
    }

    /// The condition it runs.
    pub fn condition(&self) -> &Condition {
        &self.condition
    }

    /// Offers one sample. On the first sample an expression reading `prev` does not hold
    /// (no error). A decode or evaluation error leaves everything as it was (the
    /// undecodable message does not become `prev`) and is returned.
    pub fn offer(&mut self, log_time_ns: u64, bytes: &[u8]) -> Result<Option<Firing>, EvalError> {
        let msg = self.condition.decode(bytes)?;
        let holds = if self.condition.expression().reads_prev() && self.prev.is_none() {
            false
        } else {
            self.condition.test(&msg, self.prev.as_ref())?
        };
        let firing = self.trigger.step(log_time_ns, holds).then(|| Firing {
            log_time_ns,
            values: self.condition.values(&msg, self.prev.as_ref()),
        });
        self.prev = Some(msg);
        Ok(firing)
    }
}
