//! Finding the services to record: opening new ones, closing vanished ones, telling the
//! writer about both.

use std::collections::BTreeSet;
use std::time::Instant;

use iceoryx2::prelude::*;
use iceoryx2::service::marker::{CustomHeaderMarker, CustomPayloadMarker};
use iceoryx2::service::static_config::messaging_pattern::MessagingPattern as PatternConfig;
use iceoryx2::service::static_config::publish_subscribe::StaticConfig as PubSubConfig;

use super::lease::{Borrows, Issued};
use super::poll::PollSchedule;
use super::receive::{receive_topic, OpenTopic};
use super::service_types::{channel_name, ServiceTypes};
use super::{Flavor, ShmSource};
use crate::source::{announce, conclude_change, SequenceGaps};
use crate::topic::{Topic, TopicCounters};

impl ShmSource {
    /// Opens matching services that are new, closes those without publishers, announces
    /// new topics; returns the names of event services that go with open topics.
    pub(super) fn discover(&mut self) -> BTreeSet<String> {
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
            self.link
                .note_problem("(discovery)", format!("cannot list services: {error:?}"));
        }
        for (name, config) in pubsub {
            let filter = &self.settings.common.filter;
            if filter.matches(&name)
                && !self.open.iter().any(|t| t.topic.service == name)
                && filter.matches_type(&ServiceTypes::of(&config).payload.type_name)
            {
                match self.open_topic(&name, &config) {
                    Ok(topic) => {
                        self.link.registry.clear_problem(&name);
                        self.open.push(topic);
                    }
                    Err(reason) => {
                        // Try again next round (the service may still be coming up).
                        self.service_dir.forget();
                        self.link.note_problem(&name, reason);
                    }
                }
            }
        }
    }

    /// Takes a change of the selection, if one is pending: receives each topic no longer
    /// selected one last time and ends it, stamps the moment into a marker after them,
    /// and lists the services again so that the next discovery opens what was added.
    /// True when it took one.
    pub(super) fn take_selection_change(&mut self) -> bool {
        let Some(change) = self.link.selection.pending() else {
            return false;
        };
        self.settings.common.filter = change.filter.clone();
        let mut index = 0;
        while index < self.open.len() {
            if self
                .settings
                .common
                .filter
                .matches(&self.open[index].topic.service)
            {
                index += 1;
                continue;
            }
            let mut topic = self.open.remove(index);
            if topic.announced {
                receive_topic(&mut topic, &mut self.pass());
                self.retirements.unselect(topic.topic.index);
            }
            self.unselected
                .insert(topic.topic.service.clone(), topic.gaps);
        }
        conclude_change(&mut self.retirements, &mut self.link, change);
        self.service_dir.forget();
        true
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
        let rmw_header = service_types.has_rmw_header();
        let topic = match self.known.get(name) {
            Some((known, types)) if *types == service_types => known.clone(),
            _ => {
                let topic = self.link.registry.add_topic(|index| Topic {
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
            max_borrowed: config.subscriber_max_borrowed_samples(),
            buffer_size: config.subscriber_max_buffer_size(),
            rounds_without_publisher: 0,
            schedule: PollSchedule::new(config.subscriber_max_buffer_size(), Instant::now()),
            throttle: self.settings.common.throttles.for_topic(name),
        })
    }

    /// Closes topics whose service had no publisher for two rounds; true if any closed.
    fn close_vanished(&mut self) -> bool {
        let mut closed = false;
        let mut index = 0;
        while index < self.open.len() {
            let topic = &mut self.open[index];
            let publishers = topic.service.dynamic_config().number_of_publishers();
            topic.topic.counters.set_publishers(publishers);
            if publishers == 0 {
                topic.rounds_without_publisher += 1;
            } else {
                topic.rounds_without_publisher = 0;
            }
            if topic.rounds_without_publisher >= 2 {
                closed = true;
                let mut topic = self.open.remove(index);
                if topic.announced {
                    receive_topic(&mut topic, &mut self.pass());
                    self.retirements.push(topic.topic.index);
                }
            } else {
                index += 1;
            }
        }
        self.retirements.send(&mut self.link.tx);
        closed
    }

    fn announce_new(&mut self) {
        for topic in self.open.iter_mut().filter(|t| !t.announced) {
            topic.announced = announce(&mut self.link.tx, &topic.topic);
        }
        self.link.tx.wake();
    }
}
