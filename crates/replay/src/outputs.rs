//! Where each played channel goes: an iceoryx2 service ([`shm`](crate::shm)), a DDS
//! writer ([`dds`](crate::dds)) or a Zenoh publisher ([`zenoh`](crate::zenoh)), chosen by
//! how it was recorded, or with `--services-as-calls` a service's client
//! ([`calls`](crate::calls)); channels left out, and why.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use recd_storage::RecordedChannel;

use crate::calls::{self, CallTopic, Request};
use crate::dds::{self, DdsOutput, DdsTopic, CDR_LE};
use crate::discovery::{self, SubscriberWait, DISCOVERY_BOUND};
use crate::shm::{self, ShmOutput, ShmTopic};
#[cfg(feature = "zenoh")]
use crate::zenoh::{ZenohOutput, ZenohTopic};
use crate::{PlayError, PlayOptions, PlayedCalls};

/// One channel's output.
pub enum Output {
    /// An iceoryx2 publisher.
    Shm(Box<ShmTopic>),
    /// A DDS writer.
    Dds(DdsTopic),
    /// A Zenoh publisher, as rmw_zenoh's.
    #[cfg(feature = "zenoh")]
    Zenoh(ZenohTopic),
    /// A client of the service whose events the channel holds (`--services-as-calls`).
    Call(Box<CallTopic>),
}

/// A message made ready to leave: for iceoryx2 copied into its loan already.
pub enum Prepared<'a> {
    /// A filled iceoryx2 sample.
    Shm(shm::FilledSample),
    /// A DDS message and its writer.
    Dds(&'a DdsTopic, Bytes),
    /// A Zenoh message and its publisher.
    #[cfg(feature = "zenoh")]
    Zenoh(&'a ZenohTopic, Bytes),
    /// A recorded request and the client to send it with.
    Call(&'a CallTopic, Request),
    /// Nothing to send: a service event that is no request.
    Nothing,
}

impl Prepared<'_> {
    /// Sends it; false when there was nothing to send (a service event that is no
    /// request, or a request already sent).
    pub fn send(self) -> Result<bool, String> {
        match self {
            Self::Shm(sample) => ShmTopic::send_filled(sample).map(|()| true),
            Self::Dds(topic, data) => topic.send(data).map(|()| true),
            #[cfg(feature = "zenoh")]
            Self::Zenoh(topic, data) => topic.send(data).map(|()| true),
            Self::Call(topic, request) => topic.send(request),
            Self::Nothing => Ok(false),
        }
    }
}

impl Output {
    /// Makes one recorded message of `channel`, in pass `pass` of the playback, ready to
    /// send as it was recorded (the copy into an iceoryx2 loan happens here, before the
    /// message is due; a service event's request is taken out of it).
    pub fn prepare(
        &self,
        channel: &RecordedChannel,
        data: &Bytes,
        pass: u32,
    ) -> Result<Prepared<'_>, String> {
        match self {
            Self::Shm(topic) => topic.fill(data).map(Prepared::Shm),
            Self::Dds(topic) => Ok(Prepared::Dds(topic, data.clone())),
            #[cfg(feature = "zenoh")]
            Self::Zenoh(topic) => Ok(Prepared::Zenoh(topic, data.clone())),
            Self::Call(topic) => Ok(match topic.prepare(channel, data, pass)? {
                Some(request) => Prepared::Call(topic, request),
                None => Prepared::Nothing,
            }),
        }
    }

    /// Subscribers (matched readers) now; for Zenoh 1 while any matches.
    pub fn subscribers(&self) -> usize {
        match self {
            Self::Shm(topic) => topic.subscribers(),
            Self::Dds(topic) => topic.subscribers(),
            #[cfg(feature = "zenoh")]
            Self::Zenoh(topic) => topic.subscribers(),
            Self::Call(topic) => topic.subscribers(),
        }
    }

    /// Whether its subscribers are found by discovery (DDS, Zenoh), which takes a moment.
    pub fn is_discovered(&self) -> bool {
        !matches!(self, Self::Shm(_))
    }

    /// Waits up to `limit` until what was sent has been received, where the transport
    /// can tell (reliable DDS readers acknowledge).
    pub fn flush(&self, limit: Duration) {
        if let Self::Dds(topic) = self {
            topic.flush(limit);
        }
    }
}

