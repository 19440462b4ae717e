//! Message definitions asked of rmw_zenoh nodes. A new topic whose type no `.msg` file or
//! kept definition describes is held while the source thread asks the publishing node's
//! `~/get_type_description` (type_description_interfaces, ROS 2 Iron and later) as
//! rmw_zenoh's service clients call a service: a Zenoh query on the service's key
//! `<domain>/<node>/get_type_description/<service type>/<its hash>` (any type and hash),
//! the request's CDR as payload and a sample's attachment (sequence number, time, the
//! caller's GID). The reply comes on a Zenoh thread and reaches the source thread as
//! bytes; the source thread checks it against the publisher's type hash and builds the
//! definition as for DDS ([`crate::source::dds::fetch_wire`]), and keeps it in the state
//! directory by hash.
//!
//! A held topic's samples wait with those of keys not described yet ([`super::receive`],
//! within its bounds); they are recorded with the schema once it is known, or without one
//! when the node does not answer within [`ASK_BOUND`] or the session stops first.

use std::sync::mpsc::Sender;
use std::time::{Duration, Instant};

use byteorder::LittleEndian;
use zenoh::pubsub::Subscriber;
use zenoh::query::Reply;
use zenoh::{Session, Wait};

use super::attachment::Attachment;
use super::token::Token;
use super::Event;
use crate::source::dds::fetch_wire::{
    definition_of, GetTypeDescriptionRequest, GetTypeDescriptionResponse,
};

/// How long a node has to answer for a type.
pub(super) const ASK_BOUND: Duration = Duration::from_secs(5);
/// How soon a query that ended unanswered is sent again (a node whose service Zenoh did
/// not route to yet).
pub(super) const RESEND: Duration = Duration::from_millis(500);
/// The CDR encapsulation header of little-endian XCDR1, as rmw writes it.
const CDR_LE: [u8; 4] = [0, 1, 0, 0];
/// The GID recd's calls carry (rmw_zenoh's servers want one; any will do).
const CALLER_GID: [u8; 16] = *b"recd-types-ask-0";

/// A topic waiting for its type's definition.
pub(super) struct HeldTopic {
    /// ROS topic and rmw_zenoh's type name.
    pub name: (String, String),
    pub hash: String,
    /// The publishers' tokens seen meanwhile, by key.
    pub tokens: Vec<(String, Token)>,
    /// The data keys its samples came on.
    pub keys: Vec<String>,
    /// Its own subscription, when topics are subscribed one by one.
    pub subscriber: Option<Subscriber<()>>,
}

/// A type asked of a node.
pub(super) struct Asking {
    pub hash: String,
    /// The ROS type (`std_msgs/msg/String`).
    pub ros_type: String,
    /// The node's full name (`/ns/talker`).
    pub node: String,
    pub since: Instant,
    /// When to send the query (again); `None` while one is out.
    pub next_try: Option<Instant>,
}

impl Asking {
    /// Whether the node has had its time.
    pub fn expired(&self, now: Instant) -> bool {
        now >= self.since + ASK_BOUND
    }

    /// Why there is no definition once the bound passed.
    pub fn unanswered(&self) -> String {
        format!(
            "asked the network for {}: {} did not answer ~/get_type_description within {} s",
            self.hash,
            self.node,
            ASK_BOUND.as_secs()
        )
    }
}

/// The full name of the node a token belongs to.
pub(super) fn node_of(token: &Token) -> String {
    match token.namespace.trim_end_matches('/') {
        "" => format!("/{}", token.node),
        namespace => format!("{namespace}/{}", token.node),
    }
}

