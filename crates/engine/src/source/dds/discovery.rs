//! Which DDS topics to record and with what reader: writers as discovery reports them,
//! a reader made anew when a newcomer would not match it, topics retired when their last
//! writer leaves.

use std::collections::HashMap;

use rustdds::discovery::DiscoveredWriterData;
use rustdds::{DomainParticipantStatusEvent, QosPolicies, StatusEvented, GUID};

use recd_ros2::names::{self, Interface};

use super::channel::{channel_spec, Naming, Offer};
use super::qos::ReaderChoice;
use super::reader::{DdsTopic, TopicShape, MIN_DEPTH};
use super::DdsSource;
use crate::source::{announce, conclude_change, SequenceGaps};
use crate::topic::{Topic, TopicCounters};

/// A writer as discovery describes it.
struct WriterSeen {
    guid: GUID,
    topic: String,
    type_name: String,
    qos: QosPolicies,
    user_data: Vec<u8>,
}

impl DdsSource {
    pub(super) fn status_events(&mut self) {
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
                        if topic.reader.as_ref().map(|reader| reader.guid()) != Some(local_reader) {
                            continue;
                        }
                        self.link.registry.note_problem(
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

    pub(super) fn discover_snapshot(&mut self) {
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
        let naming = Naming::of(dds_topic, dds_type);
        let filter = &self.settings.common.filter;
        // ROS's internal topics are recorded only when an include pattern selects them.
        if names::is_internal(dds_topic) && !filter.has_include_patterns() {
            return false;
        }
        // A plain DDS topic (no ROS name or type) is a topic to `interface_of` too.
        match names::interface_of(&naming.channel, &naming.schema) {
            Interface::Topic => {
                filter.matches(&naming.channel) && filter.matches_type(&naming.schema)
            }
            Interface::Service { service } => filter.matches_service(&service),
            Interface::Action { action, .. } => filter.matches_action(&action),
        }
    }

    /// Takes a change of the selection, if one is pending: each topic no longer selected
    /// is received one last time, its reader dropped and the topic ended; a marker
    /// stamped with that moment follows them; then the writers discovery knows are looked
    /// at again, so that topics added open after it.
    pub(super) fn take_selection_change(&mut self) {
        let Some(change) = self.link.selection.pending() else {
            return;
        };
        self.settings.common.filter = change.filter.clone();
        for slot in 0..self.topics.len() {
            let topic = &self.topics[slot];
            if topic.reader.is_none() || self.selected(&topic.dds_name, &topic.type_name) {
                continue;
            }
            self.drain(slot);
            let topic = &mut self.topics[slot];
            if let Some(mut reader) = topic.reader.take() {
                let _ = self.poll.registry().deregister(reader.source());
            }
            for guid in topic.writers.keys() {
                self.writers.remove(guid);
            }
            topic.writers.clear();
            topic.recorded = std::mem::take(&mut topic.gaps);
            topic.topic.counters.set_publishers(0);
            if topic.announced {
                topic.announced = false;
                self.retirements.unselect(topic.topic.index);
            }
        }
        // Writers of topics not selected before are looked at again.
        self.writers.retain(|_, slot| slot.is_some());
        conclude_change(&mut self.retirements, &mut self.link, change);
        self.discover_snapshot();
    }

    /// A further writer on a recorded topic: the reader is made anew if it asks for more
    /// than the newcomer offers, as it would not match it otherwise. A topic selected
    /// again after `rec topics-set` removed it gets a reader (and is announced again, to
    /// the same channel).
    fn add_writer(&mut self, slot: usize, writer: &WriterSeen) {
        let topic = &mut self.topics[slot];
        topic.writers.insert(writer.guid, writer.qos.clone());
        topic.topic.counters.set_publishers(topic.writers.len());
        let choice = ReaderChoice::for_offers(topic.writers.values());
        if topic.reader.is_some() && choice == topic.choice {
            return;
        }
        let service = topic.topic.service.clone();
        let depth = topic.depth;
        let shape = TopicShape {
            name: &writer.topic,
            type_name: &writer.type_name,
            keyed: keyed_writer(writer.guid),
            choice,
        };
        match self.create_reader(slot, &shape, depth) {
            Ok(reader) => {
                // What the old reader holds is recorded first; what its writers send
                // until the new reader matches them shows up as a sequence gap (lost).
                if self.drain(slot).handed_over {
                    self.link.tx.wake();
                }
                let topic = &mut self.topics[slot];
                if let Some(old) = topic.reader.as_mut() {
                    let _ = self.poll.registry().deregister(old.source());
                }
                topic.reader = Some(reader);
                topic.choice = choice;
            }
            Err(reason) => self.link.registry.note_problem(&service, reason),
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
        let keyed = keyed_writer(writer.guid);
        let shape = TopicShape {
            name: &writer.topic,
            type_name: &writer.type_name,
            keyed,
            choice,
        };
        let reader = match self.create_reader(slot, &shape, MIN_DEPTH) {
            Ok(reader) => reader,
            Err(reason) => {
                self.link.registry.note_problem(&service, reason);
                return None;
            }
        };
        let (channel, missing_definition) =
            channel_spec(&naming, keyed, &offers, &mut self.definitions);
        match missing_definition {
            Some(reason) => self.link.registry.note_problem(
                &service,
                format!("recorded without a message definition: {reason}"),
            ),
            None => self.link.registry.clear_problem(&service),
        }
        let topic = self.link.registry.add_topic(|index| Topic {
            index,
            name: naming.channel.clone(),
            service,
            channel,
            latched: choice.transient_local,
            counters: TopicCounters::default(),
            health: Default::default(),
        });
        topic.counters.set_publishers(1);
        let announced = announce(&mut self.link.tx, &topic);
        self.topics.push(DdsTopic {
            topic,
            dds_name: writer.topic.clone(),
            type_name: writer.type_name.clone(),
            reader: Some(reader),
            choice,
            depth: MIN_DEPTH,
            largest: 0,
            writers: HashMap::from([(writer.guid, writer.qos.clone())]),
            gaps: SequenceGaps::default(),
            recorded: SequenceGaps::default(),
            announced,
            throttle: self.settings.common.throttles.for_topic(&naming.channel),
        });
        Some(slot)
    }

    pub(super) fn writer_lost(&mut self, guid: GUID) {
        let Some(Some(slot)) = self.writers.remove(&guid) else {
            return;
        };
        let topic = &mut self.topics[slot];
        topic.writers.remove(&guid);
        topic.topic.counters.set_publishers(topic.writers.len());
        topic.gaps.forget(&guid);
        if topic.writers.is_empty() && topic.announced {
            // What is still in the reader belongs to the file before the topic retires.
            self.drain(slot);
            self.retirements.push(self.topics[slot].topic.index);
        }
    }

    pub(super) fn announce_pending(&mut self) {
        for topic in self.topics.iter_mut().filter(|t| !t.announced) {
            topic.announced = announce(&mut self.link.tx, &topic.topic);
        }
        self.retirements.send(&mut self.link.tx);
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
pub(super) fn keyed_writer(writer: GUID) -> bool {
    writer.to_bytes()[15] == 0x02
}
