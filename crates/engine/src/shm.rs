//! The shared-memory source: finds iceoryx2 services, subscribes to them and hands every
//! sample to the writer thread without blocking.

use std::collections::{BTreeSet, HashMap};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use iceoryx2::identifiers::UniquePublisherId;
use iceoryx2::port::listener::Listener;
use iceoryx2::port::subscriber::Subscriber;
use iceoryx2::prelude::*;
use iceoryx2::sample::Sample;
use iceoryx2::service::marker::{CustomHeaderMarker, CustomPayloadMarker};
use iceoryx2::service::port_factory::{event, publish_subscribe};
use iceoryx2::service::static_config::messaging_pattern::MessagingPattern as PatternConfig;
use iceoryx2::service::static_config::publish_subscribe::StaticConfig as PubSubConfig;

use crate::handoff::{Item, Sender, Stamps};
use crate::held::{Held, LoanedBytes};
use crate::schedule::{PollBounds, PollSchedule};
use crate::select::TopicFilter;
use crate::service_dir::ServiceDirectory;
use crate::service_types::{channel_name, read_rmw_header, ServiceTypes};
use crate::state::SourceState;
use crate::topic::{Topic, TopicCounters};

/// The service flavour the recorder opens: its samples may move to the writer thread.
pub(crate) type Flavor = ipc_threadsafe::Service;
type RawSample = Sample<Flavor, [CustomPayloadMarker], CustomHeaderMarker>;
type RawSubscriber = Subscriber<Flavor, [CustomPayloadMarker], CustomHeaderMarker>;
type RawService = publish_subscribe::PortFactory<Flavor, [CustomPayloadMarker], CustomHeaderMarker>;

/// A sample on its way to the file, still in shared memory.
pub(crate) struct ShmSample {
    sample: RawSample,
    header_len: usize,
}

impl LoanedBytes for ShmSample {
    fn user_header(&self) -> &[u8] {
        // SAFETY: the user header occupies `header_len` bytes (its size in the service's
        // static config) and lives as long as the sample.
        unsafe {
            std::slice::from_raw_parts(
                (self.sample.user_header() as *const CustomHeaderMarker).cast::<u8>(),
                self.header_len,
            )
        }
    }

    fn payload(&self) -> &[u8] {
        payload_bytes(&self.sample)
    }
}

fn payload_bytes(sample: &RawSample) -> &[u8] {
    let payload = sample.payload();
    // SAFETY: CustomPayloadMarker is one byte; iceoryx2 sizes the slice in bytes.
    unsafe { std::slice::from_raw_parts(payload.as_ptr().cast::<u8>(), payload.len()) }
}

/// Settings of the source.
pub(crate) struct ShmSettings {
    pub filter: TopicFilter,
    pub zero_copy_threshold: usize,
    pub poll_bounds: PollBounds,
    pub discovery_interval: Duration,
}

struct OpenTopic {
    topic: Arc<Topic>,
    service: RawService,
    subscriber: RawSubscriber,
    announced: bool,
    header_len: usize,
    rmw_header: bool,
    last_sequence: Vec<(UniquePublisherId, u64)>,
    rounds_without_publisher: u32,
    schedule: PollSchedule,
}

struct EventPort {
    service: String,
    _factory: event::PortFactory<Flavor>,
    listener: Listener<Flavor>,
}

/// The receive thread.
pub(crate) struct ShmSource {
    node: Node<Flavor>,
    settings: ShmSettings,
    tx: Sender<Held>,
    state: Arc<SourceState>,
    stop: Arc<AtomicBool>,
    open: Vec<OpenTopic>,
    /// Every topic recorded so far with the types it was recorded with: a service that
    /// comes back with the same types continues its topic.
    known: HashMap<String, (Arc<Topic>, ServiceTypes)>,
    pending_retire: Vec<u32>,
    /// When the next topic is due to be polled.
    next_poll: Instant,
    /// Which topic the last pass started with.
    first_polled: usize,
    /// Tells whether a discovery round needs a full `Service::list`.
    service_dir: ServiceDirectory,
    /// Every event service seen by the last full listing.
    event_services: BTreeSet<String>,
}

impl ShmSource {
    pub fn new(
        node: Node<Flavor>,
        settings: ShmSettings,
        tx: Sender<Held>,
        state: Arc<SourceState>,
        stop: Arc<AtomicBool>,
    ) -> Self {
        Self {
            next_poll: Instant::now(),
            first_polled: 0,
            service_dir: ServiceDirectory::new(node.config()),
            event_services: BTreeSet::new(),
            node,
            settings,
            tx,
            state,
            stop,
            open: Vec::new(),
            known: HashMap::new(),
            pending_retire: Vec::new(),
        }
    }

