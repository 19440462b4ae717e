//! Rules: incidents that fire by themselves, on a message's content (`[[rule]] topic` and
//! `when`) or on a topic's health (`health`).
//!
//! Samples reach the rules from the writer threads, never the receive threads: a session
//! taps the topics a rule names ([`SessionTap`]) and each sample of one is copied into a
//! bounded queue. The thread `recd-rules` ([`watch`]) decodes and evaluates them; when the
//! queue is full the sample is skipped and counted for each of its rules, so a rule that
//! falls behind never delays the recording. A firing triggers the sessions the rule names
//! through the same path `rec trigger` takes ([`firing`]).
//!
//! The rules that run are recd.toml's and, with `[fleet]`, the campaigns' the fleet
//! pushed ([`campaigns`]): the set changes while sessions record, so sessions then tap
//! every topic and look up its rules again when the set changed.

pub mod campaigns;
mod firing;
pub mod listener;
mod tap;
mod watch;

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::mpsc::{Receiver, SyncSender, TrySendError};
use std::sync::{Arc, Mutex, RwLock};

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

/// Where a rule came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// recd.toml's `[[rule]]`.
    Config,
    /// A campaign the fleet pushed.
    Campaign {
        /// The campaign's name.
        name: String,
        /// Its version.
        version: u64,
    },
}

impl std::fmt::Display for Origin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Origin::Config => f.write_str("recd.toml"),
            Origin::Campaign { name, version } => write!(f, "campaign {name}@{version}"),
        }
    }
}

/// The rules that run, their counts, and the queue to their thread.
pub struct Rules {
    /// The rules running now; replaced whole when a campaign comes or goes.
    set: RwLock<Vec<Arc<RuleSlot>>>,
    /// Counts the changes of `set`: a session's taps look their topics' rules up again
    /// when it moved.
    generation: AtomicU64,
    /// Whether `set` may change while recd runs (campaigns, with `[fleet]`).
    may_change: bool,
    /// The campaigns kept in the state directory.
    campaigns: Mutex<campaigns::Shelf>,
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
    /// Where it came from.
    pub origin: Origin,
    /// Tells it from every other slot, also from one of the same name it replaced.
    id: u64,
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
    /// The rules `rules` of recd.toml (checked by [`recd_rules::check_rules`]);
    /// `may_change` when campaigns may add rules while recd runs, kept in `campaigns`
    /// (a directory), if any.
    pub fn new(
        rules: Vec<Rule>,
        may_change: bool,
        campaigns: Option<std::path::PathBuf>,
    ) -> Arc<Self> {
        let (queue, receiver) = std::sync::mpsc::sync_channel(QUEUE_EVENTS);
        let slots = (rules.into_iter())
            .map(|rule| Arc::new(RuleSlot::new(rule, Origin::Config)))
            .collect();
        Arc::new(Self {
            set: RwLock::new(slots),
            generation: AtomicU64::new(0),
            may_change,
            campaigns: Mutex::new(campaigns::Shelf::new(campaigns)),
            recorded: Mutex::default(),
            selection_changed: AtomicBool::new(false),
            listener: Mutex::default(),
            listener_setup: Mutex::default(),
            queue,
            receiver: Mutex::new(Some(receiver)),
            queued_bytes: AtomicUsize::new(0),
        })
    }

    /// The rules running now.
    fn slots(&self) -> Vec<Arc<RuleSlot>> {
        self.set
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    /// Replaces the rules `replaced` says of by `added`: the sessions' taps and the
    /// rules' own subscription follow.
    fn replace(&self, replaced: impl Fn(&Origin) -> bool, added: Vec<(Rule, Origin)>) {
        let mut set = self
            .set
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        set.retain(|slot| !replaced(&slot.origin));
        set.extend(
            added
                .into_iter()
                .map(|(rule, origin)| Arc::new(RuleSlot::new(rule, origin))),
        );
        drop(set);
        self.generation.fetch_add(1, Ordering::Relaxed);
        self.selection_changed.store(true, Ordering::Relaxed);
    }

    /// Counts the changes of the rule set.
    fn generation(&self) -> u64 {
        self.generation.load(Ordering::Relaxed)
    }

    /// Whether there is any rule.
    pub fn is_empty(&self) -> bool {
        self.set
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .is_empty()
    }

    /// The rules as `rec status` shows them.
    pub fn status(&self) -> Vec<RuleStatus> {
        self.slots().iter().map(|slot| slot.status()).collect()
    }

    /// Starts the thread `recd-rules`, which triggers through `target`.
    pub fn start(self: &Arc<Self>, target: Arc<dyn Target>) -> Option<Worker> {
        let receiver = lock(&self.receiver).take()?;
        if self.is_empty() && !self.may_change {
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
        if !self.watches_content() && !self.may_change {
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
        (self.slots().iter()).any(|slot| matches!(slot.rule.kind, RuleKind::Content { .. }))
    }

    /// The topics content rules watch.
    fn content_topics(&self) -> Vec<String> {
        let mut topics: Vec<String> = (self.slots().iter())
            .filter_map(|slot| match &slot.rule.kind {
                RuleKind::Content { topic, .. } => Some(topic.clone()),
                RuleKind::Health { .. } => None,
            })
            .collect();
        topics.sort();
        topics.dedup();
        topics
    }

    /// The rules watching `topic`'s content.
    fn watching(&self, topic: &str) -> Vec<Arc<RuleSlot>> {
        (self.slots().into_iter())
            .filter(
                |slot| matches!(&slot.rule.kind, RuleKind::Content { topic: t, .. } if t == topic),
            )
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
}

/// Gives each slot its id.
static NEXT_SLOT: AtomicU64 = AtomicU64::new(0);

impl RuleSlot {
    fn new(rule: Rule, origin: Origin) -> Self {
        Self {
            rule,
            origin,
            id: NEXT_SLOT.fetch_add(1, Ordering::Relaxed),
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
            origin: self.origin.to_string(),
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
