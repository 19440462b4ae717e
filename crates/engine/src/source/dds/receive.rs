//! Taking the samples waiting in a reader and handing them over.

use rustdds::Timestamp;

use super::gathered::Early;
use super::raw::RawSample;
use super::reader::{throttled, Taken};
use super::DdsSource;
use crate::handoff::{Sender, Stamps};
use crate::source::{hand_over, Arrival, Held};

impl DdsSource {
    /// Takes every sample waiting in a topic's reader.
    pub(super) fn drain(&mut self, slot: usize) -> Drained {
        let threshold = self.settings.common.zero_copy_threshold;
        let topic = &mut self.topics[slot];
        let (true, Some(reader)) = (topic.announced, topic.reader.as_mut()) else {
            return Drained::default();
        };
        let record = &*topic.topic;
        let counters = &record.counters;
        let gaps = &mut topic.gaps;
        let recorded = &mut topic.recorded;
        let largest = &mut topic.largest;
        let mut drained = Drained::default();
        let mut each = |tx: &mut Sender<Held>, taken: Taken, at: u64| {
            // RTPS sequence numbers start at 1; a negative one would be malformed.
            let sequence = u64::try_from(taken.sequence).unwrap_or(0);
            // Samples that came in fragments may lack a source timestamp.
            let source_time_ns = taken.source_time.map_or(0, unix_ns);
            // Recorded before the topic was unselected, or the writer's number seen
            // already: not a new sample. A writer counting anew from a lower number
            // (restarted keeping its GUID) is a new run, recorded.
            let arrival = if recorded.repeats(&taken.writer, sequence) {
                Arrival::Repeat
            } else {
                gaps.arrive(taken.writer, sequence, source_time_ns)
            };
            if arrival == Arrival::Repeat {
                counters.add_repeated();
                if let RawSample::Staged { len } = taken.sample {
                    tx.skip_staged(len);
                }
                return;
            }
            counters.add_received();
            drained.taken += 1;
            let mut stamps = Stamps::received_at(at);
            if source_time_ns > 0 {
                stamps.publish_time = source_time_ns;
            }
            if let Arrival::New { lost } = arrival {
                if lost > 0 {
                    counters.add_lost(lost);
                }
            }
            match taken.sample {
                RawSample::Staged { len } => {
                    *largest = (*largest).max(len);
                    tx.push_staged(record.index, stamps, len);
                    drained.handed_over = true;
                }
                RawSample::Heap(cdr) => {
                    *largest = (*largest).max(cdr.len());
                    drained.handed_over |= hand_over(tx, record, stamps, Held::Dds(cdr), threshold);
                }
                RawSample::Dropped => counters.add_dropped(),
                RawSample::Filtered => counters.add_filtered(),
            }
        };
        // What the discovery thread gathered while the topic was held comes first.
        for Early { taken, at } in std::mem::take(&mut topic.early) {
            each(
                &mut self.link.tx,
                throttled(&mut topic.throttle, taken, at),
                at,
            );
        }
        let taken = reader.take_all(&mut self.link.tx, threshold, &mut topic.throttle, each);
        if let Err(reason) = taken {
            self.link.registry.note_problem(
                &self.topics[slot].topic.service,
                format!("cannot take a sample: {reason}"),
            );
        }
        if drained.taken > 0 {
            drained.crowded = drained.taken * 4 >= self.topics[slot].depth as u64;
            self.fit_history(slot);
        }
        drained
    }
}

/// What draining one reader did.
#[derive(Default)]
pub(super) struct Drained {
    pub taken: u64,
    pub handed_over: bool,
    /// The reader's history was filled beyond a quarter.
    pub crowded: bool,
}

/// What one pass over the readers did.
#[derive(Default)]
pub(super) struct Pass {
    pub taken: u64,
    pub crowded: bool,
    pub handed_over: bool,
}

impl Pass {
    pub fn add(&mut self, drained: Drained) {
        self.taken += drained.taken;
        self.crowded |= drained.crowded;
        self.handed_over |= drained.handed_over;
    }
}

/// An RTPS time stamp (seconds and 2^-32 fractions since the Unix epoch) in ns.
fn unix_ns(stamp: Timestamp) -> u64 {
    let ticks = stamp.to_ticks();
    let seconds = ticks >> 32;
    let fraction = ticks & 0xffff_ffff;
    seconds * 1_000_000_000 + ((fraction * 1_000_000_000) >> 32)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rtps_time_stamps_convert_to_unix_ns() {
        let stamp = Timestamp::from_ticks((1_700_000_000u64 << 32) | (1u64 << 31));
        assert_eq!(unix_ns(stamp), 1_700_000_000_500_000_000);
    }
}
