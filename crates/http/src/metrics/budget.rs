//! Which topics get series of their own: the first `max_topics` seen, for as long as their
//! session runs, so that a topic never moves between its own series and `_other` (which
//! would break its counters).

use std::collections::{BTreeMap, BTreeSet, HashSet};

/// The `topic` label of topics beyond the budget.
pub const OTHER: &str = "_other";

/// The topics with series of their own.
#[derive(Debug)]
pub struct TopicBudget {
    max: usize,
    admitted: BTreeMap<String, BTreeSet<String>>,
    seen_sessions: HashSet<String>,
}

impl TopicBudget {
    /// At most `max` topics over all sessions.
    pub fn new(max: usize) -> Self {
        Self {
            max,
            admitted: BTreeMap::new(),
            seen_sessions: HashSet::new(),
        }
    }

    /// Notes that `session` is still running (call for each before [`Self::forget_ended`]).
    pub fn keep_session(&mut self, session: &str) {
        self.seen_sessions.insert(session.to_string());
    }

    /// Frees the places of sessions not kept since the last call.
    pub fn forget_ended(&mut self) {
        let seen = std::mem::take(&mut self.seen_sessions);
        self.admitted.retain(|session, _| seen.contains(session));
    }

    /// Whether the topic has (or now gets) series of its own.
    pub fn admits(&mut self, session: &str, topic: &str) -> bool {
        if self
            .admitted
            .get(session)
            .is_some_and(|t| t.contains(topic))
        {
            return true;
        }
        let used: usize = self.admitted.values().map(BTreeSet::len).sum();
        if used >= self.max {
            return false;
        }
        (self.admitted.entry(session.to_string()).or_default()).insert(topic.to_string());
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_first_topics_and_frees_ended_sessions() {
        let mut budget = TopicBudget::new(2);
        assert!(budget.admits("a", "t1"));
        assert!(budget.admits("a", "t2"));
        assert!(!budget.admits("a", "t0"), "the budget is spent");
        assert!(budget.admits("a", "t1"), "an admitted topic stays");
        budget.keep_session("b");
        budget.forget_ended();
        assert!(
            budget.admits("b", "t0"),
            "session a ended: its places are free"
        );
    }
}