    /// Names the thread to wake after handing something over.
    pub fn set_consumer_thread(&mut self, thread: std::thread::Thread) {
        self.tx.set_consumer_thread(thread);
    }

    /// Receives until asked to stop, then hands over the last samples and the stop mark.
    pub fn run(mut self) {
        let mut listeners: Vec<EventPort> = Vec::new();
        let mut wanted_events = self.discover();
        loop {
            self.sync_listeners(&mut listeners, &wanted_events);
            let stopping = self.receive_until_rediscovery(&listeners, &mut wanted_events);
            if stopping {
                break;
            }
        }
        self.receive_all(true);
        self.tx.push_stop();
    }

    /// Waits and receives until a discovery round changes which event services to listen
    /// to (false) or the recording stops (true).
    fn receive_until_rediscovery(
        &mut self,
        listeners: &[EventPort],
        wanted_events: &mut BTreeSet<String>,
    ) -> bool {
        let waitset = match WaitSetBuilder::new()
            .signal_handling_mode(SignalHandlingMode::Disabled)
            .create::<Flavor>()
        {
            Ok(waitset) => Some(waitset),
            Err(error) => {
                self.note_problem("(waitset)", format!("cannot create a WaitSet: {error:?}"));
                None
            }
        };
        let guards: Vec<_> = waitset
            .iter()
            .flat_map(|ws| {
                listeners
                    .iter()
                    .filter_map(|port| ws.attach_notification(&port.listener).ok())
            })
            .collect();
        let mut all_have_events = self.all_have_events(listeners);
        let mut next_discovery = Instant::now() + self.settings.discovery_interval;
        loop {
            let wait = if all_have_events {
                self.settings.discovery_interval
            } else {
                self.next_poll.saturating_duration_since(Instant::now())
            }
            .min(self.settings.discovery_interval);
            let mut notified = false;
            match (&waitset, guards.is_empty()) {
                (Some(ws), false) => {
                    let _ = ws.wait_and_process_once_with_timeout(
                        |_| {
                            notified = true;
                            CallbackProgression::Continue
                        },
                        wait,
                    );
                    for port in listeners {
                        let _ = port.listener.try_wait(|_| {});
                    }
                }
                _ => std::thread::sleep(wait),
            }
            if self.receive_all(notified) {
                self.tx.wake();
            }
            if self.stop.load(Ordering::Acquire) {
                return true;
            }
            if Instant::now() >= next_discovery {
                next_discovery = Instant::now() + self.settings.discovery_interval;
                let events = self.discover();
                if events != *wanted_events {
                    *wanted_events = events;
                    return false;
                }
                all_have_events = self.all_have_events(listeners);
            }
        }
    }

    /// True when there are open topics and each has an event service to wait on.
    fn all_have_events(&self, listeners: &[EventPort]) -> bool {
        !self.open.is_empty()
            && self
                .open
                .iter()
                .all(|t| listeners.iter().any(|l| l.service == t.topic.service))
    }

    /// Receives everything waiting on the subscribers that are due (on all of them when
    /// `every_topic`); true when anything was handed over.
    fn receive_all(&mut self, every_topic: bool) -> bool {
        let now = Instant::now();
        let mut handed_over = false;
        let mut next_poll = now + self.settings.poll_bounds.longest;
        // Start each pass at the next topic, so that when the handoff fills up the drops
        // fall on every topic in turn rather than always on the last ones.
        self.first_polled = self.first_polled.wrapping_add(1);
        let count = self.open.len().max(1);
        let (later, earlier) = self.open.split_at_mut(self.first_polled % count);
        for topic in earlier.iter_mut().chain(later) {
            if !topic.announced {
                continue;
            }
            if every_topic || topic.schedule.next_poll() <= now {
                let received =
                    receive_topic(topic, &mut self.tx, self.settings.zero_copy_threshold);
                handed_over |= received.handed_over;
                topic.schedule.polled(
                    now,
                    received.samples,
                    received.held_back,
                    self.settings.poll_bounds,
                );
            }
            next_poll = next_poll.min(topic.schedule.next_poll());
        }
        self.next_poll = next_poll;
        handed_over
    }

