//! A bare reader of one DDS topic: the DDS source's participant, QoS, reader, history
//! sizing, way of taking samples and pace of receive passes, without the recorder around
//! them (no handoff, no writer, no file). Samples are taken and dropped. It is the
//! reference `recd-e2e ddsperf` measures the recorder against: what recd costs beyond it
//! is recd's own, what it costs is rustdds'.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use rustdds::mio1::{Events, Interest, Poll, Token};
use rustdds::{
    DomainParticipant, DomainParticipantStatusEvent, DomainParticipantStatusListener,
    QosPolicyBuilder, StatusEvented, Subscriber, GUID,
};

use super::qos::ReaderChoice;
use super::raw::RawSample;
use super::reader::{
    declare_topic, depth_for, new_reader, take_keyed, Reader, Taken, TopicShape, MIN_DEPTH,
};
use super::writers::keyed_writer;
use super::{dds_participant, DdsError, GATHER_TIME, STATUS, SWEEP_INTERVAL};
use crate::config::DdsConfig;
use crate::source::SequenceGaps;

/// The reader's event token.
const READER: Token = Token(0);

/// What a [`BareDdsReader`] took.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct BareCounts {
    /// Samples taken.
    pub received: u64,
    /// Samples missing between those taken, by the writers' sequence numbers.
    pub lost: u64,
    /// Bytes of serialized CDR taken (encapsulation headers included).
    pub bytes: u64,
    /// Samples the writers had sent before the first one taken from each (a volatile
    /// reader is not sent what was written before it matched): with `received` and
    /// `lost`, all that the writers sent.
    pub before_first: u64,
}

/// The reader once a writer of its topic was discovered.
struct Matched {
    reader: Reader,
    type_name: String,
    choice: ReaderChoice,
    depth: i32,
    largest: usize,
    gaps: SequenceGaps<GUID>,
    /// The writers a sample was taken from.
    writers: Vec<GUID>,
}

/// One DDS topic read the way the recorder's DDS source reads it, and nothing else.
pub struct BareDdsReader {
    participant: DomainParticipant,
    subscriber: Subscriber,
    status: DomainParticipantStatusListener,
    poll: Poll,
    reader_memory: u64,
    topic: String,
    matched: Option<Matched>,
    counts: BareCounts,
}

impl BareDdsReader {
    /// Joins `config`'s domain as the DDS source does (its interfaces, socket buffers
    /// and `reader_memory`; message directories are not used) to read the DDS topic
    /// named `topic` once a writer of it is discovered.
    pub fn open(config: &DdsConfig, topic: &str) -> Result<Self, DdsError> {
        let participant = dds_participant(
            config.domain,
            &config.interfaces,
            Some(config.receive_buffer_bytes),
        )?;
        let subscriber = participant
            .create_subscriber(&QosPolicyBuilder::new().build())
            .map_err(|e| DdsError::Participant {
                domain: config.domain,
                reason: e.to_string(),
            })?;
        let mut status = participant.status_listener();
        let poll = Poll::new().map_err(DdsError::Poll)?;
        poll.registry()
            .register(&mut status, STATUS, Interest::READABLE)
            .map_err(DdsError::Poll)?;
        Ok(Self {
            participant,
            subscriber,
            status,
            poll,
            reader_memory: config.reader_memory,
            topic: topic.to_string(),
            matched: None,
            counts: BareCounts::default(),
        })
    }

