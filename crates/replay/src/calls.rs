//! Services played as calls (`rec play --services-as-calls`, rosbag2's
//! `--publish-service-requests`): the requests recorded in a service's introspection
//! events (`<service>/_service_event`, `pkg/srv/S_Event`) are sent again, as calls, to
//! whichever server of the service runs now, each when its event is due; the events
//! topic itself is not played.
//!
//! One call per recorded request. A request shows up twice when both ends had
//! introspection on: `REQUEST_SENT` from the client, `REQUEST_RECEIVED` from the server
//! (once per server), with the same sequence number. Both name the client by a GID: the
//! same one under Kilted's rmw_fastrtps (the client's response reader's GUID), but rmw
//! versions have differed in which of the client's two GUIDs (request writer, response
//! reader) each end gives, and those share only the participant's GUID prefix. So an event
//! is a call of its own unless the same (GID, sequence number) came before, or an event of
//! the other end with the same (GUID prefix, sequence number) is still unpaired
//! ([`Distinct`]).
//!
//! The calls are rmw_fastrtps' (what ROS 2's default middleware serves): a DDS writer on
//! `rq/<service>Request` (type `pkg::srv::dds_::S_Request_`) whose sample carries the
//! request alone, its reply reader's GUID in the related sample identity (so that the
//! server waits for that reader before it replies), and a reader on `rr/<service>Reply`
//! whose samples name the request they answer in theirs. rmw_cyclonedds' services, which
//! put a header in the payload, and rmw_zenoh's (queries) are not called.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use bytes::Bytes;
use recd_ros2::names::{self, Interface};
use recd_ros2::service_request::{EventInfo, EventLayout, REQUEST_SENT};
use recd_storage::RecordedChannel;
use rustdds::policy::{Durability, History, Reliability};
use rustdds::rpc::SampleIdentity;
use rustdds::{
    no_key, DataReaderStatus, DataWriterStatus, DomainParticipant, Publisher, QosPolicies,
    QosPolicyBuilder, RTPSEntity, RepresentationIdentifier, SequenceNumber, StatusEvented,
    Subscriber, Timestamp, TopicKind, WriteOptionsBuilder, GUID,
};

use crate::dds::{Cdr, Encapsulated, Infallible, CDR_LE};
use crate::PlayedCalls;

/// Why a Zenoh service's events are left out with `--services-as-calls`.
pub const NOT_OVER_ZENOH: &str = "--services-as-calls calls DDS services only (rmw_fastrtps); \
     a Zenoh (rmw_zenoh) service is not called, nor its events played";

/// How long the end of a playback waits for the replies to the calls it sent.
pub const REPLY_WAIT: Duration = Duration::from_secs(3);

/// The service whose introspection events `channel` holds, as played under `played_as`
/// (its recorded topic or a remapped one); `None` for any other channel.
pub fn service_of(channel: &RecordedChannel, played_as: &str) -> Option<String> {
    let service = |topic: &str| match names::interface_of(topic, &channel.schema_name) {
        Interface::Service { service } => Some(service),
        _ => None,
    };
    service(&channel.topic)?;
    service(played_as).or_else(|| service(&channel.topic))
}

/// A request writer: the request's XCDR1 body behind the header of its representation.
type Writer = no_key::DataWriter<Cdr, Encapsulated<1>>;
/// A reply reader that keeps nothing of a reply but that it came.
type Reader = no_key::SimpleDataReader<Reply, ReplyAdapter>;

/// One service's client.
pub struct CallTopic {
    service: String,
    writer: Writer,
    reader_guid: GUID,
    /// How to find the request in the channel's events, read from its schema at its first
    /// message.
    layout: OnceLock<Result<EventLayout, String>>,
    state: Mutex<State>,
    /// Request readers matched, as of the last status change seen.
    matched: AtomicUsize,
}

/// What the calls of one service went through.
struct State {
    reader: Reader,
    /// Reply writers matched, as of the last status change seen.
    reply_writers: usize,
    /// The pass of the playback (`--loop`) whose events [`Self::distinct`] holds.
    pass: u32,
    distinct: Distinct,
    /// Sequence numbers of the requests sent and not answered yet.
    pending: HashSet<i64>,
    counts: PlayedCalls,
}

/// A recorded request made ready to send.
pub struct Request {
    info: EventInfo,
    /// The request's CDR body; `None` when the event was recorded without its contents.
    body: Option<Vec<u8>>,
    pass: u32,
}