    /// Opens matching services that are new, closes those without publishers, announces
    /// new topics; returns the names of event services that go with open topics.
    fn discover(&mut self) -> BTreeSet<String> {
        if self.service_dir.changed() {
            self.open_listed_services();
        }
        if self.close_vanished() {
            // The closed service may live on without publishers; list again so that one
            // coming back is seen even though no service file changed.
            self.service_dir.forget();
        }
        self.announce_new();
        self.open
            .iter()
            .filter(|t| self.event_services.contains(&t.topic.service))
            .map(|t| t.topic.service.clone())
            .collect()
    }

    /// Lists every service, opens the selected publish-subscribe services not open yet
    /// and remembers the event services.
    fn open_listed_services(&mut self) {
        let mut pubsub: Vec<(String, PubSubConfig)> = Vec::new();
        let mut events = BTreeSet::new();
        let listed = Flavor::list(self.node.config(), |details| {
            let name = details.static_details.name().as_str().to_string();
            match details.static_details.messaging_pattern() {
                PatternConfig::PublishSubscribe(config) => pubsub.push((name, *config)),
                PatternConfig::Event(_) => {
                    events.insert(name);
                }
                _ => {}
            }
            CallbackProgression::Continue
        });
        self.event_services = events;
        if let Err(error) = listed {
            self.service_dir.forget();
            self.note_problem("(discovery)", format!("cannot list services: {error:?}"));
        }
        for (name, config) in pubsub {
            if self.settings.filter.matches(&name)
                && !self.open.iter().any(|t| t.topic.service == name)
            {
                match self.open_topic(&name, &config) {
                    Ok(topic) => {
                        self.state.clear_problem(&name);
                        self.open.push(topic);
                    }
                    Err(reason) => {
                        // Try again next round (the service may still be coming up).
                        self.service_dir.forget();
                        self.note_problem(&name, reason);
                    }
                }
            }
        }
    }

    fn open_topic(&mut self, name: &str, config: &PubSubConfig) -> Result<OpenTopic, String> {
        let types = config.message_type_details();
        let service_name =
            ServiceName::new(name).map_err(|e| format!("invalid service name: {e:?}"))?;
        // SAFETY: the type details are the service's own, read from its static config,
        // so the opened port factory describes the samples as they are in memory.
        let service = unsafe {
            self.node
                .service_builder(&service_name)
                .publish_subscribe::<[CustomPayloadMarker]>()
                .user_header::<CustomHeaderMarker>()
                .__internal_set_payload_type_details(&types.payload)
                .__internal_set_user_header_type_details(&types.user_header)
                .open()
        }
        .map_err(|e| format!("cannot open the service: {e:?}"))?;
        let subscriber = service
            .subscriber_builder()
            .buffer_size(config.subscriber_max_buffer_size())
            .create()
            .map_err(|e| format!("cannot subscribe: {e:?}"))?;
        let service_types = ServiceTypes::of(config);
        let header_len = service_types.user_header.size;
        let rmw_header = service_types.has_rmw_header();
        let topic = match self.known.get(name) {
            Some((known, types)) if *types == service_types => known.clone(),
            _ => {
                let topic = self.state.add_topic(|index| Topic {
                    index,
                    name: channel_name(name),
                    service: name.to_string(),
                    channel: service_types.channel(name),
                    latched: service_types.history_size > 0,
                    counters: TopicCounters::default(),
                });
                self.known
                    .insert(name.to_string(), (topic.clone(), service_types));
                topic
            }
        };
        Ok(OpenTopic {
            topic,
            service,
            subscriber,
            announced: false,
            header_len,
            rmw_header,
            last_sequence: Vec::new(),
            rounds_without_publisher: 0,
            schedule: PollSchedule::new(config.subscriber_max_buffer_size(), Instant::now()),
        })
    }

    /// Closes topics whose service had no publisher for two rounds; true if any closed.
    fn close_vanished(&mut self) -> bool {
        let mut closed = false;
        let mut index = 0;
        while index < self.open.len() {
            let topic = &mut self.open[index];
            if topic.service.dynamic_config().number_of_publishers() == 0 {
                topic.rounds_without_publisher += 1;
            } else {
                topic.rounds_without_publisher = 0;
            }
            if topic.rounds_without_publisher >= 2 {
                closed = true;
                let mut topic = self.open.remove(index);
                if topic.announced {
                    receive_topic(&mut topic, &mut self.tx, self.settings.zero_copy_threshold);
                    self.pending_retire.push(topic.topic.index);
                }
            } else {
                index += 1;
            }
        }
        self.pending_retire
            .retain(|&topic| self.tx.push_control(Item::Retire(topic)).is_err());
        closed
    }

