//! The DDS receive thread: one participant and subscriber, a reader per recorded topic,
//! one loop that waits on all of them.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use rustdds::discovery::DiscoveredWriterData;
use rustdds::mio1::{Events, Interest, Poll, Token, Waker};
use rustdds::{
    no_key, with_key, DomainParticipant, DomainParticipantBuilder, DomainParticipantStatusEvent,
    DomainParticipantStatusListener, QosPolicies, QosPolicyBuilder, RTPSEntity, SampleInfo,
    StatusEvented, Subscriber, Timestamp, TopicKind, GUID,
};

use recd_ros2::msgdef::MessageDefinitions;
use recd_ros2::names;

use super::channel::{channel_spec, Definitions, Naming, Offer};
use super::qos::ReaderChoice;
use super::raw::{PassThrough, RawSample};
use crate::config::DdsConfig;
use crate::handoff::{Item, Sender, Stamps};
use crate::held::Held;
use crate::select::TopicFilter;
use crate::shm::now_ns;
use crate::state::SourceState;
use crate::topic::{Topic, TopicCounters};

/// Settings of the DDS source.
pub(crate) struct DdsSettings {
    pub config: DdsConfig,
    pub filter: TopicFilter,
    pub zero_copy_threshold: usize,
    pub discovery_interval: Duration,
}

/// Why the DDS source could not start.
#[derive(Debug, thiserror::Error)]
pub enum DdsError {
    /// The domain id is out of DDS's range.
    #[error("DDS domain {0} is out of range (0 to 232)")]
    Domain(u16),
    /// rustdds could not create the participant (no usable interface, ports taken, ...).
    #[error("cannot join DDS domain {domain}: {reason}")]
    Participant {
        /// The domain.
        domain: u16,
        /// rustdds' reason.
        reason: String,
    },
    /// The event loop could not be set up.
    #[error("cannot set up the DDS receive loop: {0}")]
    Poll(std::io::Error),
}

/// Highest domain id RTPS' port mapping allows.
const MAX_DOMAIN: u16 = 232;
/// The participant's status events.
const STATUS: Token = Token(usize::MAX);
/// A stop request.
const WAKE: Token = Token(usize::MAX - 1);
/// How often every reader is drained even without a readiness event (a safety net: the
/// readers' events are edge-triggered).
const SWEEP_INTERVAL: Duration = Duration::from_millis(100);
/// After a pass that took samples, how long the thread lets the next ones gather before
/// it looks again: a busy topic's samples are then taken in batches instead of one
/// wake-up each (the readers' history holds them meanwhile). Only while no reader's
/// history filled beyond a quarter in the pass, so that a burst is taken at once.
const GATHER_TIME: Duration = Duration::from_millis(1);

/// A reader of raw samples; keyed writers are only matched by keyed readers.
enum Reader {
    NoKey(no_key::DataReader<RawSample, PassThrough>),
    Keyed(with_key::DataReader<RawSample, PassThrough>),
}

impl Reader {
    /// The next sample: its CDR (`None` for a dispose or unregister) and its info.
    fn take(&mut self) -> Result<Option<(Option<RawSample>, SampleInfo)>, String> {
        match self {
            Reader::NoKey(reader) => reader
                .take_next_sample()
                .map(|sample| {
                    sample.map(|sample| {
                        let info = sample.sample_info().clone();
                        (Some(sample.into_value()), info)
                    })
                })
                .map_err(|e| e.to_string()),
            Reader::Keyed(reader) => reader
                .take_next_sample()
                .map(|sample| {
                    sample.map(|sample| {
                        let info = sample.sample_info().clone();
                        (sample.into_value().value(), info)
                    })
                })
                .map_err(|e| e.to_string()),
        }
    }

    fn guid(&self) -> GUID {
        match self {
            Reader::NoKey(reader) => reader.guid(),
            Reader::Keyed(reader) => reader.guid(),
        }
    }

    fn source(&mut self) -> &mut dyn rustdds::mio1::event::Source {
        match self {
            Reader::NoKey(reader) => reader,
            Reader::Keyed(reader) => reader,
        }
    }
}

/// A recorded DDS topic.
struct DdsTopic {
    topic: Arc<Topic>,
    dds_name: String,
    type_name: String,
    reader: Reader,
    choice: ReaderChoice,
    /// The writers known to be alive, with what they offer.
    writers: HashMap<GUID, QosPolicies>,
    /// Each writer's last sequence number, to count gaps.
    last_sequence: HashMap<GUID, i64>,
    announced: bool,
}

