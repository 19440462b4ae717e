//! The discovery thread: finds the services to record, opens them, subscribes and
//! listens to their event services, hands the ready ports to the receive thread, and
//! drops the ports it gives back.
//!
//! Opening a service or creating and dropping a port makes iceoryx2 write, `fsync` and
//! remove files of the recorder's node and map the publisher's segments: file I/O that
//! can wait on a busy disk for milliseconds. It all happens here, at normal priority, so
//! the real-time receive thread never does any of it (see [`super::exchange`]).

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;
use std::time::{Duration, Instant};

use iceoryx2::identifiers::UniquePublisherId;
use iceoryx2::prelude::*;
use iceoryx2::service::marker::{CustomHeaderMarker, CustomPayloadMarker};
use iceoryx2::service::static_config::messaging_pattern::MessagingPattern as PatternConfig;
use iceoryx2::service::static_config::publish_subscribe::StaticConfig as PubSubConfig;

use super::events::open_listener;
use super::exchange::{Finished, Found, ReceiveLink};
use super::lease::{Borrows, Issued};
use super::poll::PollSchedule;
use super::receive::OpenTopic;
use super::service_dir::ServiceDirectory;
use super::service_types::{channel_name, ServiceTypes};
use super::Flavor;
use crate::registry::TopicRegistry;
use crate::select::TopicFilter;
use crate::source::{SequenceGaps, SourceSettings};
use crate::throttle::Throttles;
use crate::topic::{Topic, TopicCounters};

/// The name of the discovery thread.
pub(super) const THREAD_NAME: &str = "recd-shm-discovery";

/// What the discovery thread owns: the recorder's node and everything it opened that the
/// receive thread does not hold.
pub(super) struct Discovery {
    node: Node<Flavor>,
    filter: TopicFilter,
    throttles: Throttles,
    interval: Duration,
    registry: Arc<TopicRegistry>,
    link: ReceiveLink,
    /// Tells whether a round needs a full `Service::list`.
    service_dir: ServiceDirectory,
    /// Every event service seen by the last full listing.
    event_services: BTreeSet<String>,
    /// Every topic recorded so far with the types it was recorded with: a service that
    /// comes back with the same types continues its topic.
    known: HashMap<String, (Arc<Topic>, ServiceTypes)>,
    /// Topics `rec topics-set` unselected: what each publisher had sent by then.
    unselected: HashMap<String, SequenceGaps<UniquePublisherId>>,
    /// Topics handed to the receive thread and not given back.
    lent_topics: BTreeSet<String>,
    /// Event services whose listener the receive thread holds.
    lent_listeners: BTreeSet<String>,
    /// Topics given back whose samples the writer still holds: dropped once it let go.
    retiring: Vec<OpenTopic>,
}

impl Discovery {
    /// The discovery of a source with `settings`, opening services with `node`.
    pub fn new(
        node: Node<Flavor>,
        settings: &SourceSettings,
        registry: Arc<TopicRegistry>,
        link: ReceiveLink,
    ) -> Self {
        Self {
            service_dir: ServiceDirectory::new(node.config()),
            node,
            filter: settings.filter.clone(),
            throttles: settings.throttles.clone(),
            interval: settings.discovery_interval,
            registry,
            link,
            event_services: BTreeSet::new(),
            known: HashMap::new(),
            unselected: HashMap::new(),
            lent_topics: BTreeSet::new(),
            lent_listeners: BTreeSet::new(),
            retiring: Vec::new(),
        }
    }

    /// Runs rounds every discovery interval (or when woken) until the receive thread
    /// closes its end, then drops every port.
    pub fn run(mut self) {
        loop {
            let (finished, receiving) = self.link.take_finished();
            finished.into_iter().for_each(|f| self.take_back(f));
            if !receiving {
                break;
            }
            self.release_retiring();
            self.round();
            std::thread::park_timeout(self.interval);
        }
    }

    /// One round: lists the services if they may have changed, hands over new topics and
    /// the listeners of their event services, and asks back those of vanished ones.
    fn round(&mut self) {
        if self.service_dir.changed() {
            self.open_listed_services();
        }
        self.sync_listeners();
    }

