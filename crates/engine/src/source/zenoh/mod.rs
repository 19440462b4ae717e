//! The Zenoh source: records ROS 2 topics of rmw_zenoh, ROS 2's Zenoh middleware, as the
//! serialized CDR they came as, into channels of the MCAP `ros2` profile (the same as
//! DDS topics get).
//!
//! One Zenoh session per recording ([`session`]). Discovery follows rmw_zenoh's
//! liveliness tokens ([`token`]): a publisher's token names its topic, type, type hash
//! and QoS ([`qos`]). Samples arrive on Zenoh's own threads, on one wildcard
//! subscription of the domain when every topic is recorded, else on one subscription per
//! selected topic; the callback hands them over ([`receive`]), with each sample's
//! attachment ([`attachment`]) giving its publisher, sequence number and source time.
//! The source thread ([`ZenohSource::run`]) describes topics (reading message
//! definitions), declares and drops subscriptions, takes selection changes and wakes the
//! writer: nothing slow happens on Zenoh's threads. [`bare`] subscribes the same way and
//! keeps nothing: the benchmarks' reference for what recd adds to Zenoh.

mod attachment;
mod bare;
mod channel;
mod history;
mod holding;
mod key;
mod qos;
mod receive;
mod session;
mod token;
mod types;

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};

use zenoh::pubsub::Subscriber;
use zenoh::sample::{Sample, SampleKind};
use zenoh::{Session, Wait};

use recd_ros2::msgdef::MessageDefinitions;
use recd_ros2::qos::QosProfile;

pub use bare::{BareZenohCounts, BareZenohSubscriber};
pub use session::ZenohSessionError;

/// rmw_zenoh's formats and recd's session, for a replay that publishes as rmw_zenoh's
/// publishers do.
pub mod wire {
    pub use super::attachment::{Attachment, Gid, GID_SIZE};
    pub use super::key::{topic_key, DataKey};
    pub use super::qos::to_field as qos_field;
    pub use super::session::{open_session, zenoh_config, ZenohSessionError, DEFAULT_ROUTER};
    pub use super::token::{gid_of, mangle, node_token, publisher_token, PublisherToken};
}

use super::dds::channel::Definitions;
use super::stats::ReceiveStats;
use super::{SelectionLink, SourceLink, SourceSettings};
use crate::config::ZenohConfig;
use crate::registry::TopicRegistry;
use crate::topic::{Topic, TopicCounters};
use key::DataKey;
use receive::{Inbox, Route, Slot};
use token::{EntityKind, Token};

/// Settings of the Zenoh source.
pub(crate) struct ZenohSettings {
    pub common: SourceSettings,
    pub config: ZenohConfig,
}

