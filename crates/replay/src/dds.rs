//! Playing DDS / ROS 2 channels: each goes to a rustdds writer on the topic's DDS name
//! with the recorded type name, keyedness and QoS (reliable and transient-local only when
//! every recorded writer was), and each message leaves as the CDR it was recorded as, its
//! encapsulation (XCDR1 or XCDR2, byte order) kept.
//!
//! rustdds puts the encapsulation header in front of what a serializer adapter returns,
//! taking the representation from the adapter's type; so there is one adapter type per
//! representation ([`Encapsulated`]), and a topic's writer is made with the one its first
//! recorded message has.

use std::net::IpAddr;
use std::sync::atomic::{AtomicUsize, Ordering};

use bytes::Bytes;
use recd_ros2::{names, qos as ros_qos};
use recd_storage::dds as keys;
use recd_storage::RecordedChannel;
use rustdds::policy::{self, Durability, History, Reliability};
use rustdds::{
    no_key, with_key, DataWriterStatus, DomainParticipant, Keyed, Publisher, QosPolicies,
    QosPolicyBuilder, RTPSEntity, RepresentationIdentifier, StatusEvented, Subscriber, TopicKind,
    GUID,
};

use crate::dds_node::DdsNode;

/// The DDS side of a playback: one participant, its publisher and subscriber (for the
/// replies of `--services-as-calls`), and the node its writers are announced in.
pub struct DdsOutput {
    node: DdsNode,
    participant: DomainParticipant,
    publisher: Publisher,
    subscriber: Subscriber,
}

/// One channel's writer.
pub struct DdsTopic {
    writer: Box<dyn CdrWriter>,
    representation: [u8; 2],
    /// Readers matched, as of the last status change seen.
    matched: AtomicUsize,
}

/// A recorded message: its complete CDR, encapsulation header first.
pub(crate) struct Cdr(pub(crate) Bytes);

impl Keyed for Cdr {
    // The key is in the payload, where every reader finds it; rustdds sends no key hash
    // with data, so the writer need not know it.
    type K = ();
    fn key(&self) {}
}

/// The serializer adapter of representation `0x00 R`: the payload after the header as it
/// is.
pub(crate) struct Encapsulated<const R: u8>;

/// Serializing recorded bytes cannot fail.
#[derive(Debug, thiserror::Error)]
#[error("unreachable: recorded CDR is sent as it is")]
pub(crate) struct Infallible;

impl<const R: u8> no_key::SerializerAdapter<Cdr> for Encapsulated<R> {
    type Error = Infallible;

    fn output_encoding() -> RepresentationIdentifier {
        RepresentationIdentifier::from_bytes(&[0, R]).expect("two bytes")
    }

    fn to_bytes(value: &Cdr) -> Result<Bytes, Infallible> {
        Ok(value.0.slice(HEADER..))
    }
}

impl<const R: u8> with_key::SerializerAdapter<Cdr> for Encapsulated<R> {
    fn key_to_bytes(_key: &()) -> Result<Bytes, Infallible> {
        Ok(Bytes::new())
    }
}

/// Bytes of the encapsulation header: representation identifier, options.
const HEADER: usize = 4;

/// A writer of one topic, whichever its key kind and representation.
trait CdrWriter: Send + Sync {
    fn write(&self, cdr: Cdr) -> Result<(), String>;
    /// The next status change not yet seen.
    fn status(&self) -> Option<DataWriterStatus>;
    fn wait_for_acknowledgments(&self, limit: std::time::Duration);
    /// The writer's GUID.
    fn guid(&self) -> GUID;
}

/// The same for rustdds' two writer types, which share no trait.
macro_rules! cdr_writer {
    ($writer:ty) => {
        impl<const R: u8> CdrWriter for $writer {
            fn write(&self, cdr: Cdr) -> Result<(), String> {
                self.write(cdr, None)
                    .map_err(|e| format!("cannot write: {e}"))
            }
            fn status(&self) -> Option<DataWriterStatus> {
                self.try_recv_status()
            }
            fn wait_for_acknowledgments(&self, limit: std::time::Duration) {
                let _ = self.wait_for_acknowledgments(limit);
            }
            fn guid(&self) -> GUID {
                RTPSEntity::guid(self)
            }
        }
    };
}
cdr_writer!(no_key::DataWriter<Cdr, Encapsulated<R>>);
cdr_writer!(with_key::DataWriter<Cdr, Encapsulated<R>>);

/// How the channel goes out on the wire.
struct Wire {
    topic: String,
    type_name: String,
    keyed: bool,
    qos: QosPolicies,
}