/// A writer as discovery describes it.
struct WriterSeen {
    guid: GUID,
    topic: String,
    type_name: String,
    qos: QosPolicies,
    user_data: Vec<u8>,
}

/// Stops the DDS thread from another thread.
pub(crate) struct DdsStopper {
    waker: Waker,
}

impl DdsStopper {
    /// Wakes the receive loop so that it sees the stop flag at once.
    pub fn wake(&self) {
        let _ = self.waker.wake();
    }
}

/// The DDS receive thread.
pub(crate) struct DdsSource {
    participant: DomainParticipant,
    subscriber: Subscriber,
    status: DomainParticipantStatusListener,
    poll: Poll,
    settings: DdsSettings,
    definitions: Definitions,
    tx: Sender<Held>,
    state: Arc<SourceState>,
    stop: Arc<AtomicBool>,
    topics: Vec<DdsTopic>,
    /// Every writer seen: the topic it writes to, or `None` when not recorded.
    writers: HashMap<GUID, Option<usize>>,
    pending_retire: Vec<u32>,
}

impl DdsSource {
    /// Joins the domain; the receive loop starts with [`DdsSource::run`].
    pub fn open(
        settings: DdsSettings,
        tx: Sender<Held>,
        state: Arc<SourceState>,
        stop: Arc<AtomicBool>,
    ) -> Result<(Self, DdsStopper), DdsError> {
        let config = &settings.config;
        if config.domain > MAX_DOMAIN {
            return Err(DdsError::Domain(config.domain));
        }
        let participant_error = |reason: String| DdsError::Participant {
            domain: config.domain,
            reason,
        };
        let mut builder = DomainParticipantBuilder::new(config.domain)
            // Participants on this host are reached through loopback.
            .same_host_loopback(true)
            .socket_receive_buffer_size(config.receive_buffer_bytes);
        if !config.interfaces.is_empty() {
            builder = builder.with_only_networks(config.interfaces.iter().copied());
        }
        let participant = builder
            .build()
            .map_err(|e| participant_error(e.to_string()))?;
        let subscriber = participant
            .create_subscriber(&QosPolicyBuilder::new().build())
            .map_err(|e| participant_error(e.to_string()))?;
        let mut status = participant.status_listener();
        let poll = Poll::new().map_err(DdsError::Poll)?;
        poll.registry()
            .register(&mut status, STATUS, Interest::READABLE)
            .map_err(DdsError::Poll)?;
        let waker = Waker::new(poll.registry(), WAKE).map_err(DdsError::Poll)?;
        let definitions = Definitions::new(MessageDefinitions::with_ament_prefix_path(
            config.message_dirs.clone(),
        ));
        Ok((
            Self {
                participant,
                subscriber,
                status,
                poll,
                settings,
                definitions,
                tx,
                state,
                stop,
                topics: Vec::new(),
                writers: HashMap::new(),
                pending_retire: Vec::new(),
            },
            DdsStopper { waker },
        ))
    }

    /// Names the thread to wake after handing something over.
    pub fn set_consumer_thread(&mut self, thread: std::thread::Thread) {
        self.tx.set_consumer_thread(thread);
    }

    /// Receives until asked to stop, then hands over the last samples and the stop mark.
    pub fn run(mut self) {
        let mut events = Events::with_capacity(256);
        let mut next_discovery = Instant::now();
        let mut next_sweep = Instant::now();
        loop {
            let stopping = self.stop.load(Ordering::Acquire);
            let now = Instant::now();
            if now >= next_discovery {
                // Events a listener created late has missed are in the snapshot.
                self.discover_snapshot();
                next_discovery = now + self.settings.discovery_interval;
            }
            self.status_events();
            self.announce_pending();
            let mut pass = Pass::default();
            if stopping || now >= next_sweep {
                next_sweep = now + SWEEP_INTERVAL;
                for slot in 0..self.topics.len() {
                    pass.add(self.drain(slot));
                }
            } else {
                for event in events.iter() {
                    if event.token().0 < self.topics.len() {
                        pass.add(self.drain(event.token().0));
                    }
                }
            }
            if pass.handed_over {
                self.tx.wake();
            }
            if stopping {
                break;
            }
            let depth = self.settings.config.history_depth.max(1) as u64;
            if pass.taken > 0 && pass.most_from_one_reader * 4 < depth {
                std::thread::sleep(GATHER_TIME);
            }
            let wait = next_sweep
                .min(next_discovery)
                .saturating_duration_since(Instant::now());
            if let Err(error) = self.poll.poll(&mut events, Some(wait)) {
                if error.kind() != std::io::ErrorKind::Interrupted {
                    self.state
                        .note_problem("(dds)", format!("waiting for DDS samples: {error}"));
                    std::thread::sleep(wait);
                }
            }
        }
        self.tx.push_stop();
    }