impl CallTopic {
    /// A client of the service of `channel` (see [`service_of`]) played as `played_as`.
    pub fn open(
        participant: &DomainParticipant,
        publisher: &Publisher,
        subscriber: &Subscriber,
        channel: &RecordedChannel,
        played_as: &str,
    ) -> Result<Self, String> {
        let service = service_of(channel, played_as)
            .ok_or_else(|| format!("{} holds no service's events", channel.topic))?;
        let service_type = names::service_type_of(&channel.schema_name)
            .ok_or_else(|| format!("{} is no service event type", channel.schema_name))?;
        let wire = names::dds_topic_name(&service);
        let base = wire.strip_prefix("rt/").unwrap_or(&wire);
        let (request_topic, reply_topic) = (format!("rq/{base}Request"), format!("rr/{base}Reply"));
        let qos = service_qos();
        let topic = |name: &String, suffix: &str| {
            participant
                .create_topic(
                    name.clone(),
                    names::dds_type_name(&format!("{service_type}{suffix}")),
                    &qos,
                    TopicKind::NoKey,
                )
                .map_err(|e| format!("cannot create DDS topic {name}: {e}"))
        };
        let writer = publisher
            .create_datawriter_no_key::<Cdr, Encapsulated<1>>(
                &topic(&request_topic, "_Request")?,
                Some(qos.clone()),
            )
            .map_err(|e| format!("cannot write DDS topic {request_topic}: {e}"))?;
        let reader: Reader = subscriber
            .create_simple_datareader_no_key(&topic(&reply_topic, "_Response")?, Some(qos.clone()))
            .map_err(|e| format!("cannot read DDS topic {reply_topic}: {e}"))?;
        Ok(Self {
            reader_guid: reader.guid(),
            layout: OnceLock::new(),
            state: Mutex::new(State {
                reader,
                reply_writers: 0,
                pass: 0,
                distinct: Distinct::default(),
                pending: HashSet::new(),
                counts: PlayedCalls {
                    service: service.clone(),
                    service_type,
                    ..PlayedCalls::default()
                },
            }),
            matched: AtomicUsize::new(0),
            service,
            writer,
        })
    }

    /// The request one recorded event of `channel` carries, in pass `pass` of the playback;
    /// `None` for a response's event.
    pub fn prepare(
        &self,
        channel: &RecordedChannel,
        cdr: &[u8],
        pass: u32,
    ) -> Result<Option<Request>, String> {
        let info = EventInfo::of(cdr)?;
        if !info.is_request() {
            return Ok(None);
        }
        let layout = self
            .layout
            .get_or_init(|| layout_of(channel))
            .as_ref()
            .map_err(Clone::clone)?;
        let body = layout.request(cdr)?;
        Ok(Some(Request { info, body, pass }))
    }

    /// Calls the service with `request` unless it was called with it already; whether it
    /// was called now.
    pub fn send(&self, request: Request) -> Result<bool, String> {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if state.pass != request.pass {
            state.pass = request.pass;
            state.distinct = Distinct::default();
        }
        if !state.distinct.is_new_call(&request.info) {
            return Ok(false);
        }
        let Some(body) = request.body else {
            state.counts.without_contents += 1;
            return Ok(false);
        };
        let mut cdr = Vec::with_capacity(4 + body.len());
        cdr.extend_from_slice(&[CDR_LE[0], CDR_LE[1], 0, 0]);
        cdr.extend_from_slice(&body);
        let options = WriteOptionsBuilder::new()
            .source_timestamp(Timestamp::now())
            // rmw_fastrtps' clients name their reply reader so; the sequence number
            // is "unknown".
            .related_sample_identity(SampleIdentity {
                writer_guid: self.reader_guid,
                sequence_number: SequenceNumber::from_high_low(-1, 0),
            })
            .build();
        let sent = self
            .writer
            .write_with_options(Cdr(Bytes::from(cdr)), options)
            .map_err(|e| format!("cannot call {}: {e}", self.service))?;
        state.pending.insert(i64::from(sent.sequence_number));
        state.counts.sent += 1;
        state.take_replies(self.reader_guid, self.writer.guid());
        Ok(true)
    }

