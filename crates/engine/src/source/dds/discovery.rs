//! The DDS discovery thread: which topics to record and with what reader. Writers as
//! rustdds' discovery reports them, a reader made anew when a newcomer would not match
//! it, the receive thread told when a topic's writers leave.
//!
//! Creating a reader or declaring a topic takes rustdds' participant and discovery
//! database locks, which rustdds' own threads hold while they work; dropping a reader
//! waits up to 20 ms for rustdds' event loop; a new ROS 2 topic's message definition is
//! read from `.msg` files. All of it happens here, at normal priority: the real-time
//! receive thread only takes ready readers and gives back finished ones
//! ([`super::exchange`]). Readers are registered with the receive thread's poll here too,
//! under the token of their slot, and deregistered here before they are dropped.
//!
//! A new ROS 2 topic whose type no `.msg` file describes is held here while
//! [`super::fetch`]'s thread asks its node for the definition: its reader is made at once
//! and this thread takes its samples into memory as they come ([`held`]), and the topic
//! goes to the registry and the receive thread with them only when the answer or the
//! bound comes, so that its schema is in place before any of its messages is written, its
//! rules decode it, and its first samples are in the file.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use rustdds::discovery::DiscoveredWriterData;
use rustdds::mio1::{Events, Interest, Poll, Registry, Token};
use rustdds::{
    DomainParticipant, DomainParticipantStatusEvent, DomainParticipantStatusListener, QosPolicies,
    StatusEvented, Subscriber, GUID,
};

use recd_ros2::names::{self, Interface};

use super::channel::{channel_spec, offered_hash, Definitions, Naming, Offer};
use super::exchange::{Finished, Found, NewTopic, ReceiveLink};
use super::fetch::{prefix_of, Prefix, TypeFetcher};
use super::gathered::Early;
use super::qos::ReaderChoice;
use super::reader::{declare_topic, new_reader, Reader, TopicShape, MIN_DEPTH};
use super::writers::{keyed_writer, offers_of, topic_shape, HeldTopic, WriterSeen};
use crate::registry::TopicRegistry;
use crate::select::TopicFilter;
use crate::throttle::Throttles;
use crate::topic::{Topic, TopicCounters};

/// The name of the discovery thread.
pub(super) const THREAD_NAME: &str = "recd-dds-discovery";

/// A topic handed to the receive thread, as discovery keeps it.
struct KnownTopic {
    topic: Arc<Topic>,
    dds_name: String,
    type_name: String,
    keyed: bool,
    choice: ReaderChoice,
    /// The samples its history holds, as the receive thread asked.
    depth: i32,
    /// The reader the receive thread holds; none while the topic is not selected.
    reader: Option<GUID>,
    /// The writers known to be alive, with what they offer.
    writers: HashMap<GUID, QosPolicies>,
}

/// Where the discovery thread's readers come from and go to.
pub(super) struct DdsEndpoints {
    pub participant: DomainParticipant,
    pub subscriber: Subscriber,
    pub status: DomainParticipantStatusListener,
    /// The discovery thread's own poll: status events and its waker.
    pub poll: Poll,
    /// The receive thread's poll, where readers are registered.
    pub receive_registry: Registry,
    /// recd's participants in the domain (this one, the parameters' reader's): their
    /// writers are not recorded.
    pub ours: Vec<Prefix>,
}

/// What the discovery thread owns: the participant and the topics' discovery state.
pub(super) struct Discovery {
    endpoints: DdsEndpoints,
    filter: TopicFilter,
    throttles: Throttles,
    interval: Duration,
    definitions: Definitions,
    registry: Arc<TopicRegistry>,
    link: ReceiveLink,
    /// Every topic handed over, in slot order.
    topics: Vec<KnownTopic>,
    /// Every writer seen: the topic it writes to, or `None` when not recorded.
    writers: HashMap<GUID, Option<usize>>,
    /// Asks nodes for the definitions of types no `.msg` file has (none: never asks).
    fetcher: Option<TypeFetcher>,
    /// New topics waiting for their definition, in the order they came.
    held: Vec<HeldTopic>,
    /// The bytes a held topic may gather (the reader memory of a topic's history).
    gather_bound: usize,
}

