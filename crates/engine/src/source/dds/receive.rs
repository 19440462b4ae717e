//! Taking the samples waiting in a reader and handing them over.

use rustdds::Timestamp;

use super::DdsSource;
use crate::handoff::{now_ns, Stamps};
use crate::source::{hand_over, Held};

impl DdsSource {
    /// Takes every sample waiting in a topic's reader.
    pub(super) fn drain(&mut self, slot: usize) -> Drained {
        let threshold = self.settings.common.zero_copy_threshold;
        let topic = &mut self.topics[slot];
        if !topic.announced {
            return Drained::default();
        }
        let counters = &topic.topic.counters;
        let mut drained = Drained::default();
        loop {
            let (raw, info) = match topic.reader.take() {
                Ok(Some((Some(raw), info))) => (raw, info),
                // A dispose or unregister carries no message.
                Ok(Some((None, _))) => continue,
                Ok(None) => break,
                Err(reason) => {
                    self.link.registry.note_problem(
                        &topic.topic.service,
                        format!("cannot take a sample: {reason}"),
                    );
                    break;
                }
            };
            counters.add_received();
            drained.taken += 1;
            let mut stamps = Stamps::received_at(now_ns());
            // Samples that came in fragments may lack a source timestamp.
            if let Some(source_time) = info.source_timestamp() {
                stamps.publish_time = unix_ns(source_time);
            }
            let identity = info.sample_identity();
            // RTPS sequence numbers start at 1; a negative one would be malformed.
            let sequence = u64::try_from(i64::from(identity.sequence_number)).unwrap_or(0);
            let lost = topic.gaps.track(identity.writer_guid, sequence);
            if lost > 0 {
                counters.add_lost(lost);
            }
            drained.handed_over |= hand_over(
                &mut self.link.tx,
                &topic.topic,
                stamps,
                Held::Dds(raw.cdr),
                threshold,
            );
        }
        drained
    }
}

/// What draining one reader did.
#[derive(Default)]
pub(super) struct Drained {
    pub taken: u64,
    pub handed_over: bool,
}

/// What one pass over the readers did.
#[derive(Default)]
pub(super) struct Pass {
    pub taken: u64,
    pub most_from_one_reader: u64,
    pub handed_over: bool,
}

impl Pass {
    pub fn add(&mut self, drained: Drained) {
        self.taken += drained.taken;
        self.most_from_one_reader = self.most_from_one_reader.max(drained.taken);
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
