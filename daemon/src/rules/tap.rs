//! A session's taps: the topics of its recording that rules watch, whose samples are
//! copied (at most [`SAMPLE_BYTES`] of each) into the rules' queue on the writer thread.
//! Where the rules may change while it records (campaigns), every topic is tapped and
//! looks its rules up again once the set changed; a topic no rule watches costs a lookup
//! per sample and no copy.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use recd_engine::ChannelSpec;
use recd_health::HealthEvent;

use super::{Event, RuleSlot, Rules, SAMPLE_BYTES};
use crate::locks::lock;

/// A topic of a session that rules watch.
pub(super) struct TappedTopic {
    /// The session's catalog id.
    pub session: i64,
    /// The topic's name.
    pub name: String,
    /// How its messages are described (the schema a rule decodes them with).
    pub channel: ChannelSpec,
    /// The rules watching it.
    pub rules: Vec<Arc<RuleSlot>>,
    /// The rule set's generation `rules` was looked up in.
    generation: u64,
}

/// The topics of one session's recording that rules watch.
pub struct SessionTap {
    rules: Arc<Rules>,
    session: i64,
    name: String,
    topics: Mutex<HashMap<u32, Arc<TappedTopic>>>,
}

impl SessionTap {
    pub(super) fn new(rules: Arc<Rules>, session: i64, name: &str) -> Self {
        Self {
            rules,
            session,
            name: name.to_string(),
            topics: Mutex::new(HashMap::new()),
        }
    }

    /// Whether rules watch, or may come to watch, the recording's topic `index`, called
    /// `name`; if so, its samples go to [`Self::sample`].
    pub fn taps(&self, index: u32, name: &str, channel: &ChannelSpec) -> bool {
        let generation = self.rules.generation();
        let rules = self.rules.watching(name);
        if rules.is_empty() && !self.rules.may_change {
            return false;
        }
        let topic = Arc::new(TappedTopic {
            session: self.session,
            name: name.to_string(),
            channel: channel.clone(),
            rules,
            generation,
        });
        lock(&self.topics).insert(index, topic);
        true
    }

    /// Queues a sample of a tapped topic, or counts it skipped by each of its rules when
    /// the queue is full.
    pub fn sample(&self, index: u32, log_time_ns: u64, parts: &[&[u8]]) {
        let Some(topic) = self.watched(index) else {
            return;
        };
        let len: usize = parts.iter().map(|part| part.len()).sum();
        let mut bytes = Vec::with_capacity(len.min(SAMPLE_BYTES));
        for part in parts {
            let room = SAMPLE_BYTES - bytes.len();
            bytes.extend_from_slice(&part[..part.len().min(room)]);
        }
        let size = bytes.len();
        let rules = topic.rules.clone();
        let event = Event::Sample {
            topic,
            log_time_ns,
            bytes,
        };
        if !self.rules.offer(event, size) {
            rules.iter().for_each(|slot| slot.skip());
        }
    }

    /// The tapped topic `index`, with its rules as the set stands now; `None` when no
    /// rule watches it.
    fn watched(&self, index: u32) -> Option<Arc<TappedTopic>> {
        let mut topics = lock(&self.topics);
        let topic = topics.get_mut(&index)?;
        let generation = self.rules.generation();
        if topic.generation != generation {
            *topic = Arc::new(TappedTopic {
                session: topic.session,
                name: topic.name.clone(),
                channel: topic.channel.clone(),
                rules: self.rules.watching(&topic.name),
                generation,
            });
        }
        (!topic.rules.is_empty()).then(|| topic.clone())
    }

    /// Tells health rules of a topic's health change.
    pub fn health_changed(&self, event: &HealthEvent) {
        let event = Event::Health {
            session: self.name.clone(),
            event: event.clone(),
        };
        if !self.rules.offer(event, 0) {
            for slot in &self.rules.slots() {
                if matches!(slot.rule.kind, recd_rules::RuleKind::Health { .. }) {
                    slot.skip();
                }
            }
        }
    }
}