    /// Servers of the service matched now: the fewer of the request readers and the
    /// reply writers matched (a server has one of each).
    pub fn subscribers(&self) -> usize {
        while let Some(status) = self.writer.try_recv_status() {
            if let DataWriterStatus::PublicationMatched { current, .. } = status {
                let count = usize::try_from(current.count()).unwrap_or(0);
                self.matched.store(count, Ordering::Relaxed);
            }
        }
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        while let Some(status) = state.reader.try_recv_status() {
            if let DataReaderStatus::SubscriptionMatched { current, .. } = status {
                state.reply_writers = usize::try_from(current.count()).unwrap_or(0);
            }
        }
        self.matched
            .load(Ordering::Relaxed)
            .min(state.reply_writers)
    }

    /// Waits until `until` at most for the replies to the calls sent.
    pub fn wait_for_replies(&self, until: Instant) {
        loop {
            let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
            state.take_replies(self.reader_guid, self.writer.guid());
            if state.pending.is_empty() || Instant::now() >= until {
                return;
            }
            drop(state);
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// What the service's calls went through.
    pub fn report(&self) -> PlayedCalls {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        state.take_replies(self.reader_guid, self.writer.guid());
        state.counts.clone()
    }
}

impl State {
    /// Counts the replies that came to the requests sent.
    fn take_replies(&mut self, reader: GUID, writer: GUID) {
        while let Ok(Some(reply)) = self.reader.try_take_one() {
            let Some(answered) = reply.related_sample_identity() else {
                continue;
            };
            if (answered.writer_guid == reader || answered.writer_guid == writer)
                && self.pending.remove(&i64::from(answered.sequence_number))
            {
                self.counts.answered += 1;
            }
        }
    }
}

/// ROS 2's QoS of a service's requests and replies (rmw's `rmw_qos_profile_services_default`):
/// reliable, volatile; deeper than its 10 so that a burst of recorded calls is all sent.
fn service_qos() -> QosPolicies {
    QosPolicyBuilder::new()
        .reliability(Reliability::Reliable {
            max_blocking_time: rustdds::Duration::from_millis(1000),
        })
        .durability(Durability::Volatile)
        .history(History::KeepLast { depth: 1000 })
        .build()
}

/// The layout of the events of `channel`, from its recorded `ros2msg` definition.
fn layout_of(channel: &RecordedChannel) -> Result<EventLayout, String> {
    let name = &channel.schema_name;
    if channel.schema_data.is_empty() {
        return Err(format!(
            "the recording has no definition of {name}, which the requests are read with"
        ));
    }
    if channel.schema_encoding != "ros2msg" {
        return Err(format!(
            "the definition of {name} is {}, not ros2msg",
            channel.schema_encoding
        ));
    }
    let text = std::str::from_utf8(&channel.schema_data)
        .map_err(|_| format!("the definition of {name} is not UTF-8"))?;
    EventLayout::parse(name, text).map_err(|e| format!("cannot read the definition of {name}: {e}"))
}

/// Which recorded request events are calls of their own (see the module's doc).
#[derive(Debug, Default)]
struct Distinct {
    /// (client GID, sequence number) of every request event seen.
    seen: HashSet<([u8; 16], i64)>,
    /// Events whose other side has not come yet: (sent by the client, GUID prefix,
    /// sequence number) → how many.
    unpaired: HashMap<(bool, [u8; 12], i64), u32>,
}

impl Distinct {
    /// Whether the request event `info` is a call not seen yet.
    fn is_new_call(&mut self, info: &EventInfo) -> bool {
        let seq = info.sequence_number;
        if !self.seen.insert((info.client_gid, seq)) {
            return false;
        }
        let mut prefix = [0; 12];
        prefix.copy_from_slice(&info.client_gid[..12]);
        let sent = info.event_type == REQUEST_SENT;
        if let Some(count) = self.unpaired.get_mut(&(!sent, prefix, seq)) {
            *count -= 1;
            if *count == 0 {
                self.unpaired.remove(&(!sent, prefix, seq));
            }
            return false;
        }
        *self.unpaired.entry((sent, prefix, seq)).or_default() += 1;
        true
    }
}

/// A reply, of which only its coming counts.
pub(crate) struct Reply;

/// Takes a reply of any content.
pub(crate) struct ReplyAdapter;

/// The decoder of [`ReplyAdapter`], which reads nothing.
#[derive(Clone)]
pub(crate) struct Discard;

impl no_key::DeserializerAdapter<Reply> for ReplyAdapter {
    type Error = Infallible;
    type Decoded = Reply;

    fn supported_encodings() -> &'static [RepresentationIdentifier] {
        &[
            RepresentationIdentifier::CDR_LE,
            RepresentationIdentifier::CDR_BE,
        ]
    }

    fn transform_decoded(decoded: Reply) -> Reply {
        decoded
    }
}

impl<'de> no_key::Decode<'de, Reply> for Discard {
    type Error = Infallible;