    fn status_events(&mut self) {
        // One snapshot of the discovered writers serves every new topic of the batch.
        let mut discovered: Option<Vec<DiscoveredWriterData>> = None;
        while let Some(event) = self.status.try_recv_status() {
            match event {
                DomainParticipantStatusEvent::WriterDetected { writer } => {
                    let discovered =
                        discovered.get_or_insert_with(|| self.participant.discovered_writers());
                    self.writer_seen(
                        WriterSeen {
                            guid: writer.guid,
                            topic: writer.topic_name,
                            type_name: writer.type_name,
                            qos: writer.qos,
                            user_data: writer.user_data,
                        },
                        discovered,
                    );
                }
                DomainParticipantStatusEvent::WriterLost { guid, .. } => self.writer_lost(guid),
                DomainParticipantStatusEvent::RemoteWriterQosIncompatible {
                    local_reader,
                    remote_writer,
                    offered_qos,
                    requested_qos,
                } => {
                    if let Some(Some(slot)) = self.writers.get(&remote_writer) {
                        let topic = &self.topics[*slot];
                        // A reader made anew for this writer reports on its predecessor.
                        if topic.reader.guid() != local_reader {
                            continue;
                        }
                        self.state.note_problem(
                            &topic.topic.service,
                            format!(
                                "a writer's QoS does not match the reader's: offered {}, requested {}",
                                describe_qos(&offered_qos),
                                describe_qos(&requested_qos)
                            ),
                        );
                    }
                }
                _ => {}
            }
        }
    }

    fn discover_snapshot(&mut self) {
        let discovered = self.participant.discovered_writers();
        for writer in &discovered {
            let publication = &writer.publication_topic_data;
            if self.writers.contains_key(&publication.key) {
                continue;
            }
            self.writer_seen(
                WriterSeen {
                    guid: publication.key,
                    topic: publication.topic_name.clone(),
                    type_name: publication.type_name.clone(),
                    qos: publication.qos(),
                    user_data: writer.user_data.clone(),
                },
                &discovered,
            );
        }
    }

    /// Starts recording the writer's topic, or adds the writer to its topic; `discovered`
    /// is what discovery knows of all writers.
    fn writer_seen(&mut self, writer: WriterSeen, discovered: &[DiscoveredWriterData]) {
        if self.writers.contains_key(&writer.guid) {
            return;
        }
        if !self.selected(&writer.topic, &writer.type_name) {
            self.writers.insert(writer.guid, None);
            return;
        }
        let known = self
            .topics
            .iter()
            .position(|t| t.dds_name == writer.topic && t.type_name == writer.type_name);
        let slot = match known {
            Some(slot) => {
                self.add_writer(slot, &writer);
                Some(slot)
            }
            None => self.add_topic(&writer, discovered),
        };
        self.writers.insert(writer.guid, slot);
    }

    fn selected(&self, dds_topic: &str, dds_type: &str) -> bool {
        if dds_topic.starts_with("DCPS") {
            return false;
        }
        let name = Naming::of(dds_topic, dds_type).channel;
        // ROS's internal topics are recorded only when an include pattern selects them.
        if names::is_internal(dds_topic) && !self.settings.filter.has_include_patterns() {
            return false;
        }
        self.settings.filter.matches(&name)
    }