/// Why the Zenoh source could not start.
#[derive(Debug, thiserror::Error)]
pub enum ZenohError {
    /// The domain id is out of ROS 2's range.
    #[error("ROS 2 domain {0} is out of range (0 to 232)")]
    Domain(u16),
    /// The session could not be opened.
    #[error(transparent)]
    Session(#[from] ZenohSessionError),
    /// The thread that opens the session did not start.
    #[error("cannot start a thread to open the Zenoh session: {0}")]
    Thread(std::io::Error),
    /// A subscription could not be declared.
    #[error("cannot subscribe to {what} over Zenoh: {reason}")]
    Subscribe {
        /// The key expression.
        what: String,
        /// Zenoh's reason.
        reason: String,
    },
}

/// Highest ROS 2 domain id.
const MAX_DOMAIN: u16 = 232;
/// How often the source thread wakes the writer for what Zenoh's threads handed over
/// (fewer than [`receive::WAKE_BATCH`] samples since the last wake-up), and looks at the
/// selection and the stop flag.
pub(super) const GATHER_TIME: Duration = Duration::from_millis(5);
/// How long the source thread waits for room to hand over a selection change.
const CHANGE_HANDOVER_LIMIT: Duration = Duration::from_secs(1);
/// The problem key of what concerns the whole source.
const SOURCE: &str = "(zenoh)";

/// What the source thread learns from Zenoh's threads.
pub(super) enum Event {
    /// A liveliness token appeared (`alive`) or went away.
    Token { key: String, alive: bool },
    /// Samples came on a data key no topic describes yet.
    Ask(String),
    /// A node's reply to a question for the definition of the type of this hash.
    TypeReply { hash: String, reply: Vec<u8> },
    /// A question for the type of this hash ended (answered or not).
    TypeAskEnded { hash: String },
}

/// A topic, as the source thread keeps it.
struct KnownTopic {
    /// ROS topic and type.
    name: (String, String),
    /// Its publishers alive, by token key.
    publishers: HashMap<String, Token>,
    /// Its own subscription, when topics are subscribed one by one.
    subscriber: Option<Subscriber<()>>,
}

/// The Zenoh source: its session, subscriptions and the thread that tends them.
pub(crate) struct ZenohSource {
    session: Session,
    settings: ZenohSettings,
    registry: Arc<TopicRegistry>,
    stop: Arc<AtomicBool>,
    stats: Arc<ReceiveStats>,
    selection: SelectionLink,
    inbox: Arc<Mutex<Inbox>>,
    events: mpsc::Receiver<Event>,
    /// The liveliness subscription, kept for its life.
    _liveliness: Subscriber<()>,
    /// The domain's wildcard subscription, when every topic is recorded.
    wildcard: Option<Subscriber<()>>,
    /// Topics in slot order (the inbox's slots).
    topics: Vec<KnownTopic>,
    /// Publisher tokens of topics the selection leaves out, by token key.
    left_out: HashMap<String, Token>,
    definitions: Definitions,
    /// Token formats refused already (each named once).
    refused: Vec<String>,
    /// New topics waiting for their type's definition, and the types asked.
    held: Vec<types::HeldTopic>,
    asking: Vec<types::Asking>,
    /// Questions sent so far (their sequence numbers).
    asks_sent: u64,
    /// Where Zenoh's threads send what they learn.
    event_tx: mpsc::Sender<Event>,
}

impl ZenohSource {
    /// Opens the session and subscribes to rmw_zenoh's liveliness tokens (and the
    /// domain's samples, when every topic is recorded); [`ZenohSource::run`] tends them.
    ///
    /// On a thread of its own: Zenoh refuses to wait inside a caller's current-thread
    /// Tokio runtime (recd answers requests on one).
    pub fn open(settings: ZenohSettings, link: SourceLink) -> Result<Self, ZenohError> {
        std::thread::scope(|scope| {
            std::thread::Builder::new()
                .name("recd-zenoh-open".into())
                .spawn_scoped(scope, || Self::open_here(settings, link))
                .map_err(ZenohError::Thread)?
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
        })
    }

    fn open_here(settings: ZenohSettings, link: SourceLink) -> Result<Self, ZenohError> {
        let domain = settings.config.domain;
        if domain > MAX_DOMAIN {
            return Err(ZenohError::Domain(domain));
        }
        let SourceLink {
            tx,
            registry,
            stop,
            stats,
            selection,
        } = link;
        let session = session::open_session(&settings.config)?;
        let (event_tx, events) = mpsc::channel();
        let inbox = Arc::new(Mutex::new(Inbox::new(
            tx,
            settings.common.zero_copy_threshold,
            event_tx.clone(),
        )));
        let tokens = event_tx.clone();
        let liveliness_key = token::domain_tokens(domain);
        let liveliness = session
            .liveliness()
            .declare_subscriber(&liveliness_key)
            .history(true)
            .callback(move |sample: Sample| {
                let _ = tokens.send(Event::Token {
                    key: sample.key_expr().as_str().to_string(),
                    alive: sample.kind() == SampleKind::Put,
                });
            })
            .wait()
            .map_err(|e| ZenohError::Subscribe {
                what: liveliness_key.clone(),
                reason: e.to_string(),
            })?;
        let definitions = Definitions::new(MessageDefinitions::with_ament_prefix_path(
            settings.config.message_dirs.clone(),
        ))
        .with_cache(settings.config.type_cache.clone());
        let mut source = Self {
            session,
            settings,
            registry,
            stop,
            stats,
            selection,
            inbox,
            events,
            _liveliness: liveliness,
            wildcard: None,
            topics: Vec::new(),
            left_out: HashMap::new(),
            definitions,
            refused: Vec::new(),
            held: Vec::new(),
            asking: Vec::new(),
            asks_sent: 0,
            event_tx,
        };
        source.subscribe_wildcard()?;
        Ok(source)
    }

