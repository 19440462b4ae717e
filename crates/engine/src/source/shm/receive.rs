//! One receive pass over a subscriber: every waiting sample is taken and handed over,
//! without ever letting the writer hold the publisher's whole borrow budget.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use iceoryx2::identifiers::UniquePublisherId;
use iceoryx2::port::subscriber::Subscriber;
use iceoryx2::sample::Sample;
use iceoryx2::service::marker::{CustomHeaderMarker, CustomPayloadMarker};
use iceoryx2::service::port_factory::publish_subscribe;

use super::poll::PollSchedule;
use super::service_types::read_rmw_header;
use super::Flavor;
use crate::handoff::{now_ns, LoanedBytes, Sender, Stamps};
use crate::source::spill::SpillPool;
use crate::source::{hand_over, Held, SequenceGaps};
use crate::topic::Topic;

type RawSample = Sample<Flavor, [CustomPayloadMarker], CustomHeaderMarker>;
pub(super) type RawSubscriber = Subscriber<Flavor, [CustomPayloadMarker], CustomHeaderMarker>;
pub(super) type RawService =
    publish_subscribe::PortFactory<Flavor, [CustomPayloadMarker], CustomHeaderMarker>;

/// A sample on its way to the file, still in shared memory.
pub(crate) struct ShmSample {
    sample: RawSample,
    header_len: usize,
    /// Set while the writer holds the sample: counts it against the borrow budget.
    _lent: Option<Lent>,
}

/// Samples of one subscriber that the writer holds in shared memory.
#[derive(Default)]
pub(super) struct Borrows(Arc<AtomicUsize>);

impl Borrows {
    fn held(&self) -> usize {
        self.0.load(Ordering::Acquire)
    }

    fn lend(&self) -> Lent {
        self.0.fetch_add(1, Ordering::AcqRel);
        Lent(self.0.clone())
    }
}

/// One sample counted in [`Borrows`] until it is released.
struct Lent(Arc<AtomicUsize>);

impl Drop for Lent {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

impl LoanedBytes for ShmSample {
    fn user_header(&self) -> &[u8] {
        // SAFETY: the user header occupies `header_len` bytes (its size in the service's
        // static config) and lives as long as the sample.
        unsafe {
            std::slice::from_raw_parts(
                (self.sample.user_header() as *const CustomHeaderMarker).cast::<u8>(),
                self.header_len,
            )
        }
    }

    fn payload(&self) -> &[u8] {
        let payload = self.sample.payload();
        // SAFETY: CustomPayloadMarker is one byte; iceoryx2 sizes the slice in bytes.
        unsafe { std::slice::from_raw_parts(payload.as_ptr().cast::<u8>(), payload.len()) }
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
    /// Samples of this subscriber the writer holds, and how many iceoryx2 lends at once
    /// (per publisher; counting them per subscriber errs on the safe side).
    pub borrows: Borrows,
    pub max_borrowed: usize,
    /// The subscriber's queue: a pass that finds this many samples came late.
    pub buffer_size: usize,
    pub rounds_without_publisher: u32,
    pub schedule: PollSchedule,
}

/// What one receive pass over a topic did.
pub(super) struct Received {
    pub samples: u64,
    pub handed_over: bool,
    /// Samples were left waiting: the writer still holds as many as iceoryx2 lends.
    pub held_back: bool,
}

/// Receives every waiting sample of one topic. Large samples stay in shared memory
/// until written, except the one that would use up the borrow budget: that one goes to
/// the spill pool (or, the pool full, is dropped and counted), so that the next pass can
/// always take the next sample.
pub(super) fn receive_topic(
    topic: &mut OpenTopic,
    tx: &mut Sender<Held>,
    spill: &SpillPool,
    zero_copy_threshold: usize,
) -> Received {
    let counters = &topic.topic.counters;
    let mut received = Received {
        samples: 0,
        handed_over: false,
        held_back: false,
    };
    // One receive time per pass: the samples of a pass are picked up together. Taken at
    // the first sample, as most polls find none.
    let mut log_time = None;
    loop {
        let sample = match topic.subscriber.receive() {
            Ok(Some(sample)) => sample,
            Ok(None) => break,
            // ExceedsMaxBorrows: the writer still holds as many samples of this publisher
            // as iceoryx2 lends; the rest wait in the subscriber's buffer until the next
            // pass.
            Err(_) => {
                received.held_back = true;
                break;
            }
        };
        counters.add_received();
        received.samples += 1;
        let mut stamps = Stamps::received_at(*log_time.get_or_insert_with(now_ns));
        let shm = ShmSample {
            sample,
            header_len: topic.header_len,
            _lent: None,
        };
        if topic.rmw_header {
            if let Some((stamp, sequence)) = read_rmw_header(shm.user_header()) {
                if stamp > 0 {
                    stamps.publish_time = stamp as u64;
                }
                let lost = topic.gaps.track(shm.sample.origin(), sequence);
                if lost > 0 {
                    counters.add_lost(lost);
                }
            }
        }
        let len = shm.user_header().len() + shm.payload().len();
        let held = if len < zero_copy_threshold {
            // Copied by the hand-over and released at once.
            Held::Shm(shm)
        } else if topic.borrows.held() + 1 < topic.max_borrowed {
            Held::Shm(ShmSample {
                _lent: Some(topic.borrows.lend()),
                ..shm
            })
        } else {
            match spill.spill(shm.user_header(), shm.payload()) {
                Some(spilled) => Held::Spilled(spilled),
                None => {
                    counters.add_dropped();
                    continue;
                }
            }
        };
        received.handed_over |= hand_over(tx, &topic.topic, stamps, held, zero_copy_threshold);
    }
    if received.samples >= topic.buffer_size as u64 {
        counters.add_overflow();
    }
    received
}