    fn decode_bytes(self, _: &'de [u8], _: RepresentationIdentifier) -> Result<Reply, Infallible> {
        Ok(Reply)
    }
}

impl no_key::DefaultDecoder<Reply> for ReplyAdapter {
    type Decoder = Discard;
    const DECODER: Discard = Discard;
}

#[cfg(test)]
mod tests {
    use super::*;
    use recd_ros2::service_request::REQUEST_RECEIVED;

    fn event(event_type: u8, gid: [u8; 16], seq: i64) -> EventInfo {
        EventInfo {
            event_type,
            client_gid: gid,
            sequence_number: seq,
        }
    }

    /// A GID of participant `p`, entity `e`.
    fn gid(p: u8, e: u8) -> [u8; 16] {
        let mut gid = [p; 16];
        gid[12..].copy_from_slice(&[0, 0, e, 3]);
        gid
    }

    #[test]
    fn a_request_seen_by_both_ends_is_one_call() {
        let mut distinct = Distinct::default();
        // The ends name the client by different GUIDs of its participant.
        assert!(distinct.is_new_call(&event(REQUEST_SENT, gid(1, 1), 1)));
        assert!(!distinct.is_new_call(&event(REQUEST_RECEIVED, gid(1, 2), 1)));
        // A second server receives the same call.
        assert!(!distinct.is_new_call(&event(REQUEST_RECEIVED, gid(1, 2), 1)));
        // The server's event first (a client without introspection, then one with).
        assert!(distinct.is_new_call(&event(REQUEST_RECEIVED, gid(1, 2), 2)));
        assert!(!distinct.is_new_call(&event(REQUEST_SENT, gid(1, 1), 2)));
        // Two clients of one participant, each at its first call; both servers' events.
        assert!(distinct.is_new_call(&event(REQUEST_SENT, gid(2, 1), 1)));
        assert!(distinct.is_new_call(&event(REQUEST_SENT, gid(2, 5), 1)));
        assert!(!distinct.is_new_call(&event(REQUEST_RECEIVED, gid(2, 2), 1)));
        assert!(!distinct.is_new_call(&event(REQUEST_RECEIVED, gid(2, 6), 1)));
        // Only the server recorded: each call once.
        assert!(distinct.is_new_call(&event(REQUEST_RECEIVED, gid(3, 2), 1)));
        assert!(distinct.is_new_call(&event(REQUEST_RECEIVED, gid(3, 2), 2)));
        // One GID on both ends (Kilted's rmw_fastrtps, rmw_cyclonedds).
        assert!(distinct.is_new_call(&event(REQUEST_SENT, gid(4, 1), 7)));
        assert!(!distinct.is_new_call(&event(REQUEST_RECEIVED, gid(4, 1), 7)));
    }

    fn channel(topic: &str, schema: &str) -> RecordedChannel {
        RecordedChannel {
            topic: topic.into(),
            message_encoding: "cdr".into(),
            schema_name: schema.into(),
            schema_encoding: "ros2msg".into(),
            schema_data: Vec::new(),
            metadata: Default::default(),
        }
    }

    #[test]
    fn only_a_services_events_are_called_and_a_remap_names_the_service() {
        let events = channel("/set_bool/_service_event", "std_srvs/srv/SetBool_Event");
        assert_eq!(
            service_of(&events, "/set_bool/_service_event").as_deref(),
            Some("/set_bool")
        );
        assert_eq!(
            service_of(&events, "/other/_service_event").as_deref(),
            Some("/other")
        );
        let topic = channel("/chatter", "std_msgs/msg/String");
        assert_eq!(service_of(&topic, "/chatter"), None);
        let action = channel(
            "/fib/_action/send_goal/_service_event",
            "example_interfaces/action/Fibonacci_SendGoal_Event",
        );
        assert_eq!(service_of(&action, &action.topic), None);
        let error = layout_of(&events).unwrap_err();
        assert!(
            error.contains("no definition of std_srvs/srv/SetBool_Event"),
            "{error}"
        );
    }
}
