//! Playing Zenoh channels (ROS 2 over rmw_zenoh) as rmw_zenoh's publishers publish: one
//! Zenoh session for the playback, configured as rmw_zenoh's nodes' are, announcing one
//! node (`/rec_play`) and, per topic, a publisher's liveliness token with the recorded
//! type, type hash and QoS; each message is put on the recorded data key (domain and
//! topic as played) as the CDR it was recorded as, encapsulation header included, with a
//! fresh rmw_zenoh attachment: the publisher's sequence number (from 1), the time it
//! left and the publisher's GID (the XXH3-128 of its token, as rmw_zenoh makes it).
//!
//! Reliable unless every recorded publisher was best effort; congestion control drops,
//! but blocks for a reliable keep-all topic, as rmw_zenoh's. A topic recorded from
//! transient-local publishers is announced as one, but the samples are not kept for late
//! subscribers (rmw_zenoh's publication cache is not served): they get what is sent after
//! they joined. Zenoh's publisher reliability is an unstable API of the zenoh crate: it
//! is left at Zenoh's default (reliable), which the token's QoS does not depend on.

#![cfg_attr(not(feature = "zenoh"), allow(dead_code))]

use recd_storage::zenoh as keys;
use recd_storage::RecordedChannel;

#[cfg(feature = "zenoh")]
pub use publish::{ZenohOutput, ZenohTopic};

/// Whether `channel` was recorded from Zenoh: it has the key expression its samples came
/// on (its message encoding is `cdr`, as a DDS channel's).
pub fn is_zenoh(channel: &RecordedChannel) -> bool {
    channel.metadata.contains_key(keys::KEY_EXPR)
}

/// Why a Zenoh channel is skipped by a replay built without Zenoh.
#[cfg(not(feature = "zenoh"))]
pub const WITHOUT_ZENOH: &str = "it was recorded from Zenoh, and this rec was built without Zenoh";

/// The node a playback's publishers belong to (its DDS writers' too), as rmw_zenoh
/// announces nodes.
use crate::dds_node::{NODE_NAME, NODE_NAMESPACE};

/// History depth when the recording does not know the publishers' (rclcpp's default).
const DEFAULT_DEPTH: u32 = 10;

/// How a channel goes out on the wire.
#[derive(Debug, Clone, PartialEq)]
struct Wire {
    /// The data key: `<domain>/<topic>/<type>/<type hash>`.
    key: String,
    /// The ROS topic played (`/chatter`).
    ros_topic: String,
    type_name: String,
    type_hash: String,
    qos: recd_ros2::qos::QosProfile,
}

impl Wire {
    /// The key, names and QoS `channel` was recorded with, played as `played_as` (its
    /// recorded name or a remapped one) in `domain`.
    fn of(channel: &RecordedChannel, played_as: &str, domain: u16) -> Result<Self, String> {
        let meta = &channel.metadata;
        let recorded = meta.get(keys::KEY_EXPR).map_or("", String::as_str);
        let malformed = || {
            format!(
                "channel {}: {} `{recorded}` is not <domain>/<topic>/<type>/<hash>",
                channel.topic,
                keys::KEY_EXPR
            )
        };
        let data = recd_engine::zenoh_wire::DataKey::parse(recorded).ok_or_else(malformed)?;
        let (topic, type_name, type_hash) = (data.topic, data.type_name, data.type_hash);
        let topic = if played_as == channel.topic {
            topic
        } else {
            played_as.trim_start_matches('/')
        };
        let profiles = match meta.get(recd_storage::dds::OFFERED_QOS_PROFILES) {
            Some(yaml) => recd_ros2::qos::parse_offered_qos_profiles(yaml)
                .map_err(|e| format!("channel {}: {e}", channel.topic))?,
            None => Vec::new(),
        };
        Ok(Self {
            key: format!("{domain}/{topic}/{type_name}/{type_hash}"),
            ros_topic: format!("/{topic}"),
            type_name: type_name.to_string(),
            type_hash: type_hash.to_string(),
            qos: played_qos(&profiles),
        })
    }

