//! The readers of raw samples, one per recorded topic, and how deep their history is.
//!
//! rustdds keeps a topic's received samples in a cache that evicts the oldest beyond the
//! reader's `max_samples`, whether or not the reader took them, and a reliable reader has
//! acknowledged them by then: a receive thread that falls behind by more than the history
//! loses reliable data. The history is therefore sized in bytes: it starts at
//! [`MIN_DEPTH`] samples and, once a topic's sample size is known, grows to hold
//! `reader_memory` bytes of its largest samples (at most [`MAX_DEPTH`]). rustdds only
//! ever raises a topic's limits, so it grows and never shrinks.

use std::cell::RefCell;

use rustdds::{
    no_key, with_key, DomainParticipant, RTPSEntity, ReadCondition, Subscriber, Timestamp,
    Topic as DdsTopicHandle, TopicKind, GUID,
};

use super::qos::ReaderChoice;
use super::raw::{CdrCopy, IntoHandoff, PassThrough, RawSample};
use crate::handoff::{now_ns, Sender};
use crate::source::Held;
use crate::throttle::Throttle;

/// The history every reader starts with, and its least.
pub(super) const MIN_DEPTH: i32 = 64;
/// The deepest history: 1.6 s at 10 kHz. rustdds copies samples older than 5 s into
/// fresh memory, which a deeper history would make it do for every sample.
pub(super) const MAX_DEPTH: i32 = 16_384;

/// The history that holds `reader_memory` bytes of samples of `largest` bytes.
pub(super) fn depth_for(reader_memory: u64, largest: usize) -> i32 {
    let samples = reader_memory / (largest.max(1) as u64);
    samples.clamp(MIN_DEPTH as u64, MAX_DEPTH as u64) as i32
}

/// One sample taken from a reader: where its bytes went, and who sent it when.
pub(super) struct Taken {
    pub sample: RawSample,
    pub writer: GUID,
    pub sequence: i64,
    pub source_time: Option<Timestamp>,
}

/// A reader of raw samples; keyed writers are only matched by keyed readers.
pub(super) enum Reader {
    /// rustdds' plain reader: each sample is decoded straight into the handoff.
    NoKey(no_key::SimpleDataReader<RawSample, PassThrough>),
    /// rustdds' full reader (its plain one is not public for keyed topics).
    Keyed(with_key::DataReader<RawSample, PassThrough>),
}

impl Reader {
    /// Takes every sample waiting, in order, and gives each to `each` together with the
    /// handoff (small samples of no-key topics are already staged in it) and its receive
    /// time. A sample `throttle` does not keep comes as [`RawSample::Filtered`]; a no-key
    /// topic's is never copied.
    pub fn take_all(
        &mut self,
        tx: &mut Sender<Held>,
        zero_copy_threshold: usize,
        throttle: &mut Option<Throttle>,
        mut each: impl FnMut(&mut Sender<Held>, Taken, u64),
    ) -> Result<(), String> {
        match self {
            Reader::NoKey(reader) => {
                reader.drain_read_notifications();
                loop {
                    // Decided before the take, so that the decoder copies only what is kept.
                    let at = now_ns();
                    let keep = throttle.as_ref().is_none_or(|t| t.would_keep(at));
                    let staging = RefCell::new(&mut *tx);
                    let decoder = IntoHandoff {
                        tx: &staging,
                        zero_copy_threshold,
                        keep,
                    };
                    // `None` also after a dispose or unregister, which carry no message:
                    // the samples after it are taken at the next event or sweep.
                    let Some(change) = reader
                        .try_take_one_with(decoder)
                        .map_err(|e| e.to_string())?
                    else {
                        return Ok(());
                    };
                    if let Some(throttle) = throttle {
                        throttle.note(at, keep);
                    }
                    let taken = Taken {
                        source_time: change.source_timestamp(),
                        writer: change.writer_guid(),
                        sequence: i64::from(change.sequence_number),
                        sample: change.into_value(),
                    };
                    each(tx, taken, at);
                }
            }
            Reader::Keyed(reader) => take_keyed(reader, |taken| {
                let at = now_ns();
                each(tx, throttled(throttle, taken, at), at)
            }),
        }
    }

    /// Takes every sample waiting, in order, each into a buffer of its own, for a topic
    /// no receive thread takes yet (one held while its type is asked).
    pub fn take_owned(&mut self, mut each: impl FnMut(Taken)) -> Result<(), String> {
        match self {
            Reader::NoKey(reader) => {
                reader.drain_read_notifications();
                while let Some(change) = reader
                    .try_take_one_with(CdrCopy)
                    .map_err(|e| e.to_string())?
                {
                    each(Taken {
                        source_time: change.source_timestamp(),
                        writer: change.writer_guid(),
                        sequence: i64::from(change.sequence_number),
                        sample: change.into_value(),
                    });
                }
                Ok(())
            }
            Reader::Keyed(reader) => take_keyed(reader, each),
        }
    }

