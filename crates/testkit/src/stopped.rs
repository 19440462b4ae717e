//! What `rec stop SESSION --json` said of a session, and the one rule for its exit status
//! where a publisher's queue may have been found full.
//!
//! recd marks a topic `unknown_loss` (and `rec stop` exits 4) when a receive pass found its
//! queue full and no sequence number can show what was overwritten: samples *may* have
//! been lost. On a loaded machine a pass one period late finds a 2-deep queue full with
//! nothing lost. So a test accepts exit 4 only for a reason it checks: the topic is
//! flagged, and the test's own count of what the publisher sent still matches what is in
//! the file or counted ([`Shortfall::None`]), unless a full queue is what the test is
//! about ([`Shortfall::WhereUnknownLoss`], [`Shortfall::WhereFoundFull`]).

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde_json::Value;

use crate::Recd;

/// One topic's counts in `rec stop --json`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StopCounts {
    /// Samples taken from the source.
    pub received: u64,
    /// Messages written to the files.
    pub written: u64,
    /// Received but not written.
    pub dropped: u64,
    /// Never received: gaps in the publishers' sequence numbers.
    pub lost: u64,
    /// Receive passes that found the queue full.
    pub overflows: u64,
    /// Let go of by a rate limit or downsampling.
    pub filtered: u64,
    /// Received while paused.
    pub paused: u64,
    /// Let go of by a pre-trigger buffer.
    pub evicted: u64,
    /// Arrived a second time (a sequence number seen already), let go of.
    pub repeated: u64,
    /// A full queue may have overwritten samples nobody can count.
    pub unknown_loss: bool,
}

impl StopCounts {
    /// Samples recd knows the fate of: in the files, or counted (dropped, filtered,
    /// paused, evicted, lost).
    pub fn accounted(&self) -> u64 {
        self.written + self.dropped + self.filtered + self.paused + self.evicted + self.lost
    }

    fn of(topic: &Value) -> Self {
        let n = |key: &str| {
            topic[key]
                .as_u64()
                .unwrap_or_else(|| panic!("{key} in {topic}"))
        };
        Self {
            received: n("received"),
            written: n("written"),
            dropped: n("dropped"),
            lost: n("lost"),
            overflows: n("overflows"),
            filtered: n("filtered"),
            paused: n("paused"),
            evicted: n("evicted"),
            repeated: n("repeated"),
            unknown_loss: topic["unknown_loss"].as_bool().unwrap_or_else(|| {
                panic!("rec stop --json has no unknown_loss: a loss could go unsaid: {topic}")
            }),
        }
    }
}

/// Where a test allows fewer samples in the files and counts than its publisher sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shortfall {
    /// Nowhere: every sample sent is in the files or counted, also on a topic marked
    /// `unknown_loss` (a queue found full that overwrote nothing). For tests whose point
    /// is not a full queue.
    None,
    /// On a topic marked `unknown_loss`: what a full queue overwrote, which no sequence
    /// number shows. For tests of that path.
    WhereUnknownLoss,
    /// On a topic whose queue was found full (`overflows`), marked `unknown_loss` or not:
    /// samples of a publisher there from the start, overwritten before the first one taken,
    /// show in no sequence gap. For tests that make queues overflow.
    WhereFoundFull,
}

/// `rec stop SESSION --json`, whatever its exit status.
#[derive(Debug, Clone)]
pub struct Stopped {
    /// rec's exit status.
    pub code: Option<i32>,
    /// The stopped session's report.
    pub session: Value,
    /// What rec said on stderr.
    pub stderr: String,
}

impl Recd {
    /// Runs `rec stop SESSION --json` and parses its report, whatever its exit status
    /// (4 where a topic is marked `unknown_loss`, 5 where a required topic is missing).
    pub fn stop(&self, session: &str) -> Stopped {
        let output = self.rec(&["stop", session, "--json"]);
        let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
        let report: Value = serde_json::from_slice(&output.stdout).unwrap_or_else(|e| {
            panic!(
                "rec stop {session} --json ({}) printed no JSON ({e}): {}\n{stderr}\nrecd log:\n{}",
                output.status,
                String::from_utf8_lossy(&output.stdout),
                self.log()
            )
        });
        let session = match report {
            Value::Array(mut sessions) if !sessions.is_empty() => sessions.swap_remove(0),
            other => other,
        };
        Stopped {
            code: output.status.code(),
            session,
            stderr,
        }
    }
}

impl Stopped {
    /// The session's files, in order.
    pub fn files(&self) -> Vec<PathBuf> {
        crate::stopped_files(&self.session)
    }

    /// Each topic's counts, by name.
    pub fn counts(&self) -> BTreeMap<String, StopCounts> {
        self.session["topics"]
            .as_array()
            .unwrap_or_else(|| panic!("a stopped session lists its topics: {}", self.session))
            .iter()
            .map(|t| {
                let name = t["name"].as_str().expect("a topic has a name").to_string();
                (name, StopCounts::of(t))
            })
            .collect()
    }

    /// Asserts that rec stop exited 0 with no topic marked `unknown_loss`: for tests
    /// whose publishers' queues are deep enough that a full one would be a fault, and
    /// that cannot count what was sent when they stop.
    pub fn assert_clean(&self) {
        let flagged = flagged(&self.counts());
        assert!(
            self.code == Some(0) && flagged.is_empty(),
            "rec stop exited {:?} with unknown_loss on {flagged:?}: {}\n{}",
            self.code,
            self.stderr,
            self.session
        );
    }

    /// The rule: every topic of `sent` (the test's own count of what its publisher sent,
    /// by topic) is in the report, recd never accounts for more than was sent, falls short
    /// only where `shortfall` allows, and rec stop exited 4 exactly where a topic is
    /// marked `unknown_loss`, 0 otherwise.
    pub fn assert_accounted(&self, sent: &BTreeMap<String, u64>, shortfall: Shortfall) {
        let counts = self.counts();
        for (name, &sent) in sent {
            let c = counts
                .get(name)
                .unwrap_or_else(|| panic!("{name} is not in rec stop's report: {counts:?}"));
            let accounted = c.accounted();
            assert!(
                accounted <= sent,
                "{name}: {accounted} in the files or counted, {sent} sent: {c:?}"
            );
            let allowed = match shortfall {
                Shortfall::None => false,
                Shortfall::WhereUnknownLoss => c.unknown_loss,
                Shortfall::WhereFoundFull => c.overflows > 0,
            };
            assert!(
                accounted == sent || allowed,
                "{name}: {} of {sent} sent are neither in the files nor counted ({shortfall:?}): {c:?}",
                sent - accounted
            );
        }
        let flagged = flagged(&counts);
        assert_eq!(
            self.code,
            Some(if flagged.is_empty() { 0 } else { 4 }),
            "rec stop's exit status with unknown_loss on {flagged:?}: {}",
            self.stderr
        );
    }
}

/// The topics marked `unknown_loss`.
fn flagged(counts: &BTreeMap<String, StopCounts>) -> Vec<String> {
    (counts.iter())
        .filter(|(_, c)| c.unknown_loss)
        .map(|(name, _)| name.clone())
        .collect()
}