/// Sends `asking`'s query as call number `sequence`; each reply comes back as
/// [`Event::TypeReply`], and the query's end (answered or not) as [`Event::TypeAskEnded`].
pub(super) fn ask(
    session: &Session,
    domain: u16,
    asking: &Asking,
    sequence: u64,
    events: Sender<Event>,
) -> Result<(), String> {
    let selector = format!(
        "{domain}/{}/get_type_description/*/*",
        asking.node.trim_start_matches('/')
    );
    let attachment = Attachment {
        sequence,
        source_time_ns: crate::handoff::now_ns(),
        gid: CALLER_GID,
    };
    let ended = QueryEnd {
        events: events.clone(),
        hash: asking.hash.clone(),
    };
    let hash = asking.hash.clone();
    session
        .get(selector.as_str())
        .payload(request_cdr(&asking.ros_type, &asking.hash))
        .attachment(attachment.to_bytes())
        .timeout(ASK_BOUND)
        .callback(move |reply: Reply| {
            let _keeps_until_the_end = &ended;
            if let Ok(sample) = reply.result() {
                let _ = events.send(Event::TypeReply {
                    hash: hash.clone(),
                    reply: sample.payload().to_bytes().into_owned(),
                });
            }
        })
        .wait()
        .map_err(|e| format!("cannot ask {selector} over Zenoh: {e}"))
}

/// Says that a query ended when Zenoh drops its callback (every reply in, or the timeout).
struct QueryEnd {
    events: Sender<Event>,
    hash: String,
}

impl Drop for QueryEnd {
    fn drop(&mut self) {
        let hash = std::mem::take(&mut self.hash);
        let _ = self.events.send(Event::TypeAskEnded { hash });
    }
}

/// The request for `ros_type` of `hash`, sources included, as CDR.
fn request_cdr(ros_type: &str, hash: &str) -> Vec<u8> {
    let request = GetTypeDescriptionRequest {
        type_name: ros_type.to_string(),
        type_hash: hash.to_string(),
        include_type_sources: true,
    };
    let mut bytes = CDR_LE.to_vec();
    bytes.extend(
        cdr_encoding::to_vec::<_, LittleEndian>(&request).expect("strings and a bool encode"),
    );
    bytes
}

/// The definition a reply (CDR, encapsulation header first) gives of `ros_type` of `hash`,
/// or why none.
pub(super) fn definition_from_reply(
    reply: &[u8],
    ros_type: &str,
    hash: &str,
) -> Result<String, String> {
    let body = match reply {
        [0, 1, _, _, body @ ..] => body,
        [a, b, ..] => {
            return Err(format!(
                "the reply's encoding is {a:#04x}{b:02x}, not little-endian CDR"
            ))
        }
        _ => return Err("the reply is empty".to_string()),
    };
    let (response, _) = cdr_encoding::from_bytes::<GetTypeDescriptionResponse, LittleEndian>(body)
        .map_err(|e| format!("the reply does not read as GetTypeDescription's: {e}"))?;
    definition_of(response, ros_type, hash)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_request_is_little_endian_cdr_of_the_name_hash_and_sources_flag() {
        let bytes = request_cdr("a/msg/B", "RIHS01_x");
        let mut expected = CDR_LE.to_vec();
        expected.extend(8u32.to_le_bytes());
        expected.extend(b"a/msg/B\0");
        expected.extend(9u32.to_le_bytes());
        expected.extend(b"RIHS01_x\0");
        expected.push(1);
        assert_eq!(bytes, expected);
    }

    #[test]
    fn a_reply_that_is_not_cdr_says_so() {
        let err = definition_from_reply(&[0, 0, 0, 0], "a/msg/B", "RIHS01_x").unwrap_err();
        assert!(err.contains("not little-endian CDR"), "{err}");
        let err = definition_from_reply(&[0, 1, 0, 0, 7], "a/msg/B", "RIHS01_x").unwrap_err();
        assert!(err.contains("does not read"), "{err}");
    }

    #[test]
    fn nodes_are_named_with_their_namespace() {
        let token = Token::parse(
            "@ros2_lv/0/z/0/1/MP/%/%ns/talker/%chatter/std_msgs::msg::dds_::String_/RIHS01_a/::,10:,:,:,,",
        )
        .unwrap();
        assert_eq!(node_of(&token), "/ns/talker");
        let token = Token::parse(
            "@ros2_lv/0/z/0/1/MP/%/%/talker/%chatter/std_msgs::msg::dds_::String_/RIHS01_a/::,10:,:,:,,",
        )
        .unwrap();
        assert_eq!(node_of(&token), "/talker");
    }
}
