//! What the discovery thread knows of a writer, what it offers a new topic's reader and
//! channel, and a new topic it holds while its type is asked of the network.

use rustdds::{QosPolicies, GUID};

use super::channel::Offer;
use super::gathered::Gathered;
use super::qos::ReaderChoice;
use super::reader::{Reader, TopicShape};

/// A writer as discovery describes it.
#[derive(Clone)]
pub(super) struct WriterSeen {
    pub guid: GUID,
    pub topic: String,
    pub type_name: String,
    pub qos: QosPolicies,
    pub user_data: Vec<u8>,
}

/// A new topic waiting for its definition from the network, its reader gathering samples.
pub(super) struct HeldTopic {
    /// The writer that made it known, and the other writers known then (QoS, USER_DATA).
    pub writer: WriterSeen,
    pub others: Vec<(QosPolicies, Vec<u8>)>,
    /// The type hash asked for.
    pub hash: String,
    /// Its reader, registered with the discovery thread's poll, not yet the receive
    /// thread's.
    pub reader: Reader,
    /// What the reader gave so far.
    pub gathered: Gathered,
    /// Writers seen meanwhile, added once the topic is handed over.
    pub more: Vec<WriterSeen>,
}

/// What `writer` and the `others` of its topic offer, `writer` first.
pub(super) fn offers_of<'a>(
    writer: &'a WriterSeen,
    others: &'a [(QosPolicies, Vec<u8>)],
) -> Vec<Offer<'a>> {
    let mut offers = vec![Offer {
        qos: &writer.qos,
        user_data: &writer.user_data,
    }];
    offers.extend(
        others
            .iter()
            .map(|(qos, user_data)| Offer { qos, user_data }),
    );
    offers
}

/// The shape of the reader of `writer`'s topic, for what `offers` offer.
pub(super) fn topic_shape<'a>(writer: &'a WriterSeen, offers: &[Offer<'_>]) -> TopicShape<'a> {
    TopicShape {
        name: &writer.topic,
        type_name: &writer.type_name,
        keyed: keyed_writer(writer.guid),
        choice: ReaderChoice::for_offers(offers.iter().map(|o| o.qos)),
    }
}

/// Whether a writer's topic is keyed: the entity kind, the GUID's last byte, says so
/// (0x02 writer with key, 0x03 writer without).
pub(super) fn keyed_writer(writer: GUID) -> bool {
    writer.to_bytes()[15] == 0x02
}
