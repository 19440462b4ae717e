//! The topics every source found and what could not be recorded: shared by the sources
//! (which add to it) and the recording's status (which reads it).

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use recd_health::Requirement;

use crate::topic::Topic;

/// The topics of every source and what could not be recorded.
#[derive(Default)]
pub(crate) struct TopicRegistry {
    /// Every topic recorded so far, in the order found; a topic's index is its position.
    pub topics: Mutex<Vec<Arc<Topic>>>,
    /// Topics that match the selection but could not be recorded, with the reason.
    pub problems: Mutex<BTreeMap<String, String>>,
    /// The required rules and whether a topic each names has come, as last checked.
    pub required: Mutex<Vec<Requirement>>,
}

impl TopicRegistry {
    /// Adds the topic `make` builds with the next free index (unique across sources).
    pub fn add_topic(&self, make: impl FnOnce(u32) -> Topic) -> Arc<Topic> {
        let mut topics = self.topics.lock().expect("topics lock");
        let index = u32::try_from(topics.len()).expect("fewer than 2^32 topics");
        let topic = Arc::new(make(index));
        debug_assert_eq!(topic.index, index);
        topics.push(topic.clone());
        topic
    }

    /// Records why `what` cannot be recorded (replacing an older reason).
    pub fn note_problem(&self, what: &str, reason: String) {
        self.problems
            .lock()
            .expect("problems lock")
            .insert(what.to_string(), reason);
    }

    /// The required rules as last checked.
    pub fn required(&self) -> Vec<Requirement> {
        self.required.lock().expect("required lock").clone()
    }

    /// Forgets the problem of `what`, which is recorded now.
    pub fn clear_problem(&self, what: &str) {
        self.problems.lock().expect("problems lock").remove(what);
    }
}