    /// Whether a put may wait for room rather than be dropped: reliable keep-all only.
    fn blocks(&self) -> bool {
        use recd_ros2::qos::{History, Reliability};
        self.qos.reliability == Reliability::Reliable && self.qos.history == History::KeepAll
    }
}

/// The QoS that offers what every recorded publisher offered: reliable unless all were
/// best effort (unknown counts as reliable, rmw_zenoh's default), transient local and
/// keep all only if all were; history as deep as the deepest known; deadline, lifespan
/// and liveliness when all agree, else rmw's defaults.
fn played_qos(offers: &[recd_ros2::qos::QosProfile]) -> recd_ros2::qos::QosProfile {
    use recd_ros2::qos::{Durability, History, Liveliness, QosProfile, Reliability};
    let all = |test: &dyn Fn(&QosProfile) -> bool| !offers.is_empty() && offers.iter().all(test);
    fn agreed<T: PartialEq + Clone>(
        offers: &[QosProfile],
        field: fn(&QosProfile) -> T,
    ) -> Option<T> {
        let first = field(offers.first()?);
        offers.iter().all(|p| field(p) == first).then_some(first)
    }
    QosProfile {
        history: if all(&|p| p.history == History::KeepAll) {
            History::KeepAll
        } else {
            History::KeepLast
        },
        depth: offers
            .iter()
            .map(|p| p.depth)
            .max()
            .filter(|&d| d > 0)
            .unwrap_or(DEFAULT_DEPTH),
        reliability: if all(&|p| p.reliability == Reliability::BestEffort) {
            Reliability::BestEffort
        } else {
            Reliability::Reliable
        },
        durability: if all(&|p| p.durability == Durability::TransientLocal) {
            Durability::TransientLocal
        } else {
            Durability::Volatile
        },
        deadline: agreed(offers, |p| p.deadline).flatten(),
        lifespan: agreed(offers, |p| p.lifespan).flatten(),
        liveliness: match agreed(offers, |p| p.liveliness) {
            Some(Liveliness::ManualByTopic) => Liveliness::ManualByTopic,
            _ => Liveliness::Automatic,
        },
        liveliness_lease_duration: agreed(offers, |p| p.liveliness_lease_duration).flatten(),
        avoid_ros_namespace_conventions: false,
    }
}

#[cfg(feature = "zenoh")]
mod publish {
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::time::{SystemTime, UNIX_EPOCH};

    use ::zenoh::liveliness::LivelinessToken;
    use ::zenoh::pubsub::Publisher;
    use ::zenoh::qos::CongestionControl;
    use ::zenoh::{Session, Wait};
    use bytes::Bytes;
    use recd_engine::zenoh_wire::{
        gid_of, node_token, open_session, publisher_token, qos_field, Attachment, Gid,
        PublisherToken,
    };
    use recd_engine::ZenohConfig;
    use recd_storage::RecordedChannel;

    use super::{Wire, NODE_NAME, NODE_NAMESPACE};

    /// The id of the playback's node within its session; its publishers count on from it.
    const NODE_ID: u32 = 0;

    /// The Zenoh side of a playback: its session and its node's liveliness token.
    pub struct ZenohOutput {
        session: Session,
        zid: String,
        domain: u16,
        /// The last entity id given out.
        entity: u32,
        node: Option<LivelinessToken>,
    }

    /// One channel's publisher and liveliness token.
    pub struct ZenohTopic {
        publisher: Option<Publisher<'static>>,
        token: Option<LivelinessToken>,
        key: String,
        gid: Gid,
        /// The last sequence number given out.
        sequence: AtomicU64,
    }