    /// A further writer on a recorded topic: the reader is made anew if it asks for more
    /// than the newcomer offers, as it would not match it otherwise.
    fn add_writer(&mut self, slot: usize, writer: &WriterSeen) {
        let topic = &mut self.topics[slot];
        topic.writers.insert(writer.guid, writer.qos.clone());
        let choice = ReaderChoice::for_offers(topic.writers.values());
        if choice == topic.choice {
            return;
        }
        let service = topic.topic.service.clone();
        match self.create_reader(
            slot,
            &writer.topic,
            &writer.type_name,
            topic_keyed(writer),
            choice,
        ) {
            Ok(reader) => {
                // What the old reader holds is recorded first; what its writers send
                // until the new reader matches them shows up as a sequence gap (lost).
                if self.drain(slot).handed_over {
                    self.tx.wake();
                }
                let topic = &mut self.topics[slot];
                let _ = self.poll.registry().deregister(topic.reader.source());
                topic.reader = reader;
                topic.choice = choice;
            }
            Err(reason) => self.state.note_problem(&service, reason),
        }
    }

    fn add_topic(
        &mut self,
        writer: &WriterSeen,
        discovered: &[DiscoveredWriterData],
    ) -> Option<usize> {
        let service = format!("dds:{}", writer.topic);
        let naming = Naming::of(&writer.topic, &writer.type_name);
        // Every writer of the topic known now describes the channel (rosbag2 does so too).
        let others: Vec<(QosPolicies, &[u8])> = discovered
            .iter()
            .filter(|w| {
                let p = &w.publication_topic_data;
                p.topic_name == writer.topic
                    && p.type_name == writer.type_name
                    && p.key != writer.guid
            })
            .map(|w| (w.publication_topic_data.qos(), w.user_data.as_slice()))
            .collect();
        let mut offers = vec![Offer {
            qos: &writer.qos,
            user_data: &writer.user_data,
        }];
        offers.extend(
            others
                .iter()
                .map(|(qos, user_data)| Offer { qos, user_data }),
        );
        let choice = ReaderChoice::for_offers(offers.iter().map(|o| o.qos));
        let slot = self.topics.len();
        let keyed = topic_keyed(writer);
        let reader = match self.create_reader(slot, &writer.topic, &writer.type_name, keyed, choice)
        {
            Ok(reader) => reader,
            Err(reason) => {
                self.state.note_problem(&service, reason);
                return None;
            }
        };
        let (channel, missing_definition) = channel_spec(&naming, &offers, &mut self.definitions);
        match missing_definition {
            Some(reason) => self.state.note_problem(
                &service,
                format!("recorded without a message definition: {reason}"),
            ),
            None => self.state.clear_problem(&service),
        }
        let topic = self.state.add_topic(|index| Topic {
            index,
            name: naming.channel.clone(),
            service,
            channel,
            latched: choice.transient_local,
            counters: TopicCounters::default(),
        });
        let announced = self.tx.push_control(Item::Announce(topic.clone())).is_ok();
        self.topics.push(DdsTopic {
            topic,
            dds_name: writer.topic.clone(),
            type_name: writer.type_name.clone(),
            reader,
            choice,
            writers: HashMap::from([(writer.guid, writer.qos.clone())]),
            last_sequence: HashMap::new(),
            announced,
        });
        Some(slot)
    }

    fn create_reader(
        &mut self,
        slot: usize,
        topic_name: &str,
        type_name: &str,
        keyed: bool,
        choice: ReaderChoice,
    ) -> Result<Reader, String> {
        let qos = choice.policies(self.settings.config.history_depth.max(1));
        let kind = if keyed {
            TopicKind::WithKey
        } else {
            TopicKind::NoKey
        };
        let topic = self
            .participant
            .create_topic(topic_name.to_string(), type_name.to_string(), &qos, kind)
            .map_err(|e| format!("cannot create the DDS topic: {e}"))?;
        let mut reader = if keyed {
            Reader::Keyed(
                self.subscriber
                    .create_datareader::<RawSample, PassThrough>(&topic, Some(qos))
                    .map_err(|e| format!("cannot create a DDS reader: {e}"))?,
            )
        } else {
            Reader::NoKey(
                self.subscriber
                    .create_datareader_no_key::<RawSample, PassThrough>(&topic, Some(qos))
                    .map_err(|e| format!("cannot create a DDS reader: {e}"))?,
            )
        };
        self.poll
            .registry()
            .register(reader.source(), Token(slot), Interest::READABLE)
            .map_err(|e| format!("cannot wait on the DDS reader: {e}"))?;
        Ok(reader)
    }

    fn writer_lost(&mut self, guid: GUID) {
        let Some(Some(slot)) = self.writers.remove(&guid) else {
            return;
        };
        let topic = &mut self.topics[slot];
        topic.writers.remove(&guid);
        topic.last_sequence.remove(&guid);
        if topic.writers.is_empty() && topic.announced {
            // What is still in the reader belongs to the file before the topic retires.
            self.drain(slot);
            self.pending_retire.push(self.topics[slot].topic.index);
        }
    }