    pub fn guid(&self) -> GUID {
        match self {
            Reader::NoKey(reader) => reader.guid(),
            Reader::Keyed(reader) => reader.guid(),
        }
    }

    pub fn keyed(&self) -> bool {
        matches!(self, Reader::Keyed(_))
    }

    pub fn source(&mut self) -> &mut dyn rustdds::mio1::event::Source {
        match self {
            Reader::NoKey(reader) => reader,
            Reader::Keyed(reader) => reader,
        }
    }
}

/// `taken` as `throttle` lets it be recorded at `at`: filtered when not kept (its bytes
/// copied already, unlike a no-key sample's, whose decoder is told beforehand).
pub(super) fn throttled(throttle: &mut Option<Throttle>, mut taken: Taken, at: u64) -> Taken {
    if throttle.as_mut().is_some_and(|t| !t.keeps(at)) {
        taken.sample = RawSample::Filtered;
    }
    taken
}

/// Takes every sample waiting in a keyed reader, in order, and gives each to `each`;
/// disposes and unregisters, which carry no message, are passed over.
pub(super) fn take_keyed(
    reader: &mut with_key::DataReader<RawSample, PassThrough>,
    mut each: impl FnMut(Taken),
) -> Result<(), String> {
    loop {
        // One take for all: each take scans rustdds' whole local cache.
        let samples = reader
            .take(usize::MAX, ReadCondition::not_read())
            .map_err(|e| e.to_string())?;
        if samples.is_empty() {
            return Ok(());
        }
        for sample in samples {
            let info = sample.sample_info();
            let identity = info.sample_identity();
            let (writer, sequence, source_time) = (
                identity.writer_guid,
                i64::from(identity.sequence_number),
                info.source_timestamp(),
            );
            if let Some(raw) = sample.into_value().value() {
                each(Taken {
                    sample: raw,
                    writer,
                    sequence,
                    source_time,
                });
            }
        }
    }
}

/// A topic as its readers see it.
pub(super) struct TopicShape<'a> {
    pub name: &'a str,
    pub type_name: &'a str,
    pub keyed: bool,
    pub choice: ReaderChoice,
}

/// A reader of raw samples of a topic with a history of `depth` samples.
pub(super) fn new_reader(
    participant: &DomainParticipant,
    subscriber: &Subscriber,
    shape: &TopicShape,
    depth: i32,
) -> Result<Reader, String> {
    let qos = shape.choice.policies(depth);
    let topic = declare_topic(participant, shape, depth)
        .map_err(|e| format!("cannot create the DDS topic: {e}"))?;
    Ok(if shape.keyed {
        Reader::Keyed(
            subscriber
                .create_datareader::<RawSample, PassThrough>(&topic, Some(qos))
                .map_err(|e| format!("cannot create a DDS reader: {e}"))?,
        )
    } else {
        Reader::NoKey(
            subscriber
                .create_simple_datareader_no_key::<RawSample, PassThrough>(&topic, Some(qos))
                .map_err(|e| format!("cannot create a DDS reader: {e}"))?,
        )
    })
}

/// Declares a topic with a history of `depth` samples. Declaring it again with larger
/// limits raises those of rustdds' cache, which every reader of the topic shares.
pub(super) fn declare_topic(
    participant: &DomainParticipant,
    shape: &TopicShape,
    depth: i32,
) -> Result<DdsTopicHandle, String> {
    participant
        .create_topic(
            shape.name.to_string(),
            shape.type_name.to_string(),
            &shape.choice.policies(depth),
            topic_kind(shape.keyed),
        )
        .map_err(|e| e.to_string())
}

fn topic_kind(keyed: bool) -> TopicKind {
    if keyed {
        TopicKind::WithKey
    } else {
        TopicKind::NoKey
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_history_holds_the_reader_memory_within_its_bounds() {
        let memory = 32 << 20;
        assert_eq!(depth_for(memory, 100), MAX_DEPTH, "10 kHz × 100 B: 1.6 s");
        assert_eq!(depth_for(memory, 64 << 10), 512, "1 kHz × 64 KiB: 0.5 s");
        assert_eq!(depth_for(memory, 1 << 20), MIN_DEPTH, "60 Hz × 1 MiB: 1 s");
        assert_eq!(depth_for(memory, 0), MAX_DEPTH);
    }
}