impl DdsOutput {
    /// Joins `domain` on `interfaces` (every one when empty).
    pub fn new(domain: u16, interfaces: &[IpAddr]) -> Result<Self, String> {
        let participant =
            recd_engine::dds_participant(domain, interfaces, None).map_err(|e| e.to_string())?;
        let publisher = participant
            .create_publisher(&QosPolicyBuilder::new().build())
            .map_err(|e| format!("cannot publish in DDS domain {domain}: {e}"))?;
        let subscriber = participant
            .create_subscriber(&QosPolicyBuilder::new().build())
            .map_err(|e| format!("cannot subscribe in DDS domain {domain}: {e}"))?;
        let node = DdsNode::new(&participant, &publisher)?;
        Ok(Self {
            node,
            participant,
            publisher,
            subscriber,
        })
    }

    /// Announces `writers` (the playback's writers) as its ROS 2 node's, so that ROS 2's
    /// graph names their node.
    pub fn announce<'a>(
        &self,
        writers: impl IntoIterator<Item = &'a DdsTopic>,
    ) -> Result<(), String> {
        self.node.announce(writers.into_iter().map(DdsTopic::guid))
    }

    /// A writer for `channel`, played as `topic` (its recorded name or a remapped one),
    /// sending samples of `representation` (the first recorded message's first two
    /// bytes).
    pub fn open(
        &self,
        channel: &RecordedChannel,
        topic: &str,
        representation: [u8; 2],
    ) -> Result<DdsTopic, String> {
        let mut wire = Wire::of(channel, topic)?;
        if is_xcdr2(representation) {
            wire.qos = wire
                .qos
                .with_data_representation(policy::DataRepresentation {
                    value: vec![policy::XCDR2_DATA_REPRESENTATION],
                });
        }
        let kind = if wire.keyed {
            TopicKind::WithKey
        } else {
            TopicKind::NoKey
        };
        let dds_topic = self
            .participant
            .create_topic(wire.topic.clone(), wire.type_name.clone(), &wire.qos, kind)
            .map_err(|e| format!("cannot create DDS topic {}: {e}", wire.topic))?;
        let writer = writer_for(
            &self.publisher,
            &dds_topic,
            wire.qos,
            wire.keyed,
            representation,
        )
        .map_err(|e| format!("cannot write DDS topic {}: {e}", wire.topic))?;
        Ok(DdsTopic {
            writer,
            representation,
            matched: AtomicUsize::new(0),
        })
    }
}

impl DdsOutput {
    /// Its participant, publisher and subscriber, for the service clients of
    /// `--services-as-calls`.
    pub(crate) fn endpoints(&self) -> (&DomainParticipant, &Publisher, &Subscriber) {
        (&self.participant, &self.publisher, &self.subscriber)
    }

    /// A writer of ROS 2's `/clock` (`rosgraph_msgs/msg/Clock`) with the QoS rosbag2's
    /// player gives it (rclcpp's ClockQoS: best effort, volatile, the last sample).
    pub fn clock(&self) -> Result<DdsTopic, String> {
        let topic = names::dds_topic_name("/clock");
        let qos = QosPolicyBuilder::new()
            .reliability(Reliability::BestEffort)
            .durability(Durability::Volatile)
            .history(History::KeepLast { depth: 1 })
            .build();
        let dds_topic = self
            .participant
            .create_topic(
                topic.clone(),
                names::dds_type_name("rosgraph_msgs/msg/Clock"),
                &qos,
                TopicKind::NoKey,
            )
            .map_err(|e| format!("cannot create DDS topic {topic}: {e}"))?;
        let writer = writer_for(&self.publisher, &dds_topic, qos, false, CDR_LE)
            .map_err(|e| format!("cannot write DDS topic {topic}: {e}"))?;
        Ok(DdsTopic {
            writer,
            representation: CDR_LE,
            matched: AtomicUsize::new(0),
        })
    }
}

/// XCDR1, little endian: ROS 2's representation.
pub const CDR_LE: [u8; 2] = [0, 1];

impl DdsTopic {
    /// Readers matched now.
    pub fn subscribers(&self) -> usize {
        while let Some(status) = self.writer.status() {
            if let DataWriterStatus::PublicationMatched { current, .. } = status {
                let count = usize::try_from(current.count()).unwrap_or(0);
                self.matched.store(count, Ordering::Relaxed);
            }
        }
        self.matched.load(Ordering::Relaxed)
    }

    /// The writer's GUID.
    pub fn guid(&self) -> GUID {
        self.writer.guid()
    }

    /// Sends one recorded message, its encapsulation header as recorded.
    pub fn send(&self, data: Bytes) -> Result<(), String> {
        if data.len() < HEADER {
            return Err(format!(
                "a message of {} bytes is shorter than a CDR encapsulation header",
                data.len()
            ));
        }
        if data[..2] != self.representation {
            return Err(format!(
                "a message in representation {:02x}{:02x} on a topic whose first was {:02x}{:02x}",
                data[0], data[1], self.representation[0], self.representation[1]
            ));
        }
        self.writer.write(Cdr(data))
    }