    impl ZenohOutput {
        /// Joins Zenoh as `config` says (rmw_zenoh's session unless told otherwise) and
        /// announces the playback's node in `config.domain`, the domain it plays into.
        pub fn new(config: &ZenohConfig) -> Result<Self, String> {
            let session = open_session(config).map_err(|e| e.to_string())?;
            let zid = session.zid().to_string();
            let node_key = node_token(config.domain, &zid, NODE_ID, NODE_NAMESPACE, NODE_NAME);
            let node = session
                .liveliness()
                .declare_token(node_key.clone())
                .wait()
                .map_err(|e| format!("cannot declare the liveliness token {node_key}: {e}"))?;
            Ok(Self {
                session,
                zid,
                domain: config.domain,
                entity: NODE_ID,
                node: Some(node),
            })
        }

        /// A publisher for `channel`, played as `topic` (its recorded name or a remapped
        /// one), announced by its liveliness token.
        pub fn open(
            &mut self,
            channel: &RecordedChannel,
            topic: &str,
        ) -> Result<ZenohTopic, String> {
            let wire = Wire::of(channel, topic, self.domain)?;
            self.entity += 1;
            let qos = qos_field(&wire.qos);
            let token_key = publisher_token(&PublisherToken {
                domain: self.domain,
                zid: &self.zid,
                node_id: NODE_ID,
                entity_id: self.entity,
                namespace: NODE_NAMESPACE,
                node: NODE_NAME,
                ros_topic: &wire.ros_topic,
                type_name: &wire.type_name,
                type_hash: &wire.type_hash,
                qos: &qos,
            });
            let publisher = self
                .session
                .declare_publisher(wire.key.clone())
                .congestion_control(if wire.blocks() {
                    CongestionControl::Block
                } else {
                    CongestionControl::Drop
                })
                .wait()
                .map_err(|e| format!("cannot publish on {} over Zenoh: {e}", wire.key))?;
            let token = self
                .session
                .liveliness()
                .declare_token(token_key.clone())
                .wait()
                .map_err(|e| format!("cannot declare the liveliness token {token_key}: {e}"))?;
            Ok(ZenohTopic {
                publisher: Some(publisher),
                token: Some(token),
                key: wire.key,
                gid: gid_of(&token_key),
                sequence: AtomicU64::new(0),
            })
        }
    }

    impl Drop for ZenohOutput {
        fn drop(&mut self) {
            if let Some(node) = self.node.take() {
                let _ = node.undeclare().wait();
            }
            // Closing sends what is queued before the links go.
            let _ = self.session.close().wait();
        }
    }

    impl ZenohTopic {
        /// 1 while a subscriber matches the key, else 0 (Zenoh does not count them).
        pub fn subscribers(&self) -> usize {
            self.publisher
                .as_ref()
                .and_then(|p| p.matching_status().wait().ok())
                .map_or(0, |status| usize::from(status.matching()))
        }