    /// Takes samples until `stop` is set (seen within [`SWEEP_INTERVAL`]), then takes
    /// what is left and returns the counts.
    pub fn run(mut self, stop: &AtomicBool) -> Result<BareCounts, String> {
        let mut events = Events::with_capacity(256);
        let mut next_sweep = Instant::now();
        loop {
            let stopping = stop.load(Ordering::Relaxed);
            self.discover()?;
            let now = Instant::now();
            let ready = events.iter().any(|event| event.token() == READER);
            let (mut taken, mut crowded) = (0, false);
            if stopping || now >= next_sweep || ready {
                if now >= next_sweep {
                    next_sweep = now + SWEEP_INTERVAL;
                }
                (taken, crowded) = self.drain()?;
            }
            if stopping {
                return Ok(self.counts);
            }
            if taken > 0 && !crowded {
                std::thread::sleep(GATHER_TIME);
            }
            let wait = next_sweep.saturating_duration_since(Instant::now());
            if let Err(error) = self.poll.poll(&mut events, Some(wait)) {
                if error.kind() != std::io::ErrorKind::Interrupted {
                    return Err(format!("waiting for DDS samples: {error}"));
                }
            }
        }
    }

    /// Creates the reader when discovery reports the topic's first writer.
    fn discover(&mut self) -> Result<(), String> {
        while let Some(event) = self.status.try_recv_status() {
            let DomainParticipantStatusEvent::WriterDetected { writer } = event else {
                continue;
            };
            if self.matched.is_some() || writer.topic_name != self.topic {
                continue;
            }
            let choice = ReaderChoice::for_offers([&writer.qos]);
            let shape = TopicShape {
                name: &self.topic,
                type_name: &writer.type_name,
                keyed: keyed_writer(writer.guid),
                choice,
            };
            let mut reader = new_reader(&self.participant, &self.subscriber, &shape, MIN_DEPTH)?;
            self.poll
                .registry()
                .register(reader.source(), READER, Interest::READABLE)
                .map_err(|e| format!("cannot wait on the DDS reader: {e}"))?;
            self.matched = Some(Matched {
                reader,
                type_name: writer.type_name,
                choice,
                depth: MIN_DEPTH,
                largest: 0,
                gaps: SequenceGaps::default(),
                writers: Vec::new(),
            });
        }
        Ok(())
    }

    /// Takes every sample waiting and drops it; returns how many, and whether the
    /// history was filled beyond a quarter (the DDS source's test for a burst).
    fn drain(&mut self) -> Result<(u64, bool), String> {
        let Some(matched) = &mut self.matched else {
            return Ok((0, false));
        };
        let counts = &mut self.counts;
        let mut taken = 0;
        let (gaps, largest, writers) = (
            &mut matched.gaps,
            &mut matched.largest,
            &mut matched.writers,
        );
        let mut count = |sample: Taken| {
            taken += 1;
            let len = match &sample.sample {
                RawSample::Heap(cdr) => cdr.len(),
                RawSample::Staged { len } => *len,
                RawSample::Dropped | RawSample::Filtered => 0,
            };
            *largest = (*largest).max(len);
            counts.received += 1;
            counts.bytes += len as u64;
            let sequence = u64::try_from(sample.sequence).unwrap_or(0);
            if !writers.contains(&sample.writer) {
                writers.push(sample.writer);
                counts.before_first += sequence.saturating_sub(1);
            }
            counts.lost += gaps.track(sample.writer, sequence);
        };
        match &mut matched.reader {
            Reader::Keyed(reader) => take_keyed(reader, &mut count)?,
            // rustdds' default decoder (a buffer of its own per sample) where the source
            // copies into its handoff instead.
            Reader::NoKey(reader) => {
                reader.drain_read_notifications();
                while let Some(change) = reader.try_take_one().map_err(|e| e.to_string())? {
                    count(Taken {
                        source_time: change.source_timestamp(),
                        writer: change.writer_guid(),
                        sequence: i64::from(change.sequence_number),
                        sample: change.into_value(),
                    });
                }
            }
        }
        if taken == 0 {
            return Ok((0, false));
        }
        let crowded = taken * 4 >= matched.depth as u64;
        let depth = depth_for(self.reader_memory, matched.largest);
        if depth > matched.depth {
            let shape = TopicShape {
                name: &self.topic,
                type_name: &matched.type_name,
                keyed: matched.reader.keyed(),
                choice: matched.choice,
            };
            declare_topic(&self.participant, &shape, depth)?;
            matched.depth = depth;
        }
        Ok((taken, crowded))
    }
}