    /// Waits up to `limit` until reliable readers acknowledged every message.
    pub fn flush(&self, limit: std::time::Duration) {
        self.writer.wait_for_acknowledgments(limit);
    }
}

impl Wire {
    /// The DDS names, keyedness and QoS the channel was recorded with. Files recorded
    /// without recd's `dds.*` metadata (rosbag2's) get the names mangled back as rmw
    /// mangles them, and no key.
    fn of(channel: &RecordedChannel, played_as: &str) -> Result<Self, String> {
        let meta = &channel.metadata;
        let recorded_topic = meta
            .get(keys::TOPIC)
            .cloned()
            .unwrap_or_else(|| names::dds_topic_name(&channel.topic));
        // A remapped ROS topic stays a ROS topic on the wire; a plain DDS one stays plain.
        let topic = if played_as == channel.topic {
            recorded_topic
        } else if names::ros_topic_name(&recorded_topic).is_some() {
            names::dds_topic_name(played_as)
        } else {
            played_as.to_string()
        };
        let type_name = meta
            .get(keys::TYPE_NAME)
            .cloned()
            .unwrap_or_else(|| names::dds_type_name(&channel.schema_name));
        let keyed = meta.get(keys::KEYED).is_some_and(|k| k == "true");
        let profiles = match meta.get(keys::OFFERED_QOS_PROFILES) {
            Some(yaml) => ros_qos::parse_offered_qos_profiles(yaml)
                .map_err(|e| format!("channel {}: {e}", channel.topic))?,
            None => Vec::new(),
        };
        Ok(Self {
            topic,
            type_name,
            keyed,
            qos: writer_qos(&profiles),
        })
    }
}

/// History depth when the recording does not know the writers' (discovery does not
/// carry it): rclcpp's default.
const DEFAULT_DEPTH: u32 = 10;

/// The QoS that offers what every recorded writer offered, as rosbag2's player chooses:
/// reliable only if all were (unknown counts as reliable, the DDS default for writers),
/// transient-local only if all were; history as deep as the deepest known.
fn writer_qos(profiles: &[ros_qos::QosProfile]) -> QosPolicies {
    let reliable = profiles
        .iter()
        .all(|p| p.reliability != ros_qos::Reliability::BestEffort);
    let transient_local = !profiles.is_empty()
        && profiles
            .iter()
            .all(|p| p.durability == ros_qos::Durability::TransientLocal);
    let depth = profiles
        .iter()
        .map(|p| p.depth)
        .max()
        .filter(|&d| d > 0)
        .unwrap_or(DEFAULT_DEPTH);
    QosPolicyBuilder::new()
        .reliability(if reliable {
            Reliability::Reliable {
                max_blocking_time: rustdds::Duration::from_millis(1000),
            }
        } else {
            Reliability::BestEffort
        })
        .durability(if transient_local {
            Durability::TransientLocal
        } else {
            Durability::Volatile
        })
        .history(History::KeepLast {
            depth: i32::try_from(depth).unwrap_or(i32::MAX),
        })
        .build()
}

/// Whether a representation identifier is one of XCDR2's (X-Types 1.3, 7.6.3.1.2).
fn is_xcdr2(representation: [u8; 2]) -> bool {
    representation[0] == 0 && (0x06..=0x0b).contains(&representation[1])
}

/// A writer with the adapter of `representation`.
fn writer_for(
    publisher: &Publisher,
    topic: &rustdds::Topic,
    qos: QosPolicies,
    keyed: bool,
    representation: [u8; 2],
) -> Result<Box<dyn CdrWriter>, String> {
    fn make<const R: u8>(
        publisher: &Publisher,
        topic: &rustdds::Topic,
        qos: QosPolicies,
        keyed: bool,
    ) -> Result<Box<dyn CdrWriter>, String> {
        Ok(if keyed {
            Box::new(
                publisher
                    .create_datawriter::<Cdr, Encapsulated<R>>(topic, Some(qos))
                    .map_err(|e| e.to_string())?,
            )
        } else {
            Box::new(
                publisher
                    .create_datawriter_no_key::<Cdr, Encapsulated<R>>(topic, Some(qos))
                    .map_err(|e| e.to_string())?,
            )
        })
    }
    macro_rules! by_representation {
        ($($r:literal),*) => {
            match representation {
                $([0, $r] => make::<$r>(publisher, topic, qos, keyed),)*
                [a, b] => Err(format!(
                    "its messages are in representation {a:02x}{b:02x}, which rustdds cannot \
                     send (it knows {})",
                    [$(format!("00{:02x}", $r)),*].join(", ")
                )),
            }
        };
    }
    // Every representation identifier rustdds knows, by its second byte.
    by_representation!(
        0x00, 0x01, 0x02, 0x03, 0x04, 0x06, 0x07, 0x08, 0x09, 0x0a, 0x0b, 0x10, 0x11, 0x12, 0x13,
        0x14, 0x15
    )
}

