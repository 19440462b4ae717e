//! The writer's watch over its topics' health: each sample's receive time goes to the
//! topic's state machine as the writer takes it, and every [`CHECK_INTERVAL`] the states
//! are checked; changes become [`HealthEvent`]s (for the file's `recd/health` channel
//! and the observer) and the status's copy of each topic's health is renewed.
//!
//! The writer, not the receive thread, keeps the watch: it sees every sample in receive
//! order at no cost to the receive path. "Now" is the wall clock only while the writer is
//! caught up; while it is behind, the newest receive time it has taken stands for now, so
//! that a writer behind its handoff never mistakes the samples still waiting there for a
//! silence.

use std::sync::Arc;
use std::time::{Duration, Instant};

use recd_health::{Change, Expectations, HealthEvent, RequiredWatch, Rule, TopicWatch};
use recd_ros2::names::{self, Interface};

use crate::handoff::now_ns;
use crate::registry::TopicRegistry;
use crate::topic::Topic;

/// How often the states are checked: a stall is seen within its `max_gap` and this.
pub(crate) const CHECK_INTERVAL: Duration = Duration::from_millis(20);

struct Watched {
    topic: Arc<Topic>,
    watch: TopicWatch,
    /// The watch's revision the status copy was taken at ...
    shown: Option<u32>,
    /// ... and the longest gap it shows.
    shown_longest: u64,
}

/// One writer's health watch.
pub(crate) struct HealthMonitor {
    expectations: Arc<Expectations>,
    watched: Vec<Option<Watched>>,
    /// The required rules: kept by one writer of the recording only, over every topic.
    required: Vec<RequiredWatch>,
    registry: Arc<TopicRegistry>,
    newest_ns: u64,
    next_check: Instant,
    /// A change is waiting to be handed out.
    noticed: bool,
    /// False for the benchmark's reference run: nothing is watched.
    enabled: bool,
    events: Vec<HealthEvent>,
}

impl HealthMonitor {
    /// The watch of a recording started at `started_ns` under `expectations`; with
    /// `keeps_required` it also tells whether each required rule's topics came.
    pub fn new(
        expectations: Arc<Expectations>,
        registry: Arc<TopicRegistry>,
        started_ns: u64,
        keeps_required: bool,
        enabled: bool,
    ) -> Self {
        let required: Vec<RequiredWatch> = if keeps_required {
            expectations
                .required()
                .map(|rule| RequiredWatch::new(&rule.topic, rule.max_gap, started_ns))
                .collect()
        } else {
            Vec::new()
        };
        if !required.is_empty() {
            *registry.required.lock().expect("required lock") =
                required.iter().map(RequiredWatch::status).collect();
        }
        Self {
            expectations,
            watched: Vec::new(),
            required,
            registry,
            newest_ns: 0,
            next_check: Instant::now(),
            noticed: false,
            enabled,
            events: Vec::with_capacity(64),
        }
    }

    /// Starts watching `topic` under the first rule that matches it.
    pub fn announce(&mut self, topic: &Arc<Topic>) {
        let index = topic.index as usize;
        if self.watched.len() <= index {
            self.watched.resize_with(index + 1, || None);
        }
        let rule = (self.expectations.rule_for(&topic.name, &topic.service))
            .or_else(|| calls_only(topic).then(Rule::off));
        let watch = TopicWatch::new(rule.as_ref());
        *topic.health.lock().expect("health lock") = watch.health().clone();
        self.watched[index] = Some(Watched {
            topic: topic.clone(),
            watch,
            shown: None,
            shown_longest: 0,
        });
    }

    /// Stops watching `topic`: it is no longer recorded, so its silence says nothing.
    pub fn forget(&mut self, topic: u32) {
        if let Some(watched) = self.watched.get_mut(topic as usize) {
            *watched = None;
        }
    }

    /// A sample of `topic` received at `t_ns`.
    #[inline]
    pub fn saw(&mut self, topic: u32, t_ns: u64) {
        if !self.enabled {
            return;
        }
        if let Some(Some(watched)) = self.watched.get_mut(topic as usize) {
            let before = watched.watch.health().state;
            watched.watch.saw(t_ns);
            self.noticed |= watched.watch.health().state != before;
        }
        self.newest_ns = self.newest_ns.max(t_ns);
    }

