//! The source thread's side of asking nodes for types ([`super::types`]): which new topic
//! is held, when its node is asked (again), what an answer frees, and the release of a
//! held topic into the recording with the samples that waited for it.

use std::time::Instant;

use super::receive::Route;
use super::token::Token;
use super::types::{self, Asking, HeldTopic, RESEND};
use super::ZenohSource;
use crate::source::dds::channel::Naming;
use crate::source::dds::type_cache;

impl ZenohSource {
    /// Holds the topic of a publisher's token while its node is asked for the definition
    /// of its type, if no `.msg` file or kept definition has it; false when not held.
    pub(super) fn hold_for_type(&mut self, key: &str, token: &Token) -> bool {
        let Some(entity) = token.topic.as_ref() else {
            return false;
        };
        let name = (entity.ros_topic.clone(), entity.type_name.clone());
        if let Some(held) = self.held.iter_mut().find(|h| h.name == name) {
            held.tokens.push((key.to_string(), token.clone()));
            return true;
        }
        let hash = entity.type_hash.as_str();
        let naming = Naming::of(&format!("rt{}", name.0), &name.1);
        if !self.settings.config.fetch_types
            || !hash.starts_with("RIHS01_")
            || !self.definitions.needs_fetch(&naming, Some(hash))
        {
            return false;
        }
        let subscriber = if self.wildcard.is_none() {
            match self.subscribe_topic(&name) {
                Some(subscriber) => Some(subscriber),
                None => return false,
            }
        } else {
            None
        };
        if !self.asking.iter().any(|a| a.hash == hash) {
            self.asking.push(Asking {
                hash: hash.to_string(),
                ros_type: naming.schema.clone(),
                node: types::node_of(token),
                since: Instant::now(),
                next_try: Some(Instant::now()),
            });
        }
        self.held.push(HeldTopic {
            name,
            hash: hash.to_string(),
            tokens: vec![(key.to_string(), token.clone())],
            keys: Vec::new(),
            subscriber,
        });
        true
    }

    /// Notes that samples came on `key` of a held topic; false when its topic is not held.
    pub(super) fn held_key(&mut self, key: &str, name: &(String, String)) -> bool {
        let Some(held) = self.held.iter_mut().find(|h| &h.name == name) else {
            return false;
        };
        if !held.keys.iter().any(|k| k == key) {
            held.keys.push(key.to_string());
        }
        true
    }

    /// Sends the queries due, and gives up on types whose node had its time.
    pub(super) fn tend_asking(&mut self) {
        if self.asking.is_empty() {
            return;
        }
        let now = Instant::now();
        let expired: Vec<(String, String)> = (self.asking.iter())
            .filter(|a| a.expired(now))
            .map(|a| (a.hash.clone(), a.unanswered()))
            .collect();
        for (hash, why) in expired {
            self.learn_type(&hash, Err(why));
        }
        let domain = self.settings.config.domain;
        for asking in &mut self.asking {
            if asking.next_try.is_none_or(|at| at > now) {
                continue;
            }
            self.asks_sent += 1;
            let sent = types::ask(
                &self.session,
                domain,
                asking,
                self.asks_sent,
                self.event_tx.clone(),
            );
            asking.next_try = match sent {
                Ok(()) => None,
                Err(reason) => {
                    self.registry.note_problem(super::SOURCE, reason);
                    Some(now + RESEND)
                }
            };
        }
    }

    /// A node's reply for `hash`.
    pub(super) fn type_reply(&mut self, hash: &str, reply: &[u8]) {
        let Some(asking) = self.asking.iter().find(|a| a.hash == hash) else {
            return;
        };
        let definition = types::definition_from_reply(reply, &asking.ros_type, hash);
        self.learn_type(hash, definition);
    }

    /// A query for `hash` ended: asked again soon unless answered.
    pub(super) fn type_ask_ended(&mut self, hash: &str) {
        if let Some(asking) = self.asking.iter_mut().find(|a| a.hash == hash) {
            asking.next_try = Some(Instant::now() + RESEND);
        }
    }

    /// The session stops: every held topic is recorded with what it has, no definition.
    pub(super) fn release_every_held(&mut self) {
        let hashes: Vec<String> = self.asking.iter().map(|a| a.hash.clone()).collect();
        for hash in hashes {
            let why = format!("asked the network for {hash}: the session stopped first");
            self.learn_type(&hash, Err(why));
        }
    }

    /// Takes what is known of `hash` (kept in the state directory when a definition) and
    /// releases the topics that waited for it.
    fn learn_type(&mut self, hash: &str, definition: Result<String, String>) {
        self.asking.retain(|a| a.hash != hash);
        if let (Ok(text), Some(dir)) = (&definition, &self.settings.config.type_cache) {
            if let Err(error) = type_cache::store(dir, hash, text) {
                let reason = format!("cannot keep the definition of {hash}: {error}");
                self.registry.note_problem(super::SOURCE, reason);
            }
        }
        self.definitions.learn(hash.to_string(), definition);
        let (free, still): (Vec<_>, Vec<_>) = std::mem::take(&mut self.held)
            .into_iter()
            .partition(|h| h.hash == hash);
        self.held = still;
        for held in free {
            self.release(held);
        }
    }

    /// Describes a held topic with its own subscription, adds its publishers and hands
    /// over the samples that waited for it.
    fn release(&mut self, held: HeldTopic) {
        let HeldTopic {
            name,
            hash,
            tokens,
            keys,
            subscriber,
        } = held;
        let offers: Vec<_> = (tokens.iter())
            .filter_map(|(_, t)| t.topic.as_ref()?.qos.clone())
            .collect();
        // None only when its subscription failed, which says why.
        let Some(slot) = self.add_topic(&name, &hash, offers.iter(), subscriber) else {
            return;
        };
        for (key, token) in tokens {
            self.publisher_seen(key, token);
        }
        let mut inbox = self.lock();
        for key in keys {
            inbox.route(&key, Route::Slot(slot));
        }
    }
}
