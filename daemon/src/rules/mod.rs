//! Rules: incidents that fire by themselves, on a message's content (`[[rule]] topic` and
//! `when`) or on a topic's health (`health`).
//!
//! Samples reach the rules from the writer threads, never the receive threads: a session
//! taps the topics a rule names ([`SessionTap`]) and each sample of one is copied into a
//! bounded queue. The thread `recd-rules` ([`watch`]) decodes and evaluates them; when the
//! queue is full the sample is skipped and counted for each of its rules, so a rule that
//! falls behind never delays the recording. A firing triggers the sessions the rule names
//! through the same path `rec trigger` takes ([`firing`]).

mod firing;
pub mod listener;
mod tap;
mod watch;

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc::{Receiver, SyncSender, TrySendError};
use std::sync::{Arc, Mutex};

use recd_control::{ErrorReply, RuleState, RuleStatus, SessionTriggered, TriggerRequest};
use recd_engine::{TopicFilter, TopicSelection};
use recd_health::HealthEvent;
use recd_rules::{Rule, RuleKind};

use crate::background::Worker;
use crate::locks::lock;
pub use tap::SessionTap;
use tap::TappedTopic;

/// The most events waiting for the rules thread.
const QUEUE_EVENTS: usize = 4096;
/// The most bytes of samples waiting for it: past this, samples are skipped.
const QUEUE_BYTES: usize = 16 << 20;
/// The most bytes of one sample a rule sees: a rule reads the fields of a message, and a
/// camera frame's header is within them (an expression reading past it gets a decode
/// error saying the message was cut).
pub const SAMPLE_BYTES: usize = 64 << 10;

/// The session id the rules' own subscription ([`listener`]) feeds samples under.
pub const LISTENER: i64 = -1;

/// What the sessions give the rules: who is recording, and the trigger path.
pub trait Target: Send + Sync {
    /// The names of the running sessions.
    fn running(&self) -> Vec<String>;
    /// Takes `request` as `rec trigger` would.
    fn trigger(&self, request: &TriggerRequest) -> Result<SessionTriggered, ErrorReply>;
    /// Sends `request` (moment, window, id) to every recorder of the fleet, as `rec
    /// fleet trigger` does.
    fn tell_fleet(&self, request: &TriggerRequest) -> Result<(), String>;
}

/// The rules of recd.toml, their counts, and the queue to their thread.
pub struct Rules {
    slots: Vec<RuleSlot>,
    /// What each running session records (by its topic globs): the rules' own
    /// subscription stands in only for topics none of them records.
    recorded: Mutex<HashMap<i64, TopicFilter>>,
    /// Set when a session starts, stops or changes its topics: the rules' own
    /// subscription follows (on the rules' thread, as changing it waits).
    selection_changed: AtomicBool,
    /// The rules' own subscription, and the topics it selects now.
    listener: Mutex<Option<(recd_engine::Recording, Vec<String>)>>,
    /// What starting it takes; `None` until recd lets the rules subscribe.
    listener_setup: Mutex<Option<listener::Setup>>,
    queue: SyncSender<Event>,
    receiver: Mutex<Option<Receiver<Event>>>,
    queued_bytes: AtomicUsize,
}

/// One rule and what it did.
pub struct RuleSlot {
    /// The rule.
    pub rule: Rule,
    evaluated: AtomicU64,
    skipped: AtomicU64,
    errors: AtomicU64,
    fired: AtomicU64,
    last_fired_ns: AtomicU64,
    /// Why it cannot run, or its last evaluation's error; and whether it is refused.
    problem: Mutex<(Option<String>, RuleState)>,
}

/// What the rules thread is given.
enum Event {
    /// A sample of a tapped topic of a session.
    Sample {
        topic: Arc<TappedTopic>,
        log_time_ns: u64,
        bytes: Vec<u8>,
    },
    /// A topic's health changed in a session.
    Health { session: String, event: HealthEvent },
}

impl Rules {
    /// The rules `rules` (checked by [`recd_rules::check_rules`]).
    pub fn new(rules: Vec<Rule>) -> Arc<Self> {
        let (queue, receiver) = std::sync::mpsc::sync_channel(QUEUE_EVENTS);
        Arc::new(Self {
            slots: rules.into_iter().map(RuleSlot::new).collect(),
            recorded: Mutex::default(),
            selection_changed: AtomicBool::new(false),
            listener: Mutex::default(),
            listener_setup: Mutex::default(),
            queue,
            receiver: Mutex::new(Some(receiver)),
            queued_bytes: AtomicUsize::new(0),
        })
    }

    /// Whether there is any rule.
    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    /// The rules as `rec status` shows them.
    pub fn status(&self) -> Vec<RuleStatus> {
        self.slots.iter().map(RuleSlot::status).collect()
    }

    /// Starts the thread `recd-rules`, which triggers through `target`.
    pub fn start(self: &Arc<Self>, target: Arc<dyn Target>) -> Option<Worker> {
        let receiver = lock(&self.receiver).take()?;
        if self.is_empty() {
            return None;
        }
        let rules = self.clone();
        Some(Worker::start("recd-rules", "the rules", move |stop| {
            watch::run(&rules, &receiver, target.as_ref(), &stop)
        }))
    }