/// The outputs of a playback, by recorded topic name, and the transports they use.
pub struct Outputs {
    // Declared first so that the ports go before the node and participant that made them.
    /// By recorded topic name; shared with the sending threads.
    pub topics: Arc<BTreeMap<String, Output>>,
    /// The `/clock` writer (`--clock`).
    pub clock: Option<DdsTopic>,
    _shm: Option<ShmOutput>,
    _dds: Option<DdsOutput>,
    #[cfg(feature = "zenoh")]
    _zenoh: Option<ZenohOutput>,
}

/// A selected channel and what is known before playing it.
pub struct Planned<'a> {
    /// The channel.
    pub channel: &'a RecordedChannel,
    /// The encapsulation of its first recorded message (DDS channels only).
    pub representation: Option<[u8; 2]>,
}

impl Outputs {
    /// Opens an output for each of `planned` whose transport `options` allow; the others
    /// are named in `skipped` with the reason.
    pub fn open(
        planned: &[Planned<'_>],
        options: &PlayOptions,
        skipped: &mut BTreeMap<String, String>,
    ) -> Result<Self, PlayError> {
        let mut topics = BTreeMap::new();
        let mut shm_node = None;
        let mut dds_participant = None;
        #[cfg(feature = "zenoh")]
        let mut zenoh_session: Option<ZenohOutput> = None;
        for plan in planned {
            let channel = plan.channel;
            let played_as = options
                .remap
                .get(&channel.topic)
                .map_or(channel.topic.as_str(), String::as_str);
            let output = if shm::is_shm(channel) {
                if !options.iceoryx2 {
                    skipped.insert(channel.topic.clone(), "left out by --no-iceoryx2".into());
                    continue;
                }
                let node = match &mut shm_node {
                    Some(node) => node,
                    none => none.insert(
                        ShmOutput::new(options.iceoryx2_prefix.as_deref())
                            .map_err(PlayError::Shm)?,
                    ),
                };
                Output::Shm(Box::new(
                    node.open(channel, played_as).map_err(PlayError::Shm)?,
                ))
            } else if crate::zenoh::is_zenoh(channel) {
                if options.services_as_calls && calls::service_of(channel, played_as).is_some() {
                    skipped.insert(channel.topic.clone(), calls::NOT_OVER_ZENOH.into());
                    continue;
                }
                if !options.zenoh {
                    skipped.insert(channel.topic.clone(), "left out by --no-zenoh".into());
                    continue;
                }
                #[cfg(feature = "zenoh")]
                {
                    let session = match &mut zenoh_session {
                        Some(session) => session,
                        none => none.insert(
                            ZenohOutput::new(&options.zenoh_config).map_err(PlayError::Zenoh)?,
                        ),
                    };
                    Output::Zenoh(session.open(channel, played_as).map_err(PlayError::Zenoh)?)
                }
                #[cfg(not(feature = "zenoh"))]
                {
                    skipped.insert(channel.topic.clone(), crate::zenoh::WITHOUT_ZENOH.into());
                    continue;
                }
            } else if dds::is_dds(channel) {
                if !options.dds {
                    skipped.insert(channel.topic.clone(), "left out by --no-dds".into());
                    continue;
                }
                let participant = participant(&mut dds_participant, options)?;
                if options.services_as_calls && calls::service_of(channel, played_as).is_some() {
                    let (domain, publisher, subscriber) = participant.endpoints();
                    let client = CallTopic::open(domain, publisher, subscriber, channel, played_as)
                        .map_err(PlayError::Dds)?;
                    topics.insert(channel.topic.clone(), Output::Call(Box::new(client)));
                    continue;
                }
                let representation = plan.representation.unwrap_or(CDR_LE);
                Output::Dds(
                    participant
                        .open(channel, played_as, representation)
                        .map_err(PlayError::Dds)?,
                )
            } else {
                skipped.insert(
                    channel.topic.clone(),
                    format!(
                        "its message encoding {} is neither iceoryx2 nor cdr",
                        channel.message_encoding
                    ),
                );
                continue;
            };
            topics.insert(channel.topic.clone(), output);
        }
        let clock = match options.clock {
            Some(_) => {
                let participant = participant(&mut dds_participant, options)?;
                Some(participant.clock().map_err(PlayError::Dds)?)
            }
            None => None,
        };
        if let Some(participant) = &dds_participant {
            let writers = topics.values().filter_map(|output| match output {
                Output::Dds(topic) => Some(topic),
                _ => None,
            });
            participant
                .announce(writers.chain(&clock))
                .map_err(PlayError::Dds)?;
        }
        Ok(Self {
            topics: Arc::new(topics),
            clock,
            _shm: shm_node,
            _dds: dds_participant,
            #[cfg(feature = "zenoh")]
            _zenoh: zenoh_session,
        })
    }

    /// Waits for subscribers as `how` says, or until `stop` says so. A call is sent once
    /// and never again: by default a service played as calls gets up to
    /// [`DISCOVERY_BOUND`] for its server to be found (discovery then settles again), where
    /// a topic gets only until discovery settles.
    pub fn wait_for_subscribers(&self, how: SubscriberWait, stop: impl Fn() -> bool) {
        let started = Instant::now();
        let counts = || {
            self.topics
                .values()
                .map(|t| (t.subscribers(), t.is_discovered()))
                .collect()
        };
        discovery::wait(how, counts, &stop);
        if how != SubscriberWait::Settled {
            return;
        }
        let serverless = || {
            (self.topics.values())
                .any(|output| matches!(output, Output::Call(_)) && output.subscribers() == 0)
        };
        if !serverless() {
            return;
        }
        while serverless() && started.elapsed() < DISCOVERY_BOUND && !stop() {
            std::thread::sleep(Duration::from_millis(10));
        }
        if !serverless() {
            discovery::wait(how, counts, &stop);
        }
    }

    /// Lets every output deliver what it sent, up to `limit` each; then waits up to
    /// [`calls::REPLY_WAIT`] in all for the replies to the calls sent.
    pub fn flush(&self, limit: Duration) {
        for output in self.topics.values() {
            output.flush(limit);
        }
        let until = Instant::now() + calls::REPLY_WAIT;
        for output in self.topics.values() {
            if let Output::Call(topic) = output {
                topic.wait_for_replies(until);
            }
        }
    }

    /// What each service played as calls went through.
    pub fn calls(&self) -> Vec<PlayedCalls> {
        (self.topics.values())
            .filter_map(|output| match output {
                Output::Call(topic) => Some(topic.report()),
                _ => None,
            })
            .collect()
    }
}

/// The playback's DDS participant, joined on first use.
fn participant<'a>(
    slot: &'a mut Option<DdsOutput>,
    options: &PlayOptions,
) -> Result<&'a mut DdsOutput, PlayError> {
    match slot {
        Some(participant) => Ok(participant),
        none => Ok(none.insert(
            DdsOutput::new(options.dds_domain, &options.dds_interfaces).map_err(PlayError::Dds)?,
        )),
    }
}

/// Checks `--remap` against the recorded topics: each FROM must be one, and no two topics
/// may end up with one name.
pub fn check_remaps(
    remap: &BTreeMap<String, String>,
    topics: &BTreeMap<String, RecordedChannel>,
) -> Result<(), PlayError> {
    for from in remap.keys() {
        if !topics.contains_key(from) {
            return Err(PlayError::Remap(format!(
                "--remap {from}:={}: the recording has no topic {from}",
                remap[from]
            )));
        }
    }
    let mut played: HashMap<&str, &str> = HashMap::new();
    for topic in topics.keys() {
        let to = remap.get(topic).map_or(topic.as_str(), String::as_str);
        if let Some(other) = played.insert(to, topic) {
            return Err(PlayError::Remap(format!(
                "--remap: {other} and {topic} would both play as {to}"
            )));
        }
    }
    Ok(())
}
