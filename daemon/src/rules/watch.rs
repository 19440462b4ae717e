//! The thread `recd-rules`: decodes each queued sample as far as its rules read, evaluates
//! them, and fires them; health changes go to the health rules.
//!
//! A topic recorded by several sessions is evaluated on one session's samples only (the
//! first whose samples came; another takes over once it has been silent for
//! [`OWNER_SILENCE`]), so that each sample is seen once and a rule's `hold` and `prev`
//! follow one stream. The rules' own subscription ([`super::listener`]) feeds a topic
//! only while no running session's topic globs select it.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::Receiver;
use std::sync::Arc;
use std::time::{Duration, Instant};

use recd_control::RuleState;
use recd_health::HealthEvent;
use recd_rules::{ChannelView, RuleKind, RuleRunner};

use super::firing::{fire, health_firing};
use super::tap::TappedTopic;
use super::{Event, RuleSlot, Rules, Target, LISTENER};

/// How long the session whose samples a topic's rules follow may be silent before
/// another session's samples of it are taken instead.
const OWNER_SILENCE: Duration = Duration::from_secs(2);

/// A content rule as it runs: compiled against the schema of the topic it watches.
#[derive(Default)]
struct Running {
    runner: Option<RuleRunner>,
    /// The session whose samples it follows, and when its last one came.
    owner: Option<(i64, Instant)>,
}

/// How long the thread sleeps when nothing waits: it polls rather than being woken by
/// each sample, which would cost the writer a wake-up per sample.
const POLL: Duration = Duration::from_millis(10);

/// Runs the rules until `stop`.
pub(super) fn run(
    rules: &Arc<Rules>,
    queue: &Receiver<Event>,
    target: &dyn Target,
    stop: &AtomicBool,
) {
    // By slot id: a rule replaced by a campaign's next version starts afresh.
    let mut running: HashMap<u64, Running> = HashMap::new();
    let mut generation = rules.generation();
    while !stop.load(Ordering::Relaxed) {
        if rules.selection_changed.swap(false, Ordering::Relaxed) {
            super::listener::follow(rules);
        }
        if rules.generation() != generation {
            generation = rules.generation();
            let ids: Vec<u64> = rules.slots().iter().map(|slot| slot.id).collect();
            running.retain(|id, _| ids.contains(id));
        }
        super::campaigns::expire(rules, crate::clock::now_ns());
        let mut took = false;
        while let Ok(event) = queue.try_recv() {
            took = true;
            match event {
                Event::Sample {
                    topic,
                    log_time_ns,
                    bytes,
                } => {
                    rules.taken(bytes.len());
                    for slot in &topic.rules {
                        let running = running.entry(slot.id).or_default();
                        evaluate(rules, slot, running, &topic, log_time_ns, &bytes, target);
                    }
                }
                Event::Health { session, event } => health(rules, &session, &event, target),
            }
        }
        if !took {
            std::thread::sleep(POLL);
        }
    }
}

fn evaluate(
    rules: &Rules,
    slot: &RuleSlot,
    running: &mut Running,
    topic: &TappedTopic,
    log_time_ns: u64,
    bytes: &[u8],
    target: &dyn Target,
) {
    if topic.session == LISTENER && rules.recorded_by_a_session(&topic.name) {
        // A session records it: its samples, with its files' log times, are the ones.
        return;
    }
    let now = Instant::now();
    match running.owner {
        Some((session, _)) if session == topic.session => {}
        // A session's samples take over from the rules' own subscription at once: they
        // carry the log times its files record.
        Some((LISTENER, _)) if topic.session != LISTENER => running.runner = None,
        Some((_, last)) if now.duration_since(last) < OWNER_SILENCE => return,
        _ => {
            // A new stream: compiled again against its channel, with no `prev`.
            running.runner = None;
        }
    }
    running.owner = Some((topic.session, now));
    if running.runner.is_none() {
        if slot.state() == RuleState::Refused {
            return;
        }
        match compile(slot, topic) {
            Ok(runner) => {
                slot.set_state(RuleState::Watching, None);
                running.runner = Some(runner);
            }
            Err(problem) => {
                tracing::error!(rule = %slot.rule.name, topic = %topic.name, "rule refused: {problem}");
                slot.set_state(RuleState::Refused, Some(problem.to_string()));
                return;
            }
        }
    }
    let runner = running.runner.as_mut().expect("compiled above");
    slot.evaluated.fetch_add(1, Ordering::Relaxed);
    match runner.offer(log_time_ns, bytes) {
        Ok(Some(firing)) => fire(slot, &topic.name, firing.log_time_ns, firing.values, target),
        Ok(None) => {}
        Err(error) => {
            if slot.errors.fetch_add(1, Ordering::Relaxed) == 0 {
                tracing::warn!(rule = %slot.rule.name, topic = %topic.name, "rule cannot evaluate a sample: {error} (counted in rec status from now on)");
            }
            slot.set_state(RuleState::Watching, Some(error.to_string()));
        }
    }
}

/// `slot`'s rule compiled against `topic`'s channel, or why it cannot be.
fn compile(slot: &RuleSlot, topic: &TappedTopic) -> Result<RuleRunner, recd_rules::NoRunner> {
    let channel = &topic.channel;
    slot.rule.runner_for(&ChannelView {
        topic: &topic.name,
        message_encoding: &channel.message_encoding,
        schema_name: &channel.schema_name,
        schema_encoding: &channel.schema_encoding,
        schema_data: &channel.schema_data,
        metadata: &channel.metadata,
    })
}

/// Evaluates the health rules on a topic's health change in `session`.
fn health(rules: &Rules, session: &str, event: &HealthEvent, target: &dyn Target) {
    for slot in &rules.slots() {
        let RuleKind::Health { pattern, states } = &slot.rule.kind else {
            continue;
        };
        if !recd_rules::glob_match(pattern, &event.topic) {
            continue;
        }
        slot.evaluated.fetch_add(1, Ordering::Relaxed);
        // It fires when the topic's health leaves ok (or a required topic never came).
        if event.from.is_bad() || !states.contains(&event.to) {
            continue;
        }
        let last = slot.last_fired_ns.load(Ordering::Relaxed);
        let holdoff = recd_storage::window::nanos(slot.rule.holdoff);
        if last > 0 && event.since_ns.saturating_sub(last) < holdoff {
            continue;
        }
        fire(
            slot,
            &event.topic,
            event.since_ns,
            health_firing(session, event),
            target,
        );
    }
}