/// Whether `channel` was recorded from DDS: CDR, and not from Zenoh (whose channels are
/// CDR too, see [`crate::zenoh::is_zenoh`]).
pub fn is_dds(channel: &RecordedChannel) -> bool {
    channel.message_encoding == keys::MESSAGE_ENCODING && !crate::zenoh::is_zenoh(channel)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn channel(topic: &str, schema: &str, metadata: &[(&str, &str)]) -> RecordedChannel {
        RecordedChannel {
            topic: topic.into(),
            message_encoding: "cdr".into(),
            schema_name: schema.into(),
            schema_encoding: String::new(),
            schema_data: Vec::new(),
            metadata: metadata
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect::<BTreeMap<_, _>>(),
        }
    }

    #[test]
    fn recorded_names_are_played_and_remaps_keep_the_naming() {
        let ros = channel(
            "/chatter",
            "std_msgs/msg/String",
            &[
                ("dds.topic", "rt/chatter"),
                ("dds.type_name", "std_msgs::msg::dds_::String_"),
            ],
        );
        let wire = Wire::of(&ros, "/chatter").unwrap();
        assert_eq!(wire.topic, "rt/chatter");
        assert_eq!(wire.type_name, "std_msgs::msg::dds_::String_");
        assert!(!wire.keyed);
        assert_eq!(Wire::of(&ros, "/echo").unwrap().topic, "rt/echo");

        let plain = channel(
            "Keyed",
            "recd_test::Keyed",
            &[
                ("dds.topic", "Keyed"),
                ("dds.type_name", "recd_test::Keyed"),
                ("dds.keyed", "true"),
            ],
        );
        let wire = Wire::of(&plain, "Other").unwrap();
        assert_eq!((wire.topic.as_str(), wire.keyed), ("Other", true));

        // A rosbag2 file has no dds.* keys: rmw's mangling is undone.
        let rosbag2 = channel("/scan", "sensor_msgs/msg/LaserScan", &[]);
        let wire = Wire::of(&rosbag2, "/scan").unwrap();
        assert_eq!(wire.topic, "rt/scan");
        assert_eq!(wire.type_name, "sensor_msgs::msg::dds_::LaserScan_");
    }

    #[test]
    fn the_writer_offers_what_every_recorded_writer_offered() {
        let profile = |reliability, durability, depth| ros_qos::QosProfile {
            history: ros_qos::History::Unknown,
            depth,
            reliability,
            durability,
            deadline: None,
            lifespan: None,
            liveliness: ros_qos::Liveliness::Automatic,
            liveliness_lease_duration: None,
            avoid_ros_namespace_conventions: false,
        };
        use ros_qos::{Durability as D, Reliability as R};
        let latched = writer_qos(&[profile(R::Reliable, D::TransientLocal, 0)]);
        assert!(matches!(
            latched.reliability(),
            Some(Reliability::Reliable { .. })
        ));
        assert_eq!(latched.durability(), Some(Durability::TransientLocal));
        assert_eq!(latched.history(), Some(History::KeepLast { depth: 10 }));

        let mixed = writer_qos(&[
            profile(R::Reliable, D::TransientLocal, 3),
            profile(R::BestEffort, D::Volatile, 5),
        ]);
        assert_eq!(mixed.reliability(), Some(Reliability::BestEffort));
        assert_eq!(mixed.durability(), Some(Durability::Volatile));
        assert_eq!(mixed.history(), Some(History::KeepLast { depth: 5 }));

        let unknown = writer_qos(&[]);
        assert!(matches!(
            unknown.reliability(),
            Some(Reliability::Reliable { .. })
        ));
        assert_eq!(unknown.durability(), Some(Durability::Volatile));
    }

    #[test]
    fn the_adapter_sends_the_payload_after_the_recorded_header() {
        use no_key::SerializerAdapter;
        let cdr = Cdr(Bytes::from_static(&[0, 7, 0, 0, 42, 43]));
        assert_eq!(
            <Encapsulated<7> as SerializerAdapter<Cdr>>::to_bytes(&cdr).unwrap(),
            Bytes::from_static(&[42, 43])
        );
        assert_eq!(
            <Encapsulated<7> as SerializerAdapter<Cdr>>::output_encoding(),
            RepresentationIdentifier::XCDR2_LE
        );
        assert!(is_xcdr2([0, 7]) && !is_xcdr2([0, 1]));
    }
}