    /// The taps of the session `name`.
    pub fn tap(self: &Arc<Self>, session: i64, name: &str) -> SessionTap {
        SessionTap::new(self.clone(), session, name)
    }

    /// Notes that the session `session` records the topics `selection` selects (from its
    /// start, or since `rec topics-set`).
    pub fn session_records(&self, session: i64, selection: &TopicSelection) {
        if !self.watches_content() {
            // Only the rules' own subscription asks what sessions record.
            return;
        }
        let mut recorded = lock(&self.recorded);
        match TopicFilter::new(selection) {
            Ok(filter) => recorded.insert(session, filter),
            Err(_) => recorded.remove(&session),
        };
        self.selection_changed.store(true, Ordering::Relaxed);
    }

    /// Notes that the session `session` stopped.
    pub fn session_ended(&self, session: i64) {
        lock(&self.recorded).remove(&session);
        self.selection_changed.store(true, Ordering::Relaxed);
    }

    /// The content rules' topics no running session records: what the rules' own
    /// subscription selects.
    fn unrecorded_topics(&self) -> Vec<String> {
        (self.content_topics().into_iter())
            .filter(|topic| !self.recorded_by_a_session(topic))
            .collect()
    }

    /// Whether some running session records `topic` (its samples come from it).
    fn recorded_by_a_session(&self, topic: &str) -> bool {
        let recorded = lock(&self.recorded);
        recorded.values().any(|filter| filter.matches(topic))
    }

    /// Whether a rule watches a topic's content.
    pub(super) fn watches_content(&self) -> bool {
        (self.slots.iter()).any(|slot| matches!(slot.rule.kind, RuleKind::Content { .. }))
    }

    /// The topics content rules watch.
    fn content_topics(&self) -> Vec<String> {
        let mut topics: Vec<String> = (self.slots.iter())
            .filter_map(|slot| match &slot.rule.kind {
                RuleKind::Content { topic, .. } => Some(topic.clone()),
                RuleKind::Health { .. } => None,
            })
            .collect();
        topics.sort();
        topics.dedup();
        topics
    }

    /// The rules watching `topic`'s content, by index.
    fn watching(&self, topic: &str) -> Vec<usize> {
        (0..self.slots.len())
            .filter(|&i| {
                matches!(&self.slots[i].rule.kind, RuleKind::Content { topic: t, .. } if t == topic)
            })
            .collect()
    }

    /// Queues `event` of `bytes` bytes for the thread; false (and nothing queued) when
    /// the queue is full.
    fn offer(&self, event: Event, bytes: usize) -> bool {
        if self.queued_bytes.load(Ordering::Relaxed) + bytes > QUEUE_BYTES {
            return false;
        }
        self.queued_bytes.fetch_add(bytes, Ordering::Relaxed);
        match self.queue.try_send(event) {
            Ok(()) => true,
            Err(TrySendError::Full(_) | TrySendError::Disconnected(_)) => {
                self.queued_bytes.fetch_sub(bytes, Ordering::Relaxed);
                false
            }
        }
    }

    /// The thread took an event of `bytes` bytes off the queue.
    fn taken(&self, bytes: usize) {
        self.queued_bytes.fetch_sub(bytes, Ordering::Relaxed);
    }

    fn slot(&self, index: usize) -> &RuleSlot {
        &self.slots[index]
    }
}

impl RuleSlot {
    fn new(rule: Rule) -> Self {
        Self {
            rule,
            evaluated: AtomicU64::new(0),
            skipped: AtomicU64::new(0),
            errors: AtomicU64::new(0),
            fired: AtomicU64::new(0),
            last_fired_ns: AtomicU64::new(0),
            problem: Mutex::new((None, RuleState::Waiting)),
        }
    }

    fn status(&self) -> RuleStatus {
        let (problem, state) = lock(&self.problem).clone();
        let last_fired_ns = self.last_fired_ns.load(Ordering::Relaxed);
        RuleStatus {
            name: self.rule.name.clone(),
            watches: match &self.rule.kind {
                RuleKind::Content { topic, .. } => format!("topic {topic}"),
                RuleKind::Health { pattern, .. } => format!("health {pattern}"),
            },
            state: match (&self.rule.kind, state) {
                // A health rule watches from the start.
                (RuleKind::Health { .. }, RuleState::Waiting) => RuleState::Watching,
                (_, state) => state,
            },
            problem,
            evaluated: self.evaluated.load(Ordering::Relaxed),
            skipped: self.skipped.load(Ordering::Relaxed),
            errors: self.errors.load(Ordering::Relaxed),
            fired: self.fired.load(Ordering::Relaxed),
            last_fired_ns: (last_fired_ns > 0).then_some(last_fired_ns),
        }
    }

    /// Counts a sample skipped because the rules fell behind.
    fn skip(&self) {
        self.skipped.fetch_add(1, Ordering::Relaxed);
    }

    fn set_state(&self, state: RuleState, problem: Option<String>) {
        *lock(&self.problem) = (problem, state);
    }

    fn state(&self) -> RuleState {
        lock(&self.problem).1
    }
}

#[cfg(test)]
mod tests;
