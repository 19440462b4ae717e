//! A rule fires: an incident of each session it names, through the path `rec trigger`
//! takes, with the rule's name as origin and what fired it; one INFO line per firing.

use std::collections::BTreeMap;
use std::sync::atomic::Ordering;

use recd_control::{origin, RuleFiring, TriggerRequest};
use recd_health::HealthEvent;

use super::{RuleSlot, Target};
use crate::incidents::naming;

/// The values a health rule's firing shows: the state the topic went to, the one it
/// left, and the session it changed in.
pub(super) fn health_firing(
    session: &str,
    event: &HealthEvent,
) -> BTreeMap<String, serde_json::Value> {
    BTreeMap::from([
        ("state".to_string(), event.to.name().into()),
        ("from".to_string(), event.from.name().into()),
        ("session".to_string(), session.into()),
    ])
}

/// Fires `slot`'s rule at the sample of `topic` logged at `time_ns`, which read `values`:
/// an incident of every running session the rule names, all with one id.
pub(super) fn fire(
    slot: &RuleSlot,
    topic: &str,
    time_ns: u64,
    values: BTreeMap<String, serde_json::Value>,
    target: &dyn Target,
) {
    let rule = &slot.rule;
    slot.fired.fetch_add(1, Ordering::Relaxed);
    slot.last_fired_ns.store(time_ns, Ordering::Relaxed);
    let id = format!("{}_{}", naming::incident_id(time_ns), rule.name);
    let firing = RuleFiring {
        rule: rule.name.clone(),
        topic: topic.to_string(),
        sample_ns: time_ns,
        values,
    };
    let shown = serde_json::Value::from_iter(firing.values.clone()).to_string();
    let sessions: Vec<String> = target
        .running()
        .into_iter()
        .filter(|name| rule.triggers_session(name))
        .collect();
    let mut taken = Vec::new();
    for session in &sessions {
        let request = TriggerRequest {
            name: Some(session.clone()),
            before_ms: Some(recd_storage::window::millis(rule.before)),
            after_ms: recd_storage::window::millis(rule.after),
            note: String::new(),
            at_ns: Some(time_ns),
            id: Some(id.clone()),
            origin: Some(origin::RULE.to_string()),
            rule: Some(firing.clone()),
        };
        match target.trigger(&request) {
            Ok(_) => taken.push(session.as_str()),
            Err(refused) => {
                tracing::warn!(rule = %rule.name, session, id, "the rule fired but its incident was refused: {}", refused.message)
            }
        }
    }
    if rule.fleet {
        let request = TriggerRequest {
            before_ms: Some(recd_storage::window::millis(rule.before)),
            after_ms: recd_storage::window::millis(rule.after),
            note: format!("rule {} on {}", rule.name, crate::host::hostname()),
            at_ns: Some(time_ns),
            id: Some(id.clone()),
            ..TriggerRequest::default()
        };
        if let Err(error) = target.tell_fleet(&request) {
            tracing::warn!(rule = %rule.name, id, "the rule fired but the fleet was not told: {error}");
        }
    }
    tracing::info!(
        rule = %rule.name,
        fleet = rule.fleet,
        topic,
        time = %crate::clock::rfc3339(time_ns),
        values = %shown,
        id,
        sessions = ?taken,
        "rule fired"
    );
}