impl Discovery {
    /// The discovery of a source recording what `filter` selects with `throttles`,
    /// looking at every writer each `interval`.
    pub fn new(
        endpoints: DdsEndpoints,
        settings: &super::DdsSettings,
        (definitions, fetcher): (Definitions, Option<TypeFetcher>),
        registry: Arc<TopicRegistry>,
        link: ReceiveLink,
    ) -> Self {
        Self {
            endpoints,
            filter: settings.common.filter.clone(),
            throttles: settings.common.throttles.clone(),
            interval: settings.common.discovery_interval,
            definitions,
            registry,
            link,
            topics: Vec::new(),
            writers: HashMap::new(),
            fetcher,
            held: Vec::new(),
            gather_bound: usize::try_from(settings.config.reader_memory).unwrap_or(usize::MAX),
        }
    }

    /// Follows discovery until the receive thread closes its end, then drops every
    /// reader given back and the participant.
    pub fn run(mut self) {
        let mut events = Events::with_capacity(16);
        let mut next_snapshot = Instant::now();
        loop {
            let (finished, receiving) = self.link.take_finished();
            finished.into_iter().for_each(|f| self.take_back(f));
            if !receiving {
                self.stop_holding();
                break;
            }
            let now = Instant::now();
            if now >= next_snapshot {
                // Events a listener created late has missed are in the snapshot.
                self.discover_snapshot();
                next_snapshot = now + self.interval;
            }
            self.status_events();
            self.gather_held();
            self.release_held();
            let wait = next_snapshot.saturating_duration_since(Instant::now());
            if let Err(error) = self.endpoints.poll.poll(&mut events, Some(wait)) {
                if error.kind() != std::io::ErrorKind::Interrupted {
                    self.registry
                        .note_problem("(dds)", format!("waiting for DDS discovery: {error}"));
                    std::thread::sleep(wait);
                }
            }
        }
    }

    /// Acts on what the receive thread gave back.
    fn take_back(&mut self, finished: Finished) {
        match finished {
            Finished::Reader(reader) => self.drop_reader(reader),
            Finished::Deepen { slot, depth } => self.deepen(slot, depth),
            Finished::Filter(filter) => self.change_filter(filter),
        }
    }

    /// Stops waking the receive thread for `reader`, then drops it.
    fn drop_reader(&mut self, mut reader: Reader) {
        let _ = self.endpoints.receive_registry.deregister(reader.source());
        drop(reader);
    }

    /// Raises the history of the topic in `slot` to `depth` samples.
    fn deepen(&mut self, slot: usize, depth: i32) {
        let Some(known) = self.topics.get_mut(slot) else {
            return;
        };
        if depth <= known.depth {
            return;
        }
        let shape = TopicShape {
            name: &known.dds_name,
            type_name: &known.type_name,
            keyed: known.keyed,
            choice: known.choice,
        };
        match declare_topic(&self.endpoints.participant, &shape, depth) {
            Ok(_) => known.depth = depth,
            Err(error) => self.registry.note_problem(
                &known.topic.service,
                format!("cannot deepen the DDS history: {error}"),
            ),
        }
    }

    /// Takes a new selection: the receive thread has given back the readers of topics it
    /// no longer selects; their writers are forgotten, and every writer known is looked
    /// at again, so that topics added get readers.
    fn change_filter(&mut self, filter: TopicFilter) {
        self.filter = filter;
        for known in &mut self.topics {
            if known.reader.is_none() || selected(&self.filter, &known.dds_name, &known.type_name) {
                continue;
            }
            known.reader = None;
            for guid in known.writers.keys() {
                self.writers.remove(guid);
            }
            known.writers.clear();
            known.topic.counters.set_publishers(0);
        }
        // Writers of topics not selected before are looked at again.
        self.writers.retain(|_, slot| slot.is_some());
        self.discover_snapshot();
    }

