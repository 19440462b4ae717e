//! The receive thread's side of discovery: it takes the topics and listeners the
//! discovery thread made ready, announces the topics to the writer, receives a topic's
//! last samples when its service vanished or `rec topics-set` unselected it, and gives it
//! back to be dropped. None of this opens, creates or drops a port.

use iceoryx2::prelude::*;

use super::events::EventPort;
use super::exchange::{Finished, Found};
use super::receive::{receive_topic, OpenTopic};
use super::ShmSource;
use crate::source::{announce, conclude_change};

/// A change to the listeners the receive thread waits on, applied between two waits.
// Sent a few times in a topic's life: boxing the large variant would buy nothing.
#[allow(clippy::large_enum_variant)]
pub(super) enum ListenerChange {
    Add(EventPort),
    /// Stop listening to the event service of this name and give the listener back.
    Remove(String),
}

impl ShmSource {
    /// Takes what the discovery thread found and announces new topics; true when a topic
    /// was added.
    pub(super) fn take_found(&mut self) -> bool {
        let mut added = false;
        while let Some(found) = self.discovery.take() {
            match found {
                Found::Topic(topic) => {
                    if self.settings.common.filter.matches(&topic.topic.service) {
                        self.open.push(topic);
                        added = true;
                    } else {
                        // Opened before a selection change reached discovery.
                        (self.discovery).give_back(Finished::Topic {
                            topic,
                            unselected: true,
                        });
                    }
                }
                Found::Listener(port) => self.listener_changes.push(ListenerChange::Add(port)),
                Found::Unlisten(name) => {
                    self.listener_changes.push(ListenerChange::Remove(name));
                }
            }
        }
        if added {
            self.announce_new();
        }
        added
    }

    /// Applies the pending listener changes to `listeners`: a new listener of a topic
    /// not open (closed meanwhile) goes back at once, as does one removed.
    pub(super) fn apply_listener_changes(&mut self, listeners: &mut Vec<EventPort>) {
        for change in std::mem::take(&mut self.listener_changes) {
            match change {
                ListenerChange::Add(port) => {
                    if self.open.iter().any(|t| t.topic.service == port.service) {
                        listeners.push(port);
                    } else {
                        self.discovery.give_back(Finished::Listener(port));
                    }
                }
                ListenerChange::Remove(name) => {
                    while let Some(index) = listeners.iter().position(|l| l.service == name) {
                        let port = listeners.swap_remove(index);
                        self.discovery.give_back(Finished::Listener(port));
                    }
                }
            }
        }
    }

    /// Gives back every topic and listener, the recording over.
    pub(super) fn give_back_everything(&mut self, listeners: Vec<EventPort>) {
        for port in listeners {
            self.discovery.give_back(Finished::Listener(port));
        }
        for topic in std::mem::take(&mut self.open) {
            (self.discovery).give_back(Finished::Topic {
                topic,
                unselected: false,
            });
        }
    }

    /// Takes a change of the selection, if one is pending: receives each topic no longer
    /// selected one last time and ends it, stamps the moment into a marker after them,
    /// and has discovery list the services again so that it opens what was added. True
    /// when it took one.
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
            self.give_back_topic(topic, true);
        }
        conclude_change(&mut self.retirements, &mut self.link, change);
        (self.discovery).give_back(Finished::Filter(self.settings.common.filter.clone()));
        self.discovery.unpark();
        true
    }

    /// Closes topics whose service had no publisher for two rounds, receiving their last
    /// samples; true if any closed.
    pub(super) fn close_vanished(&mut self) -> bool {
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
                self.give_back_topic(topic, false);
            } else {
                index += 1;
            }
        }
        self.retirements.send(&mut self.link.tx);
        closed
    }

    /// Announces the topics the writer was not told of yet (those the handoff had no room
    /// for are tried again later).
    pub(super) fn announce_new(&mut self) {
        for topic in self.open.iter_mut().filter(|t| !t.announced) {
            topic.announced = announce(&mut self.link.tx, &topic.topic);
        }
        self.link.tx.wake();
    }

    /// Gives a topic no longer received back to discovery, with its listener.
    fn give_back_topic(&mut self, topic: OpenTopic, unselected: bool) {
        let name = topic.topic.service.clone();
        self.listener_changes.push(ListenerChange::Remove(name));
        (self.discovery).give_back(Finished::Topic { topic, unselected });
    }
}