    fn announce_new(&mut self) {
        for topic in self.open.iter_mut().filter(|t| !t.announced) {
            if self
                .tx
                .push_control(Item::Announce(topic.topic.clone()))
                .is_ok()
            {
                topic.announced = true;
            }
        }
        self.tx.wake();
    }

    fn sync_listeners(&mut self, listeners: &mut Vec<EventPort>, wanted: &BTreeSet<String>) {
        listeners.retain(|port| wanted.contains(&port.service));
        for name in wanted {
            if listeners.iter().any(|port| &port.service == name) {
                continue;
            }
            match self.open_listener(name) {
                Ok(port) => listeners.push(port),
                Err(reason) => self.note_problem(name, reason),
            }
        }
    }

    fn open_listener(&self, name: &str) -> Result<EventPort, String> {
        let service_name =
            ServiceName::new(name).map_err(|e| format!("invalid service name: {e:?}"))?;
        let factory = self
            .node
            .service_builder(&service_name)
            .event()
            .open()
            .map_err(|e| format!("cannot open the event service: {e:?}"))?;
        let listener = factory
            .listener_builder()
            .create()
            .map_err(|e| format!("cannot listen to the event service: {e:?}"))?;
        Ok(EventPort {
            service: name.to_string(),
            _factory: factory,
            listener,
        })
    }

    fn note_problem(&self, service: &str, reason: String) {
        self.state.note_problem(service, reason);
    }
}

/// What one receive pass over a topic did.
struct Received {
    samples: u64,
    handed_over: bool,
    /// Samples were left waiting: the writer still holds as many as iceoryx2 lends.
    held_back: bool,
}

/// Receives every waiting sample of one topic.
fn receive_topic(
    topic: &mut OpenTopic,
    tx: &mut Sender<Held>,
    zero_copy_threshold: usize,
) -> Received {
    let counters = &topic.topic.counters;
    let index = topic.topic.index;
    let mut handed_over = false;
    let mut held_back = false;
    let mut samples = 0;
    // One receive time per pass: the samples of a pass are picked up together.
    let log_time = now_ns();
    loop {
        let sample = match topic.subscriber.receive() {
            Ok(Some(sample)) => sample,
            Ok(None) => break,
            // ExceedsMaxBorrows: the writer still holds as many samples of this publisher
            // as iceoryx2 lends; the rest wait in the subscriber's buffer until the next
            // pass.
            Err(_) => {
                held_back = true;
                break;
            }
        };
        counters.add_received();
        samples += 1;
        let mut stamps = Stamps {
            log_time,
            publish_time: log_time,
        };
        let shm = ShmSample {
            sample,
            header_len: topic.header_len,
        };
        if topic.rmw_header {
            if let Some((stamp, sequence)) = read_rmw_header(shm.user_header()) {
                if stamp > 0 {
                    stamps.publish_time = stamp as u64;
                }
                let lost = track_sequence(&mut topic.last_sequence, shm.sample.origin(), sequence);
                if lost > 0 {
                    counters.add_lost(lost);
                }
            }
        }
        let len = topic.header_len + shm.payload().len();
        let pushed = if len >= zero_copy_threshold {
            tx.push_loaned(index, stamps, len, Held::Shm(shm)).is_ok()
        } else {
            tx.push_copied(index, stamps, &[shm.user_header(), shm.payload()])
        };
        if pushed {
            handed_over = true;
        } else {
            counters.add_dropped();
        }
    }
    Received {
        samples,
        handed_over,
        held_back,
    }
}

/// Remembers the publisher's latest sequence number; returns how many were skipped.
fn track_sequence(
    last: &mut Vec<(UniquePublisherId, u64)>,
    origin: UniquePublisherId,
    sequence: u64,
) -> u64 {
    match last.iter_mut().find(|(id, _)| *id == origin) {
        Some((_, previous)) => {
            let lost = sequence.saturating_sub(*previous + 1);
            *previous = (*previous).max(sequence);
            lost
        }
        None => {
            // Samples published before the recorder subscribed were never its to lose.
            last.push((origin, sequence));
            0
        }
    }
}

/// CLOCK_REALTIME in ns.
pub(crate) fn now_ns() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64)
}
