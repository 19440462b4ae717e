//! One receive pass over a subscriber: every waiting sample is taken and handed over, the
//! writer holding large ones in shared memory up to the publisher's borrow budget.

use std::sync::Arc;
use std::time::{Duration, Instant};

use iceoryx2::identifiers::UniquePublisherId;

use super::copy_budget::CopyBudget;
use super::lease::{Borrows, Issued, LeasedSample, Leases, TakenBack};
use super::poll::PollSchedule;
use super::raw::{split_sample, RawSample, RawService, RawSubscriber};
use super::service_types::read_rmw_header;
use crate::handoff::{now_ns, LoanedBytes, Sender, Stamps};
use crate::source::spill::SpillPool;
use crate::source::stats::ReceiveStats;
use crate::source::{hand_over, Held, SequenceGaps};
use crate::throttle::Throttle;
use crate::topic::Topic;

/// A sample on its way to the file.
pub(crate) enum ShmSample {
    /// A small sample, copied by the hand-over and released at once.
    Small {
        sample: RawSample,
        header_len: usize,
    },
    /// A large one, lent to the writer.
    Leased(LeasedSample),
}

impl ShmSample {
    /// The user header's bytes.
    pub fn user_header(&self) -> &[u8] {
        match self {
            ShmSample::Small { sample, header_len } => split_sample(sample, *header_len).0,
            ShmSample::Leased(leased) => leased.user_header(),
        }
    }

    /// The payload's bytes.
    pub fn payload(&self) -> &[u8] {
        match self {
            ShmSample::Small { sample, header_len } => split_sample(sample, *header_len).1,
            ShmSample::Leased(leased) => leased.payload(),
        }
    }
}

impl LoanedBytes for ShmSample {
    fn byte_len(&self) -> usize {
        self.user_header().len() + self.payload().len()
    }

    fn with_parts<R>(&self, use_parts: impl FnOnce(&[&[u8]]) -> R) -> R {
        use_parts(&[self.user_header(), self.payload()])
    }

    fn settle(&mut self) -> bool {
        match self {
            ShmSample::Small { .. } => true,
            ShmSample::Leased(leased) => leased.settle(),
        }
    }
}

/// A subscribed service being recorded.
pub(super) struct OpenTopic {
    pub topic: Arc<Topic>,
    pub service: RawService,
    pub subscriber: RawSubscriber,
    /// Whether the writer was told of the topic (its samples are taken only then).
    pub announced: bool,
    pub header_len: usize,
    /// Whether the user header is rmw_iceoryx2's (time stamp and sequence number).
    pub rmw_header: bool,
    pub gaps: SequenceGaps<UniquePublisherId>,
    /// Each publisher's last sequence number when the topic was unselected (`rec
    /// topics-set`), for a topic selected again: samples up to it were recorded already.
    pub recorded: SequenceGaps<UniquePublisherId>,
    /// The publishers the service had when the subscriber was made: samples they sent
    /// before were never the recorder's. A later one's first samples were.
    pub publishers_at_start: Vec<UniquePublisherId>,
    /// Samples of this subscriber the writer holds, and how many iceoryx2 lends at once
    /// (per publisher; counting them per subscriber errs on the safe side).
    pub borrows: Borrows,
    /// The loans held: queued for the writer, being written or copied, or to be released.
    pub issued: Issued,
    /// The last pass left a sample waiting for a loan being copied (or for copying time):
    /// the next pass comes at once.
    pub awaits_copy: bool,
    pub max_borrowed: usize,
    /// The subscriber's queue: a pass that finds this many samples came late.
    pub buffer_size: usize,
    /// The samples of history the service hands a new subscriber (a latched topic).
    pub history_size: usize,
    pub rounds_without_publisher: u32,
    /// A same-named event service wakes the thread when a publisher sends: the schedule
    /// only catches publishers that do not notify (see [`super::poll::PollBounds::with_events`]).
    pub has_events: bool,
    /// Its event service fired since its last pass.
    pub woken: bool,
    pub schedule: PollSchedule,
    /// Its rate limit or downsampling, if any.
    pub throttle: Option<Throttle>,
}

impl OpenTopic {
    /// The most samples one pass takes from this topic: what its queue and loans can
    /// hold, twice over. It bounds the work of a pass however fast a publisher sends.
    fn pass_limit(&self) -> u64 {
        2 * (self.buffer_size + self.max_borrowed) as u64
    }
}

/// What the receive passes of the shared-memory source work with besides the topic.
pub(super) struct PassContext<'a> {
    pub tx: &'a mut Sender<Held>,
    pub spill: &'a mut SpillPool,
    pub copying: &'a mut CopyBudget,
    /// Copying time left to this pass (it copies at least one step, see
    /// [`Issued::take_back`]).
    pub copy_left: Duration,
    /// Whether this pass copied.
    pub copied: bool,
    pub leases: &'a mut Leases,
    pub stats: &'a ReceiveStats,
    pub zero_copy_threshold: usize,
}

/// What one receive pass over a topic did.
pub(super) struct Received {
    pub samples: u64,
    pub handed_over: bool,
    /// Samples were left waiting: the writer was writing every sample iceoryx2 lends.
    pub held_back: bool,
}