    /// Acts on what the receive thread gave back.
    fn take_back(&mut self, finished: Finished) {
        match finished {
            Finished::Topic {
                mut topic,
                unselected,
            } => {
                let name = topic.topic.service.clone();
                // A copy under way ends: the writer writes that sample from shared memory.
                topic.issued.stop_copying();
                self.lent_topics.remove(&name);
                // Its listener comes back too; a new one is made if the topic returns.
                self.lent_listeners.remove(&name);
                if unselected {
                    // One never announced took no samples: what it was to skip still holds.
                    let gaps = if topic.announced {
                        std::mem::take(&mut topic.gaps)
                    } else {
                        std::mem::take(&mut topic.recorded)
                    };
                    self.unselected.insert(name, gaps);
                }
                self.retiring.push(topic);
                // The closed service may live on without publishers; list again so that
                // one coming back is seen even though no service file changed.
                self.service_dir.forget();
            }
            Finished::Listener(port) => drop(port),
            Finished::Filter(filter) => {
                self.filter = filter;
                self.service_dir.forget();
            }
        }
    }

    /// Drops the topics given back whose samples the writer no longer holds.
    fn release_retiring(&mut self) {
        self.retiring.retain_mut(|topic| {
            topic.issued.release_written();
            !topic.issued.is_empty()
        });
    }

    /// Lists every service, opens the selected publish-subscribe services not handed over
    /// yet and remembers the event services.
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
            self.registry
                .note_problem("(discovery)", format!("cannot list services: {error:?}"));
        }
        for (name, config) in pubsub {
            if !self.filter.matches(&name)
                || self.lent_topics.contains(&name)
                || !self
                    .filter
                    .matches_type(&ServiceTypes::of(&config).payload.type_name)
            {
                continue;
            }
            match self.open_topic(&name, &config) {
                Ok(topic) => {
                    self.registry.clear_problem(&name);
                    if self.link.hand(Found::Topic(topic)) {
                        self.lent_topics.insert(name);
                    }
                }
                Err(reason) => {
                    // Try again next round (the service may still be coming up).
                    self.service_dir.forget();
                    self.registry.note_problem(&name, reason);
                }
            }
        }
    }

    /// Hands over a listener for each topic the receive thread holds whose event service
    /// exists, and asks back those whose event service is gone.
    fn sync_listeners(&mut self) {
        let gone: Vec<String> = (self.lent_listeners)
            .difference(&self.event_services)
            .cloned()
            .collect();
        for name in gone {
            self.lent_listeners.remove(&name);
            self.link.hand(Found::Unlisten(name));
        }
        let wanted: Vec<String> = (self.lent_topics)
            .intersection(&self.event_services)
            .filter(|name| !self.lent_listeners.contains(*name))
            .cloned()
            .collect();
        for name in wanted {
            match open_listener(&self.node, &name) {
                Ok(port) => {
                    if self.link.hand(Found::Listener(port)) {
                        self.lent_listeners.insert(name);
                    }
                }
                Err(reason) => self.registry.note_problem(&name, reason),
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
        // Listed after subscribing: a publisher that joins meanwhile counts as there from
        // the start, which can hide a loss but never invent one.
        let mut publishers_at_start = Vec::new();
        service.dynamic_config().list_publishers(|publisher| {
            publishers_at_start.push(publisher.publisher_id);
            CallbackProgression::Continue
        });
        let service_types = ServiceTypes::of(config);
        let header_len = service_types.user_header.size;
        let history_size = service_types.history_size;
        let rmw_header = service_types.has_rmw_header();
        let topic = match self.known.get(name) {
            Some((known, types)) if *types == service_types => known.clone(),
            _ => {
                let topic = self.registry.add_topic(|index| Topic {
                    index,
                    name: channel_name(name),
                    service: name.to_string(),
                    channel: service_types.channel(name),
                    latched: service_types.history_size > 0,
                    counters: TopicCounters::default(),
                    health: Default::default(),
                });
                self.known
                    .insert(name.to_string(), (topic.clone(), service_types));
                topic
            }
        };
        (topic.counters).set_publishers(service.dynamic_config().number_of_publishers());
        Ok(OpenTopic {
            topic,
            service,
            subscriber,
            announced: false,
            header_len,
            rmw_header,
            gaps: SequenceGaps::default(),
            recorded: self.unselected.remove(name).unwrap_or_default(),
            publishers_at_start,
            borrows: Borrows::default(),
            issued: Issued::default(),
            awaits_copy: false,
            max_borrowed: config.subscriber_max_borrowed_samples(),
            buffer_size: config.subscriber_max_buffer_size(),
            history_size,
            rounds_without_publisher: 0,
            has_events: false,
            woken: false,
            schedule: PollSchedule::new(config.subscriber_max_buffer_size(), Instant::now()),
            throttle: self.throttles.for_topic(name),
        })
    }
}