    /// What the source reports about its thread.
    pub fn stats(&self) -> Arc<ReceiveStats> {
        self.stats.clone()
    }

    /// Names the thread to wake after handing something over.
    pub fn set_consumer_thread(&mut self, thread: std::thread::Thread) {
        self.lock().tx().set_consumer_thread(thread);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inbox> {
        // A panic on a Zenoh thread while it held the lock leaves the inbox as it was
        // between two samples: keep recording.
        self.inbox.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Tends the source until asked to stop, then hands over the stop mark.
    pub fn run(mut self) {
        let priority = self.settings.common.receive_priority;
        (self.stats).set_scheduling(super::priority::schedule_this_thread(priority));
        loop {
            let stopping = self.stop.load(Ordering::Acquire);
            if stopping {
                self.release_every_held();
            }
            self.take_selection_change();
            self.tend_asking();
            let deadline = Instant::now() + GATHER_TIME;
            while let Ok(event) = self.events.try_recv() {
                self.handle(event);
                if Instant::now() >= deadline {
                    break;
                }
            }
            {
                let mut inbox = self.lock();
                inbox.announce_pending();
                inbox.wake();
            }
            self.stats.add_pass(Duration::ZERO);
            if stopping {
                break;
            }
            if let Ok(event) = self.events.recv_timeout(GATHER_TIME) {
                self.handle(event);
            }
        }
        drop_subscription(&mut self.wildcard);
        for topic in &mut self.topics {
            drop_subscription(&mut topic.subscriber);
        }
        self.lock().close();
        let _ = self.session.close().wait();
    }

    fn handle(&mut self, event: Event) {
        match event {
            Event::Token { key, alive } => match Token::parse(&key) {
                Ok(token) if token.kind == EntityKind::Publisher => {
                    if alive {
                        self.publisher_seen(key, token);
                    } else {
                        self.publisher_left(&key, &token);
                    }
                }
                Ok(_) => {}
                Err(error) => self.refuse_token(&key, error),
            },
            Event::Ask(key) => self.describe_key(&key),
            Event::TypeReply { hash, reply } => self.type_reply(&hash, &reply),
            Event::TypeAskEnded { hash } => self.type_ask_ended(&hash),
        }
    }

    /// Names a token recd cannot read, once per format, in the log and the status.
    fn refuse_token(&mut self, key: &str, error: token::TokenError) {
        let format = error.format();
        if self.refused.contains(&format) {
            return;
        }
        self.refused.push(format);
        let text =
            format!("a liveliness token of a format recd does not know is left alone ({error})");
        tracing::warn!(token = key, "{text}");
        self.registry.note_problem(SOURCE, format!("{text}: {key}"));
    }

    /// A publisher's token: its topic is recorded if selected.
    fn publisher_seen(&mut self, key: String, token: Token) {
        let Some(entity) = token.topic.as_ref() else {
            return;
        };
        let name = (entity.ros_topic.clone(), entity.type_name.clone());
        if !self.selects(&name) {
            self.left_out.insert(key, token);
            return;
        }
        let slot = match self.slot_of(&name) {
            Some(slot) => slot,
            None if self.hold_for_type(&key, &token) => return,
            None => {
                let offers = entity.qos.iter();
                match self.add_topic(&name, entity.type_hash.as_str(), offers, None) {
                    Some(slot) => slot,
                    None => return,
                }
            }
        };
        let transient_local = entity.qos.as_ref().is_some_and(qos::transient_local);
        let known = &mut self.topics[slot];
        known.publishers.insert(key, token.clone());
        let publishers = known.publishers.len();
        self.lock().slots[slot]
            .topic
            .counters
            .set_publishers(publishers);
        if transient_local {
            if let Err(reason) = history::fetch(&self.session, &self.inbox, &token, slot) {
                self.registry
                    .note_problem(&service_of(&entity.ros_topic), reason);
            }
        }
    }

    /// A publisher's token went away: the topic retires after its last.
    fn publisher_left(&mut self, key: &str, token: &Token) {
        if self.left_out.remove(key).is_some() {
            return;
        }
        let Some(entity) = token.topic.as_ref() else {
            return;
        };
        let name = (entity.ros_topic.clone(), entity.type_name.clone());
        let Some(slot) = self.slot_of(&name) else {
            return;
        };
        let known = &mut self.topics[slot];
        if known.publishers.remove(key).is_none() {
            return;
        }
        let left = known.publishers.len();
        let mut inbox = self.lock();
        inbox.slots[slot].topic.counters.set_publishers(left);
        inbox.publisher_left(slot, Some(token::gid_of(key)), left == 0);
    }

    /// Samples came on `key` ahead of any token of its topic (the wildcard subscription):
    /// the topic is described from the key alone.
    fn describe_key(&mut self, key: &str) {
        let route = match DataKey::parse(key) {
            Some(data) if data.domain == self.settings.config.domain.to_string() => {
                let name = (data.ros_topic(), data.type_name.to_string());
                if !self.selects(&name) {
                    Route::Ignore
                } else {
                    match self.slot_of(&name) {
                        Some(slot) => Route::Slot(slot),
                        // Its samples wait until its type is known.
                        None if self.held_key(key, &name) => return,
                        None => match self.add_topic(&name, data.type_hash, [].iter(), None) {
                            Some(slot) => Route::Slot(slot),
                            None => Route::Ignore,
                        },
                    }
                }
            }
            _ => Route::Ignore,
        };
        self.lock().route(key, route);
    }

    fn slot_of(&self, name: &(String, String)) -> Option<usize> {
        self.topics.iter().position(|t| &t.name == name)
    }

    fn selects(&self, (topic, type_name): &(String, String)) -> bool {
        let dds_topic = format!("rt{topic}");
        super::dds::selected(&self.settings.common.filter, &dds_topic, type_name)
    }

    /// Describes a new topic in the next slot, with its own subscription (`subscriber`,
    /// or one made now) unless the wildcard one takes every topic.
    fn add_topic<'q>(
        &mut self,
        name: &(String, String),
        type_hash: &str,
        offers: impl Iterator<Item = &'q QosProfile>,
        subscriber: Option<Subscriber<()>>,
    ) -> Option<usize> {
        let domain = self.settings.config.domain;
        let service = service_of(&name.0);
        let profiles: Vec<QosProfile> = offers.cloned().collect();
        let shape = channel::TopicShape {
            domain,
            ros_topic: &name.0,
            type_name: &name.1,
            type_hash,
            offers: &profiles,
        };
        let (spec, missing) = channel::channel_spec(&shape, &mut self.definitions);
        match missing {
            Some(reason) => self.registry.note_problem(
                &service,
                format!("recorded without a message definition: {reason}"),
            ),
            None => self.registry.clear_problem(&service),
        }
        let subscriber = match subscriber {
            Some(subscriber) => Some(subscriber),
            None if self.wildcard.is_none() => Some(self.subscribe_topic(name)?),
            None => None,
        };
        let topic = self.registry.add_topic(|index| Topic {
            index,
            name: name.0.clone(),
            service,
            channel: spec,
            latched: profiles.iter().any(qos::transient_local),
            counters: TopicCounters::default(),
            health: Default::default(),
        });
        let throttle = self.settings.common.throttles.for_topic(&name.0);
        let slot = {
            let mut inbox = self.lock();
            inbox.slots.push(Slot::new(topic, name.clone(), throttle));
            inbox.announce_pending();
            inbox.slots.len() - 1
        };
        self.topics.push(KnownTopic {
            name: name.clone(),
            publishers: HashMap::new(),
            subscriber,
        });
        debug_assert_eq!(slot, self.topics.len() - 1);
        Some(slot)
    }

    /// A subscription of `key` whose samples go to the inbox.
    fn subscribe(&self, key: &str) -> Result<Subscriber<()>, ZenohError> {
        let inbox = self.inbox.clone();
        self.session
            .declare_subscriber(key.to_string())
            .callback(move |sample: Sample| {
                inbox
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .on_sample(&sample)
            })
            .wait()
            .map_err(|e| ZenohError::Subscribe {
                what: key.to_string(),
                reason: e.to_string(),
            })
    }

    /// One subscription of the whole domain when the selection takes every topic (but
    /// exclusions); none otherwise.
    fn subscribe_wildcard(&mut self) -> Result<(), ZenohError> {
        let every_topic = self.settings.common.filter.selects_everything();
        if every_topic && self.wildcard.is_none() {
            let key = format!("{}/**", self.settings.config.domain);
            self.wildcard = Some(self.subscribe(&key)?);
        }
        Ok(())
    }

    /// A subscription of the topic `name` alone (any type hash); a failure is named as
    /// the topic's problem.
    fn subscribe_topic(&self, (topic, type_name): &(String, String)) -> Option<Subscriber<()>> {
        let key = key::topic_key(self.settings.config.domain, topic, type_name);
        self.subscribe(&key)
            .map_err(|error| (self.registry).note_problem(&service_of(topic), error.to_string()))
            .ok()
    }

    /// Takes a change of the selection, if one is pending: topics no longer selected end
    /// (nothing of them is received from then on), a marker stamped with that moment
    /// follows them, then subscriptions are fitted to the selection and topics now
    /// selected open.
    fn take_selection_change(&mut self) {
        let Some(change) = self.selection.pending() else {
            return;
        };
        self.settings.common.filter = change.filter.clone();
        for slot in 0..self.topics.len() {
            let name = self.topics[slot].name.clone();
            if self.selects(&name) {
                continue;
            }
            let publishers = std::mem::take(&mut self.topics[slot].publishers);
            self.left_out.extend(publishers);
            let mut inbox = self.lock();
            if inbox.slots[slot].receiving {
                inbox.unselect(slot);
            }
        }
        let time_ns = crate::handoff::now_ns();
        {
            let mut inbox = self.lock();
            inbox.forget_routes();
            inbox.retirements.mark(recd_storage::Marker {
                time_ns,
                text: change.text,
            });
            inbox.send_retirements(CHANGE_HANDOVER_LIMIT);
        }
        self.selection.took(change.version, time_ns);
        self.fit_subscriptions();
        // Publishers left out before are looked at again.
        let left_out = std::mem::take(&mut self.left_out);
        for (key, token) in left_out {
            self.publisher_seen(key, token);
        }
    }

    /// One wildcard subscription while every topic is selected, else one per selected
    /// topic; a topic selected again receives again. The new subscriptions are declared
    /// before the old ones go, so that no sample is missed in between; one received
    /// twice meanwhile is recorded once (its sequence number was seen).
    fn fit_subscriptions(&mut self) {
        if let Err(error) = self.subscribe_wildcard() {
            self.registry.note_problem(SOURCE, error.to_string());
        }
        let wildcard = self.settings.common.filter.selects_everything();
        for slot in 0..self.topics.len() {
            let name = self.topics[slot].name.clone();
            let selected = self.selects(&name);
            if wildcard || !selected {
                drop_subscription(&mut self.topics[slot].subscriber);
            } else if self.topics[slot].subscriber.is_none() {
                self.topics[slot].subscriber = self.subscribe_topic(&name);
            }
            let subscribed = wildcard || self.topics[slot].subscriber.is_some();
            if selected && subscribed {
                self.lock().slots[slot].receiving = true;
            }
        }
        if !wildcard {
            drop_subscription(&mut self.wildcard);
        }
    }
}

/// What a Zenoh topic is called in problems and the status (`zenoh:/chatter`).
fn service_of(ros_topic: &str) -> String {
    format!("zenoh:{ros_topic}")
}

/// Undeclares a subscription, if there is one: no callback of it runs afterwards.
fn drop_subscription(subscription: &mut Option<Subscriber<()>>) {
    if let Some(subscriber) = subscription.take() {
        let _ = subscriber.undeclare().wait();
    }
}