    fn announce_pending(&mut self) {
        for topic in self.topics.iter_mut().filter(|t| !t.announced) {
            topic.announced = self
                .tx
                .push_control(Item::Announce(topic.topic.clone()))
                .is_ok();
        }
        self.pending_retire
            .retain(|&index| self.tx.push_control(Item::Retire(index)).is_err());
    }

    /// Takes every sample waiting in a topic's reader.
    fn drain(&mut self, slot: usize) -> Drained {
        let threshold = self.settings.zero_copy_threshold;
        let topic = &mut self.topics[slot];
        if !topic.announced {
            return Drained::default();
        }
        let counters = &topic.topic.counters;
        let index = topic.topic.index;
        let mut drained = Drained::default();
        loop {
            let (raw, info) = match topic.reader.take() {
                Ok(Some((Some(raw), info))) => (raw, info),
                // A dispose or unregister carries no message.
                Ok(Some((None, _))) => continue,
                Ok(None) => break,
                Err(reason) => {
                    self.state.note_problem(
                        &topic.topic.service,
                        format!("cannot take a sample: {reason}"),
                    );
                    break;
                }
            };
            counters.add_received();
            drained.taken += 1;
            let log_time = now_ns();
            let stamps = Stamps {
                log_time,
                // Samples that came in fragments may lack a source timestamp.
                publish_time: info.source_timestamp().map_or(log_time, unix_ns),
            };
            let identity = info.sample_identity();
            let sequence = i64::from(identity.sequence_number);
            let lost = track_sequence(&mut topic.last_sequence, identity.writer_guid, sequence);
            if lost > 0 {
                counters.add_lost(lost);
            }
            let len = raw.cdr.len();
            let pushed = if len >= threshold {
                self.tx
                    .push_loaned(index, stamps, len, Held::Dds(raw.cdr))
                    .is_ok()
            } else {
                self.tx.push_copied(index, stamps, &[&raw.cdr])
            };
            if pushed {
                drained.handed_over = true;
            } else {
                counters.add_dropped();
            }
        }
        drained
    }
}

/// What draining one reader did.
#[derive(Default)]
struct Drained {
    taken: u64,
    handed_over: bool,
}

/// What one pass over the readers did.
#[derive(Default)]
struct Pass {
    taken: u64,
    most_from_one_reader: u64,
    handed_over: bool,
}

impl Pass {
    fn add(&mut self, drained: Drained) {
        self.taken += drained.taken;
        self.most_from_one_reader = self.most_from_one_reader.max(drained.taken);
        self.handed_over |= drained.handed_over;
    }
}

/// The policies that decide matching, briefly.
fn describe_qos(qos: &QosPolicies) -> String {
    format!(
        "reliability {:?}, durability {:?}, data representation {:?}",
        qos.reliability(),
        qos.durability(),
        qos.data_representation().map(|r| r.value)
    )
}

/// Whether a writer's topic is keyed: the entity kind, the GUID's last byte, says so
/// (0x02 writer with key, 0x03 writer without).
fn topic_keyed(writer: &WriterSeen) -> bool {
    writer.guid.to_bytes()[15] == 0x02
}

/// Remembers the writer's latest sequence number; returns how many it skipped.
fn track_sequence(last: &mut HashMap<GUID, i64>, writer: GUID, sequence: i64) -> u64 {
    match last.insert(writer, sequence) {
        Some(previous) if sequence > previous => (sequence - previous - 1) as u64,
        Some(previous) => {
            // Out of order or repeated: keep the highest.
            last.insert(writer, previous);
            0
        }
        // Samples written before the recorder matched were never its to lose.
        None => 0,
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

    #[test]
    fn sequence_gaps_count_as_lost() {
        let writer = GUID::from_bytes([7; 16]);
        let mut last = HashMap::new();
        assert_eq!(track_sequence(&mut last, writer, 5), 0);
        assert_eq!(track_sequence(&mut last, writer, 6), 0);
        assert_eq!(track_sequence(&mut last, writer, 9), 2);
        assert_eq!(track_sequence(&mut last, writer, 8), 0);
        assert_eq!(track_sequence(&mut last, writer, 10), 0);
    }
}
