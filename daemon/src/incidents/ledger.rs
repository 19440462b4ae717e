//! The triggers of pre-trigger sessions taken by id: a trigger repeated with the same id
//! gets the first one's answer, and one repeated while the first waits for its moment is
//! refused, so that each id writes its window once however often a fleet repeats it.

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;

use recd_control::SessionTriggered;

use crate::locks::lock;

/// How many trigger ids are remembered.
pub const REMEMBERED_IDS: usize = 4096;

/// The triggers taken by id: their answers, or `None` while one waits for its moment.
#[derive(Default)]
pub struct TriggerLedger {
    answers: Mutex<Ledger>,
}

#[derive(Default)]
struct Ledger {
    by_id: HashMap<String, Option<SessionTriggered>>,
    order: VecDeque<String>,
}

/// What the ledger says of an id.
#[derive(Debug, PartialEq, Eq)]
pub enum Taken {
    /// Not taken before: it is now, and waits for its answer.
    New,
    /// Taken and answered: this was the answer.
    Answered(SessionTriggered),
    /// Taken, and still waiting for its moment.
    Waiting,
}

impl TriggerLedger {
    /// Takes `id`, or says how it was taken before; the oldest ids beyond
    /// [`REMEMBERED_IDS`] are forgotten.
    pub fn take(&self, id: &str) -> Taken {
        let mut ledger = lock(&self.answers);
        match ledger.by_id.get(id) {
            Some(Some(answer)) => Taken::Answered(answer.clone()),
            Some(None) => Taken::Waiting,
            None => {
                ledger.by_id.insert(id.to_string(), None);
                ledger.order.push_back(id.to_string());
                while ledger.order.len() > REMEMBERED_IDS {
                    let oldest = ledger.order.pop_front().expect("not empty");
                    ledger.by_id.remove(&oldest);
                }
                Taken::New
            }
        }
    }

    /// Keeps the answer of the trigger `id` took; without one (it failed) the id is free
    /// again.
    pub fn settle(&self, id: &str, answer: Option<&SessionTriggered>) {
        let mut ledger = lock(&self.answers);
        match answer {
            Some(answer) => {
                ledger.by_id.insert(id.to_string(), Some(answer.clone()));
            }
            None => {
                ledger.by_id.remove(id);
                ledger.order.retain(|taken| taken != id);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(time_ns: u64) -> SessionTriggered {
        SessionTriggered {
            name: "snap".into(),
            time_ns,
            files: Vec::new(),
            incident: None,
            id: Some("brake".into()),
            repeated: false,
        }
    }

    #[test]
    fn an_id_is_new_once_waits_until_answered_and_is_free_again_after_a_failure() {
        let ledger = TriggerLedger::default();
        assert_eq!(ledger.take("snap/brake"), Taken::New);
        assert_eq!(ledger.take("snap/brake"), Taken::Waiting);
        ledger.settle("snap/brake", Some(&answer(7)));
        assert_eq!(ledger.take("snap/brake"), Taken::Answered(answer(7)));
        assert_eq!(ledger.take("snap/other"), Taken::New);
        ledger.settle("snap/other", None);
        assert_eq!(
            ledger.take("snap/other"),
            Taken::New,
            "a failure frees its id"
        );
    }

    #[test]
    fn the_oldest_ids_are_forgotten_beyond_the_bound() {
        let ledger = TriggerLedger::default();
        for n in 0..=REMEMBERED_IDS {
            assert_eq!(ledger.take(&format!("s/{n}")), Taken::New);
        }
        assert_eq!(ledger.take("s/0"), Taken::New, "forgotten");
        assert_eq!(ledger.take(&format!("s/{REMEMBERED_IDS}")), Taken::Waiting);
    }
}