    fn status_events(&mut self) {
        // One snapshot of the discovered writers serves every new topic of the batch.
        let mut discovered: Option<Vec<DiscoveredWriterData>> = None;
        while let Some(event) = self.endpoints.status.try_recv_status() {
            match event {
                DomainParticipantStatusEvent::WriterDetected { writer } => {
                    let discovered = discovered
                        .get_or_insert_with(|| self.endpoints.participant.discovered_writers());
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
                        let known = &self.topics[*slot];
                        // A reader made anew for this writer reports on its predecessor.
                        if known.reader != Some(local_reader) {
                            continue;
                        }
                        self.registry.note_problem(
                            &known.topic.service,
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
        let discovered = self.endpoints.participant.discovered_writers();
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
        // recd's own ROS nodes (the types' and the parameters' clients) have writers too:
        // a /parameter_events writer each, transient-local as ros2-client makes it, which
        // would make the topic's reader transient-local and deaf to every real node's.
        let ours = self.endpoints.ours.contains(&prefix_of(writer.guid));
        if ours || !selected(&self.filter, &writer.topic, &writer.type_name) {
            self.writers.insert(writer.guid, None);
            return;
        }
        if let Some(held) = self.held.iter_mut().find(|held| {
            held.writer.topic == writer.topic && held.writer.type_name == writer.type_name
        }) {
            if held.writer.guid != writer.guid && held.more.iter().all(|w| w.guid != writer.guid) {
                held.more.push(writer);
            }
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

    /// A reader of `shape` for `slot`, registered with the receive thread's poll.
    fn create_reader(
        &mut self,
        slot: usize,
        shape: &TopicShape,
        depth: i32,
    ) -> Result<Reader, String> {
        let endpoints = &self.endpoints;
        let mut reader = new_reader(&endpoints.participant, &endpoints.subscriber, shape, depth)?;
        endpoints
            .receive_registry
            .register(reader.source(), Token(slot), Interest::READABLE)
            .map_err(|e| format!("cannot wait on the DDS reader: {e}"))?;
        Ok(reader)
    }

    /// A further writer on a recorded topic: the reader is made anew if it asks for more
    /// than the newcomer offers, as it would not match it otherwise. A topic selected
    /// again after `rec topics-set` removed it gets a reader (and is announced again, to
    /// the same channel).
    fn add_writer(&mut self, slot: usize, writer: &WriterSeen) {
        let known = &mut self.topics[slot];
        known.writers.insert(writer.guid, writer.qos.clone());
        known.topic.counters.set_publishers(known.writers.len());
        let choice = ReaderChoice::for_offers(known.writers.values());
        if known.reader.is_some() && choice == known.choice {
            return;
        }
        let service = known.topic.service.clone();
        let depth = known.depth;
        let shape = TopicShape {
            name: &writer.topic,
            type_name: &writer.type_name,
            keyed: keyed_writer(writer.guid),
            choice,
        };
        match self.create_reader(slot, &shape, depth) {
            Ok(reader) => {
                let guid = reader.guid();
                // The receive thread takes what the old reader holds first; what its
                // writers send until the new reader matches them shows up as a sequence
                // gap (lost).
                if self.link.hand(Found::Reader { slot, reader }) {
                    let known = &mut self.topics[slot];
                    known.reader = Some(guid);
                    known.choice = choice;
                }
            }
            Err(reason) => self.registry.note_problem(&service, reason),
        }
    }

    fn add_topic(
        &mut self,
        writer: &WriterSeen,
        discovered: &[DiscoveredWriterData],
    ) -> Option<usize> {
        // Every writer of the topic known now describes the channel (rosbag2 does so too).
        let others: Vec<(QosPolicies, Vec<u8>)> = discovered
            .iter()
            .filter(|w| {
                let p = &w.publication_topic_data;
                p.topic_name == writer.topic
                    && p.type_name == writer.type_name
                    && p.key != writer.guid
            })
            .map(|w| (w.publication_topic_data.qos(), w.user_data.clone()))
            .collect();
        let offers = offers_of(writer, &others);
        let hash = offered_hash(&offers);
        let naming = Naming::of(&writer.topic, &writer.type_name);
        if let (Some(hash), true) = (&hash, self.fetcher.is_some()) {
            if self.definitions.needs_fetch(&naming, Some(hash)) {
                self.hold(writer, others, hash.clone());
                return None;
            }
        }
        let slot = self.topics.len();
        let shape = topic_shape(writer, &offers);
        let reader = match self.create_reader(slot, &shape, MIN_DEPTH) {
            Ok(reader) => reader,
            Err(reason) => {
                self.registry
                    .note_problem(&format!("dds:{}", writer.topic), reason);
                return None;
            }
        };
        self.hand_topic(writer, &offers, reader, Vec::new())
    }

    /// Describes a new topic in the registry and hands it to the receive thread with its
    /// first reader, already registered under the next slot, and the samples gathered
    /// while it was held (none for a topic not held); that slot.
    fn hand_topic(
        &mut self,
        writer: &WriterSeen,
        offers: &[Offer<'_>],
        reader: Reader,
        early: Vec<Early>,
    ) -> Option<usize> {
        let shape = topic_shape(writer, offers);
        let (keyed, choice) = (shape.keyed, shape.choice);
        let topic = self.describe_topic(writer, offers, &shape);
        let guid = reader.guid();
        let handed = self.link.hand(Found::Topic(NewTopic {
            topic: topic.clone(),
            dds_name: writer.topic.clone(),
            type_name: writer.type_name.clone(),
            reader,
            throttle: self.throttles.for_topic(&topic.name),
            early,
        }));
        if !handed {
            return None;
        }
        let slot = self.topics.len();
        self.topics.push(KnownTopic {
            topic,
            dds_name: writer.topic.clone(),
            type_name: writer.type_name.clone(),
            keyed,
            choice,
            depth: MIN_DEPTH,
            reader: Some(guid),
            writers: HashMap::from([(writer.guid, writer.qos.clone())]),
        });
        Some(slot)
    }

    /// Adds `writer`'s topic to the registry, with its channel as `offers` (read as
    /// `shape`) describe it and what is known of its type; a topic without a definition
    /// says why.
    fn describe_topic(
        &mut self,
        writer: &WriterSeen,
        offers: &[Offer<'_>],
        shape: &TopicShape<'_>,
    ) -> Arc<Topic> {
        let service = format!("dds:{}", writer.topic);
        let naming = Naming::of(&writer.topic, &writer.type_name);
        let (channel, missing_definition) =
            channel_spec(&naming, shape.keyed, offers, &mut self.definitions);
        match missing_definition {
            Some(reason) => self.registry.note_problem(
                &service,
                format!("recorded without a message definition: {reason}"),
            ),
            None => self.registry.clear_problem(&service),
        }
        let topic = self.registry.add_topic(|index| Topic {
            index,
            name: naming.channel.clone(),
            service,
            channel,
            latched: shape.choice.transient_local,
            counters: TopicCounters::default(),
            health: Default::default(),
        });
        topic.counters.set_publishers(1);
        topic
    }

    fn writer_lost(&mut self, guid: GUID) {
        let Some(Some(slot)) = self.writers.remove(&guid) else {
            return;
        };
        let known = &mut self.topics[slot];
        known.writers.remove(&guid);
        known.topic.counters.set_publishers(known.writers.len());
        self.link.hand(Found::WriterLost {
            slot,
            writer: guid,
            last: known.writers.is_empty(),
        });
    }
}

/// Whether `filter` selects the DDS topic `dds_topic` of type `dds_type`.
pub(in crate::source) fn selected(filter: &TopicFilter, dds_topic: &str, dds_type: &str) -> bool {
    if dds_topic.starts_with("DCPS") || names::is_service_plumbing(dds_topic) {
        return false;
    }
    if dds_topic == names::PARAMETER_EVENTS && filter.records_parameter_events() {
        return true;
    }
    let naming = Naming::of(dds_topic, dds_type);
    // ROS's internal topics are recorded only when an include pattern selects them.
    if names::is_internal(dds_topic) && !filter.has_include_patterns() {
        return false;
    }
    // A plain DDS topic (no ROS name or type) is a topic to `interface_of` too.
    match names::interface_of(&naming.channel, &naming.schema) {
        Interface::Topic => filter.matches(&naming.channel) && filter.matches_type(&naming.schema),
        Interface::Service { service } => filter.matches_service(&service),
        Interface::Action { action, .. } => filter.matches_action(&action),
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

mod held;
#[cfg(test)]
mod tests;