    /// The longest silence expected of `topic` now, in ns: a longer one in a file is a gap.
    pub fn max_gap_ns(&self, topic: u32) -> Option<u64> {
        self.watched
            .get(topic as usize)
            .and_then(Option::as_ref)
            .and_then(|w| w.watch.max_gap_ns())
    }

    /// Required rules with no sample of any topic they name, as of the last check.
    pub fn missing(&self) -> Vec<String> {
        self.required
            .iter()
            .filter(|r| r.is_missing())
            .map(|r| r.pattern.clone())
            .collect()
    }

    /// Whether a check is due: a change was noticed, or [`CHECK_INTERVAL`] passed.
    pub fn due(&self) -> bool {
        self.enabled && (self.noticed || Instant::now() >= self.next_check)
    }

    /// Checks every topic, with the wall clock for now when `caught_up` (the writer has
    /// taken everything received so far), else the newest receive time taken; the
    /// changes are then [`Self::events`].
    pub fn check(&mut self, caught_up: bool) {
        self.events.clear();
        self.noticed = false;
        self.next_check = Instant::now() + CHECK_INTERVAL;
        let now = if caught_up {
            now_ns().max(self.newest_ns)
        } else {
            self.newest_ns
        };
        for watched in self.watched.iter_mut().flatten() {
            if let Some(last) = watched.watch.last_sample_ns() {
                watched.topic.counters.set_last_sample(last);
            }
            if let Some(change) = watched.watch.check(now) {
                self.events
                    .push(event(&watched.topic.name, &watched.watch, change));
            }
            // The status copy is renewed only where it changed: no lock otherwise.
            let longest = watched.watch.health().longest_gap_ns;
            if watched.shown != Some(watched.watch.revision()) {
                watched.shown = Some(watched.watch.revision());
                watched.shown_longest = longest;
                *watched.topic.health.lock().expect("health lock") = watched.watch.health().clone();
            } else if watched.shown_longest != longest {
                watched.shown_longest = longest;
                watched
                    .topic
                    .health
                    .lock()
                    .expect("health lock")
                    .longest_gap_ns = longest;
            }
        }
        self.check_required(now);
    }

    /// The changes the last check found.
    pub fn events(&self) -> &[HealthEvent] {
        &self.events
    }

    fn check_required(&mut self, now: u64) {
        if self.required.iter().all(RequiredWatch::is_met) {
            return;
        }
        let mut changed = false;
        for required in &mut self.required {
            if required.is_met() {
                continue;
            }
            let came = self
                .registry
                .topics
                .lock()
                .expect("topics lock")
                .iter()
                .any(|topic| {
                    topic.counters.received() > 0
                        && self.expectations.pattern_matches(
                            &required.pattern,
                            &topic.name,
                            &topic.service,
                        )
                });
            if let Some(change) = required.check(now, came) {
                changed = true;
                let rule = self
                    .expectations
                    .required()
                    .find(|r| r.topic == required.pattern);
                self.events.push(HealthEvent {
                    topic: required.pattern.clone(),
                    from: change.from,
                    to: change.to,
                    since_ns: change.since_ns,
                    gap_ns: None,
                    min_rate: rule.and_then(|r| r.min_rate),
                    max_gap_ns: (rule.and_then(|r| r.max_gap)).map(recd_storage::window::nanos),
                    required: true,
                });
            }
        }
        if changed {
            *self.registry.required.lock().expect("required lock") =
                self.required.iter().map(RequiredWatch::status).collect();
        }
    }
}

fn event(topic: &str, watch: &TopicWatch, change: Change) -> HealthEvent {
    let expected = &watch.health().expected;
    HealthEvent {
        topic: topic.to_string(),
        from: change.from,
        to: change.to,
        since_ns: change.since_ns,
        gap_ns: change.gap_ns,
        min_rate: expected.min_rate,
        max_gap_ns: expected.max_gap_ns,
        required: expected.required,
    }
}

/// Whether a topic carries a ROS 2 service's or action's traffic: it has samples when
/// something is called, so a rate learnt from its first samples would call every pause
/// between calls a stall. Such topics are checked only by a rule that names them.
fn calls_only(topic: &Topic) -> bool {
    topic.channel.message_encoding == "cdr"
        && names::interface_of(&topic.name, &topic.channel.schema_name) != Interface::Topic
}