        /// Puts one recorded message with the next attachment.
        pub fn send(&self, data: Bytes) -> Result<(), String> {
            let publisher = self.publisher.as_ref().ok_or("the publisher is gone")?;
            let attachment = Attachment {
                sequence: self.sequence.fetch_add(1, Ordering::Relaxed) + 1,
                source_time_ns: SystemTime::now()
                    .duration_since(UNIX_EPOCH)
                    .map_or(0, |d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)),
                gid: self.gid,
            };
            publisher
                .put(data)
                .attachment(attachment.to_bytes())
                .wait()
                .map_err(|e| format!("cannot put on {}: {e}", self.key))
        }
    }

    impl Drop for ZenohTopic {
        /// Leaves the ROS graph as rmw_zenoh's publishers do: token first, then the
        /// publisher. Zenoh sends the token's undeclaration at Control priority, ahead of
        /// puts still queued: a subscriber may see the publisher go before its last
        /// samples, which still arrive (the session's close sends what is queued).
        fn drop(&mut self) {
            if let Some(token) = self.token.take() {
                let _ = token.undeclare().wait();
            }
            if let Some(publisher) = self.publisher.take() {
                let _ = publisher.undeclare().wait();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use recd_ros2::qos::{Durability as D, History as H, Liveliness, QosProfile, Reliability as R};
    use std::collections::BTreeMap;
    use std::time::Duration;

    const HASH: &str = "RIHS01_df668c740482bbd48fb39d76a70dfd4bd59db1288021743503259e948f6b1a18";

    fn channel(metadata: &[(&str, &str)]) -> RecordedChannel {
        RecordedChannel {
            topic: "/chatter".into(),
            message_encoding: "cdr".into(),
            schema_name: "std_msgs/msg/String".into(),
            schema_encoding: "ros2msg".into(),
            schema_data: Vec::new(),
            metadata: metadata
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect::<BTreeMap<_, _>>(),
        }
    }

    fn profile(reliability: R, durability: D, history: H, depth: u32) -> QosProfile {
        QosProfile {
            history,
            depth,
            reliability,
            durability,
            deadline: None,
            lifespan: Some(Duration::from_secs(3)),
            liveliness: Liveliness::Automatic,
            liveliness_lease_duration: None,
            avoid_ros_namespace_conventions: false,
        }
    }

    #[test]
    fn the_recorded_key_plays_in_the_domain_and_under_the_name_given() {
        let key = format!("0/chatter/std_msgs::msg::dds_::String_/{HASH}");
        let zenoh = channel(&[("zenoh.key_expr", &key), ("zenoh.domain", "0")]);
        assert!(is_zenoh(&zenoh));
        assert!(
            !crate::dds::is_dds(&zenoh),
            "a Zenoh channel is not played to DDS"
        );
        let wire = Wire::of(&zenoh, "/chatter", 5).unwrap();
        assert_eq!(
            wire.key,
            format!("5/chatter/std_msgs::msg::dds_::String_/{HASH}")
        );
        assert_eq!(wire.ros_topic, "/chatter");
        assert_eq!(wire.type_name, "std_msgs::msg::dds_::String_");
        assert_eq!(wire.type_hash, HASH);
        let remapped = Wire::of(&zenoh, "/robot/talk", 7).unwrap();
        assert_eq!(
            remapped.key,
            format!("7/robot/talk/std_msgs::msg::dds_::String_/{HASH}")
        );
        assert_eq!(remapped.ros_topic, "/robot/talk");
        // No offers known: reliable, volatile, keep last 10.
        assert_eq!(wire.qos.reliability, R::Reliable);
        assert_eq!(wire.qos.durability, D::Volatile);
        assert_eq!((wire.qos.history, wire.qos.depth), (H::KeepLast, 10));
        assert!(!wire.blocks());

        let bad = channel(&[("zenoh.key_expr", "0/chatter")]);
        let error = Wire::of(&bad, "/chatter", 0).unwrap_err();
        assert!(error.contains("zenoh.key_expr"), "{error}");
        assert!(crate::dds::is_dds(&channel(&[])));
    }

    #[test]
    fn the_played_qos_offers_what_every_recorded_publisher_offered() {
        let latched = played_qos(&[
            profile(R::Reliable, D::TransientLocal, H::KeepAll, 0),
            profile(R::Reliable, D::TransientLocal, H::KeepAll, 0),
        ]);
        assert_eq!(latched.reliability, R::Reliable);
        assert_eq!(latched.durability, D::TransientLocal);
        assert_eq!(latched.history, H::KeepAll);
        assert_eq!(latched.lifespan, Some(Duration::from_secs(3)));

        let mut other = profile(R::BestEffort, D::Volatile, H::KeepLast, 5);
        other.lifespan = None;
        let mixed = played_qos(&[
            profile(R::BestEffort, D::TransientLocal, H::KeepLast, 3),
            other,
        ]);
        assert_eq!(mixed.reliability, R::BestEffort);
        assert_eq!(mixed.durability, D::Volatile);
        assert_eq!((mixed.history, mixed.depth), (H::KeepLast, 5));
        assert_eq!(mixed.lifespan, None);

        let blocking = Wire {
            key: String::new(),
            ros_topic: String::new(),
            type_name: String::new(),
            type_hash: String::new(),
            qos: latched,
        };
        assert!(blocking.blocks());
    }
}
