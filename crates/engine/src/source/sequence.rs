//! Publishers' sequence numbers: what they show lost, what they show arrived twice, and
//! when a publisher started over.
//!
//! A publisher numbers its samples 1, 2, 3 … (iceoryx2's rmw header from 0). A number
//! above the publisher's last skips the numbers between: those samples never arrived
//! (`lost`). A number at or below the last is either the same sample again (two
//! subscriptions overlapping for a moment, a history answered twice) or the first of a
//! new run: a node restarted with the same identity (a fixed Zenoh id, a fixed DDS GUID
//! prefix) keeps its publisher's GID and counts from 1 again. The source time stamp tells
//! them apart: a repeat carries the time of a sample already seen, no later than the
//! last one; a new run's samples are published later than anything before. Without time
//! stamps only a jump far below the last ([`REPEAT_REACH`]) is a new run.
//!
//! A subscription made anew (a DDS topic selected again after `rec topics-set` removed
//! it) may first get some of a publisher's history: samples published before it began,
//! then a jump over those the publisher sent while nobody subscribed. Such a jump is not
//! a loss: what was published before the recorder subscribed was never its to lose.

/// How far below a publisher's last number a sample without a source time may be and
/// still be a repeat of one seen. Repeats come from subscriptions overlapping for moments
/// or a publisher's short history; a number further back is a publisher counting anew.
pub(crate) const REPEAT_REACH: u64 = 1024;

/// What a sample's sequence number says of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Arrival {
    /// A sample not seen before; its publisher skipped `lost` numbers since its last.
    New {
        /// Numbers skipped: samples that never arrived.
        lost: u64,
    },
    /// The first sample of a publisher that counts again from a lower number: recorded,
    /// and its gaps counted from here.
    Restart,
    /// A sample seen already: not recorded again, counted as `repeated`.
    Repeat,
}

/// One publisher's numbers.
#[derive(Debug)]
struct Run<K> {
    publisher: K,
    /// The highest number of its current run.
    last: u64,
    /// The latest source time of its current run (ns since the epoch; 0 when unknown).
    last_time_ns: u64,
    /// Its last sample was published before the subscription began (its history): the
    /// numbers skipped after it were sent while nobody subscribed.
    last_from_history: bool,
}

/// Each publisher's latest sequence number, to count the samples it sent that never
/// arrived and to tell a sample received twice from a publisher that started over.
#[derive(Debug)]
pub(crate) struct SequenceGaps<K> {
    runs: Vec<Run<K>>,
    /// When the subscription began (ns since the epoch, the recorder's clock), if it was
    /// made anew: samples published before it are history.
    subscribed_since_ns: Option<u64>,
}

impl<K> Default for SequenceGaps<K> {
    fn default() -> Self {
        Self {
            runs: Vec::new(),
            subscribed_since_ns: None,
        }
    }
}

impl<K: PartialEq> SequenceGaps<K> {
    /// Notes that `publisher` sent `sequence`; returns how many it skipped since its last.
    /// Out-of-order or repeated numbers skip nothing (the highest is kept), and a
    /// publisher's first sample skips nothing: what it published before the recorder
    /// subscribed was never the recorder's to lose. For sources that cannot receive a
    /// sample twice (shared memory); the others use [`Self::arrive`].
    pub fn track(&mut self, publisher: K, sequence: u64) -> u64 {
        match self.arrive(publisher, sequence, 0) {
            Arrival::New { lost } => lost,
            Arrival::Restart | Arrival::Repeat => 0,
        }
    }

    /// Says that the subscription these numbers are counted for was made anew at
    /// `since_ns` (the recorder's clock): a sample published before it is history, and
    /// the numbers a publisher skips after its history are not lost.
    pub fn subscribed_anew(&mut self, since_ns: u64) {
        self.subscribed_since_ns = Some(since_ns);
    }

    /// Notes that `publisher` sent `sequence` at `source_time_ns` (0 when the sample does
    /// not say) and says what the sample is. A publisher's first sample skips nothing, nor
    /// does the first after its history (see [`Self::subscribed_anew`]).
    pub fn arrive(&mut self, publisher: K, sequence: u64, source_time_ns: u64) -> Arrival {
        let from_history = self
            .subscribed_since_ns
            .is_some_and(|since| source_time_ns > 0 && source_time_ns < since);
        let Some(run) = self.runs.iter_mut().find(|r| r.publisher == publisher) else {
            self.runs.push(Run {
                publisher,
                last: sequence,
                last_time_ns: source_time_ns,
                last_from_history: from_history,
            });
            return Arrival::New { lost: 0 };
        };
        if sequence > run.last {
            let lost = if run.last_from_history {
                0
            } else {
                sequence - run.last - 1
            };
            run.last = sequence;
            run.last_time_ns = run.last_time_ns.max(source_time_ns);
            run.last_from_history = from_history;
            return Arrival::New { lost };
        }
        let later = source_time_ns > 0 && run.last_time_ns > 0;
        let starts_over = if later {
            source_time_ns > run.last_time_ns
        } else {
            run.last - sequence > REPEAT_REACH
        };
        if starts_over {
            run.last = sequence;
            run.last_time_ns = source_time_ns;
            run.last_from_history = from_history;
            Arrival::Restart
        } else {
            Arrival::Repeat
        }
    }

