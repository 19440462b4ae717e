//! The playback's ROS 2 node on DDS. A DDS writer belongs to no node by itself: rmw
//! says which node each of a participant's writers and readers belongs to on
//! `ros_discovery_info` (rmw_dds_common's ParticipantEntitiesInfo, one transient-local
//! sample per participant), which ROS 2's graph (`ros2 topic info -v`, rclpy's
//! `get_publishers_info_by_topic`) reads. The playback announces its writers there as
//! node [`NODE_NAME`] in [`NODE_NAMESPACE`], the node its Zenoh publishers belong to too.
//!
//! The message types and the topic's QoS are ros2-client's (recd's ROS 2 services use
//! it already); its `Node` is not used for the writers themselves, as it writes only
//! what it serializes, in one representation, where a playback sends recorded CDR as it
//! was recorded.

use ros2_client::builtin_topics::ros_discovery;
use ros2_client::entities_info::{NodeEntitiesInfo, ParticipantEntitiesInfo};
use ros2_client::{Gid, NodeName};
use rustdds::{no_key, CDRSerializerAdapter, DomainParticipant, Publisher, RTPSEntity, TopicKind};

/// The namespace of the playback's node.
pub const NODE_NAMESPACE: &str = "/";
/// The name of the playback's node.
pub const NODE_NAME: &str = "rec_play";

type InfoWriter =
    no_key::DataWriter<ParticipantEntitiesInfo, CDRSerializerAdapter<ParticipantEntitiesInfo>>;

/// The writer of the participant's `ros_discovery_info`.
pub struct DdsNode {
    participant: Gid,
    writer: InfoWriter,
}

impl DdsNode {
    /// Joins `ros_discovery_info` with `publisher` of `participant`; announces nothing yet.
    pub fn new(participant: &DomainParticipant, publisher: &Publisher) -> Result<Self, String> {
        let topic = participant
            .create_topic(
                ros_discovery::TOPIC_NAME.to_string(),
                ros_discovery::TYPE_NAME.to_string(),
                &ros_discovery::QOS_PUB,
                TopicKind::NoKey,
            )
            .map_err(|e| format!("cannot create DDS topic {}: {e}", ros_discovery::TOPIC_NAME))?;
        let writer = publisher
            .create_datawriter_no_key(&topic, None)
            .map_err(|e| format!("cannot write DDS topic {}: {e}", ros_discovery::TOPIC_NAME))?;
        Ok(Self {
            participant: Gid::from(participant.guid()),
            writer,
        })
    }

    /// Announces the node with `writers` (and the announcing writer, as rmw does),
    /// replacing what was announced before.
    pub fn announce(&self, writers: impl IntoIterator<Item = rustdds::GUID>) -> Result<(), String> {
        let name = NodeName::new(NODE_NAMESPACE, NODE_NAME)
            .map_err(|e| format!("node name {NODE_NAMESPACE}{NODE_NAME}: {e:?}"))?;
        let mut node = NodeEntitiesInfo::new(name);
        node.add_writer(Gid::from(self.writer.guid()));
        for writer in writers {
            node.add_writer(Gid::from(writer));
        }
        self.publish(vec![node])
    }

    fn publish(&self, nodes: Vec<NodeEntitiesInfo>) -> Result<(), String> {
        self.writer
            .write(ParticipantEntitiesInfo::new(self.participant, nodes), None)
            .map_err(|e| format!("cannot write {}: {e}", ros_discovery::TOPIC_NAME))
    }
}

impl Drop for DdsNode {
    /// Leaves the graph as rmw's nodes do: the participant announced without them.
    fn drop(&mut self) {
        let _ = self.publish(Vec::new());
    }
}