/// Receives every waiting sample of one topic (up to [`OpenTopic::pass_limit`]). Large
/// samples stay in shared memory until written, up to the whole borrow budget; when the
/// budget is used up and a sample waits, the newest loan the writer has not claimed is
/// taken back into the spill pool (see [`super::lease`]), so the waiting sample is taken
/// before the publisher can overwrite it.
pub(super) fn receive_topic(topic: &mut OpenTopic, pass: &mut PassContext<'_>) -> Received {
    let counters = &topic.topic.counters;
    let mut received = Received {
        samples: 0,
        handed_over: false,
        held_back: false,
    };
    topic.issued.release_written();
    topic.awaits_copy = false;
    // One receive time per pass: the samples of a pass are picked up together. Taken at
    // the first sample, as most polls find none.
    let mut log_time = None;
    // A publisher's samples before the first one taken in this pass may be lost unseen.
    let mut missed_start = false;
    // The first sample of a publisher there when the recorder subscribed is taken, and it
    // is not the publisher's first (they count from 0).
    let mut present_started_late = false;
    while received.samples < topic.pass_limit() {
        if topic.borrows.held() >= topic.max_borrowed {
            topic.issued.release_written();
        }
        if topic.borrows.held() >= topic.max_borrowed {
            if !topic.subscriber.has_samples().unwrap_or(false) {
                break;
            }
            match take_back_a_loan(&mut topic.issued, pass) {
                Freed::Loan => {}
                Freed::NotYet => {
                    topic.awaits_copy = true;
                    received.held_back = true;
                    break;
                }
                Freed::Nothing => {
                    received.held_back = true;
                    break;
                }
            }
        }
        let sample = match topic.subscriber.receive() {
            Ok(Some(sample)) => sample,
            Ok(None) => break,
            // ExceedsMaxBorrows: another publisher's loans, counted with these.
            Err(_) => {
                received.held_back = true;
                break;
            }
        };
        let (header, payload) = split_sample(&sample, topic.header_len);
        let rmw_header = topic.rmw_header.then(|| read_rmw_header(header)).flatten();
        if let Some((_, sequence)) = rmw_header {
            if topic.recorded.repeats(&sample.origin(), sequence) {
                // Recorded before the topic was unselected (the publisher's history,
                // delivered again to the new subscriber): not a new sample.
                continue;
            }
        }
        counters.add_received();
        received.samples += 1;
        let mut stamps = Stamps::received_at(*log_time.get_or_insert_with(now_ns));
        if let Some((stamp, sequence)) = rmw_header {
            if stamp > 0 {
                stamps.publish_time = stamp as u64;
            }
            let origin = sample.origin();
            // A publisher that joined after the subscriber, whose first sample taken is
            // not its first (they count from 0): what it sent before was the recorder's
            // to take, and shows in no gap.
            let first = sequence > 0 && !topic.gaps.knows(&origin);
            let present = topic.publishers_at_start.contains(&origin);
            missed_start |= first && !present;
            present_started_late |= first && present;
            let lost = topic.gaps.track(origin, sequence);
            if lost > 0 {
                counters.add_lost(lost);
            }
        }
        if let Some(throttle) = &mut topic.throttle {
            if !throttle.keeps(stamps.log_time) {
                // Released here, its loan back at once.
                counters.add_filtered();
                continue;
            }
        }
        let held = if header.len() + payload.len() < pass.zero_copy_threshold {
            // Copied by the hand-over and released at once.
            ShmSample::Small {
                sample,
                header_len: topic.header_len,
            }
        } else {
            ShmSample::Leased(pass.leases.lend(
                sample,
                topic.header_len,
                &topic.borrows,
                &mut topic.issued,
            ))
        };
        received.handed_over |= hand_over(
            pass.tx,
            &topic.topic,
            stamps,
            Held::Shm(held),
            pass.zero_copy_threshold,
        );
    }
    if received.samples >= topic.buffer_size as u64 {
        // A publisher there from the start may have sent samples before the subscription
        // (never the recorder's) or after it, overwritten in a full queue before this
        // first pass: nobody can say. A service with a history hands the subscriber its
        // last samples first, which fill the queue as well: not counted against it.
        let start_overwritten = present_started_late && topic.history_size == 0;
        counters.add_overflow(!topic.rmw_header || missed_start || start_overwritten);
    }
    received
}

/// Whether a loan was freed for a sample waiting in the queue.
enum Freed {
    Loan,
    /// Not in this pass: a copy goes on in the next, which comes at once.
    NotYet,
    /// The writer claimed every loan.
    Nothing,
}

/// Frees a loan for a sample waiting in the queue by taking back the newest one the writer
/// has not claimed (see [`Issued::take_back`]): copied into the spill pool, a slice per
/// pass, while the copying budget lasts, else given up.
fn take_back_a_loan(issued: &mut Issued, pass: &mut PassContext<'_>) -> Freed {
    if pass.copied && pass.copy_left.is_zero() {
        return Freed::NotYet;
    }
    let started = Instant::now();
    let copy = pass.copying.allows(started);
    let taken = issued.take_back(pass.spill, copy, pass.copy_left);
    if copy && taken != TakenBack::Nothing {
        let took = started.elapsed();
        pass.copying.spend(took);
        pass.copy_left = pass.copy_left.saturating_sub(took);
        pass.copied |= matches!(taken, TakenBack::Copying | TakenBack::Spilled);
    }
    match taken {
        TakenBack::Spilled => {
            pass.stats.add_spilled();
            Freed::Loan
        }
        TakenBack::GivenUp => {
            pass.stats.add_given_up();
            Freed::Loan
        }
        TakenBack::Copying => Freed::NotYet,
        TakenBack::Claimed | TakenBack::Nothing => Freed::Nothing,
    }
}