    /// Whether `publisher` sent a sample before.
    pub fn knows(&self, publisher: &K) -> bool {
        self.runs.iter().any(|r| r.publisher == *publisher)
    }

    /// Whether `sequence` of `publisher` is one these numbers (a topic's when `rec
    /// topics-set` unselected it) hold already: a sample recorded before, which the
    /// publisher sends the new subscription again (its history). The publisher is
    /// forgotten at its first newer sample, so that only the repeats cost a lookup.
    pub fn repeats(&mut self, publisher: &K, sequence: u64) -> bool {
        match self.runs.iter().position(|r| r.publisher == *publisher) {
            Some(at) if sequence <= self.runs[at].last => true,
            Some(at) => {
                self.runs.swap_remove(at);
                false
            }
            None => false,
        }
    }

    /// Forgets a publisher that went away.
    pub fn forget(&mut self, publisher: &K) {
        self.runs.retain(|r| r.publisher != *publisher);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sequence_gaps_count_what_was_skipped() {
        let mut gaps = SequenceGaps::default();
        assert_eq!(gaps.track('a', 5), 0);
        assert_eq!(gaps.track('a', 6), 0);
        assert_eq!(gaps.track('a', 9), 2);
        assert_eq!(gaps.track('a', 8), 0, "late: nothing more is lost");
        assert_eq!(gaps.track('a', 10), 0);
        assert!(!gaps.knows(&'b'));
        assert_eq!(gaps.track('b', 100), 0, "a new publisher's first sample");
        assert!(gaps.knows(&'b'));
        gaps.forget(&'a');
        assert_eq!(gaps.track('a', 50), 0);
    }

    #[test]
    fn a_sample_seen_before_is_a_repeat() {
        let mut gaps = SequenceGaps::default();
        assert_eq!(gaps.arrive('a', 1, 1_000), Arrival::New { lost: 0 });
        assert_eq!(gaps.arrive('a', 2, 2_000), Arrival::New { lost: 0 });
        assert_eq!(
            gaps.arrive('a', 2, 2_000),
            Arrival::Repeat,
            "the last again"
        );
        assert_eq!(
            gaps.arrive('a', 1, 1_000),
            Arrival::Repeat,
            "an earlier one"
        );
        assert_eq!(gaps.arrive('a', 3, 3_000), Arrival::New { lost: 0 });
    }

    #[test]
    fn a_publisher_counting_again_from_one_later_is_a_new_run() {
        let mut gaps = SequenceGaps::default();
        for n in 1..=80 {
            assert_eq!(gaps.arrive('a', n, n * 1_000), Arrival::New { lost: 0 });
        }
        // The node restarted with the same id: its numbers start over, its times go on.
        assert_eq!(gaps.arrive('a', 1, 100_000), Arrival::Restart);
        assert_eq!(gaps.arrive('a', 2, 101_000), Arrival::New { lost: 0 });
        assert_eq!(
            gaps.arrive('a', 5, 104_000),
            Arrival::New { lost: 2 },
            "gaps are counted from the new run"
        );
        assert_eq!(gaps.arrive('a', 5, 104_000), Arrival::Repeat);
    }

    #[test]
    fn without_times_only_a_far_jump_back_is_a_new_run() {
        let mut gaps = SequenceGaps::default();
        gaps.arrive('a', 5_000, 0);
        assert_eq!(gaps.arrive('a', 5_000 - REPEAT_REACH, 0), Arrival::Repeat);
        assert_eq!(gaps.arrive('a', 1, 0), Arrival::Restart);
        assert_eq!(gaps.arrive('a', 2, 0), Arrival::New { lost: 0 });
    }

    #[test]
    fn a_jump_after_a_history_sample_is_not_lost_but_one_after_a_new_sample_is() {
        let since = 1_000;
        let mut gaps = SequenceGaps::default();
        gaps.subscribed_anew(since);
        // History: published before the subscription; then what nobody subscribed to.
        assert_eq!(gaps.arrive('a', 26, since - 50), Arrival::New { lost: 0 });
        assert_eq!(gaps.arrive('a', 47, since + 10), Arrival::New { lost: 0 });
        assert_eq!(gaps.arrive('a', 50, since + 20), Arrival::New { lost: 2 });
        // A publisher without source times: nothing is history.
        assert_eq!(gaps.arrive('b', 3, 0), Arrival::New { lost: 0 });
        assert_eq!(gaps.arrive('b', 9, 0), Arrival::New { lost: 5 });
        let mut never_anew = SequenceGaps::default();
        assert_eq!(
            never_anew.arrive('a', 26, since - 50),
            Arrival::New { lost: 0 }
        );
        assert_eq!(
            never_anew.arrive('a', 47, since + 10),
            Arrival::New { lost: 20 }
        );
    }

    #[test]
    fn repeats_are_what_a_publisher_sent_before_until_it_sends_anew() {
        let mut recorded = SequenceGaps::default();
        recorded.track('a', 24);
        assert!(recorded.repeats(&'a', 0));
        assert!(recorded.repeats(&'a', 24));
        assert!(
            !recorded.repeats(&'b', 3),
            "another publisher's samples are new"
        );
        assert!(!recorded.repeats(&'a', 45));
        assert!(
            !recorded.repeats(&'a', 1),
            "forgotten at its first new sample"
        );
    }
}
