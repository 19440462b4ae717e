//! New topics held while their type is asked of the network: each reader is made at once
//! and woken on the discovery thread's own poll, which takes its samples into memory as
//! they come ([`Gathered`]); the topic goes to the registry and the receive thread with
//! them when the answer or the bound comes. A session stopped meanwhile counts what its
//! held topics gathered as dropped, and says why.

use rustdds::mio1::{Interest, Token};
use rustdds::{QosPolicies, GUID};

use super::super::fetch::{prefix_of, Job};
use super::super::gathered::Gathered;
use super::super::reader::{new_reader, MIN_DEPTH};
use super::super::writers::{offers_of, topic_shape, HeldTopic, WriterSeen};
use super::{selected, Discovery};
use crate::handoff::now_ns;

/// The token of every held reader on the discovery thread's poll: any of them ready,
/// all are taken from.
const HELD: Token = Token(usize::MAX - 2);

impl Discovery {
    /// Holds a new topic while its node is asked for the definition of its type (once per
    /// hash): its reader gathers samples meanwhile.
    pub(super) fn hold(
        &mut self,
        writer: &WriterSeen,
        others: Vec<(QosPolicies, Vec<u8>)>,
        hash: String,
    ) {
        let offers = offers_of(writer, &others);
        let shape = topic_shape(writer, &offers);
        let endpoints = &self.endpoints;
        let service = format!("dds:{}", writer.topic);
        let mut reader = match new_reader(
            &endpoints.participant,
            &endpoints.subscriber,
            &shape,
            MIN_DEPTH,
        ) {
            Ok(reader) => reader,
            Err(reason) => {
                self.registry.note_problem(&service, reason);
                return;
            }
        };
        let registry = endpoints.poll.registry();
        if let Err(error) = registry.register(reader.source(), HELD, Interest::READABLE) {
            let reason = format!("cannot wait on the DDS reader: {error}");
            self.registry.note_problem(&service, reason);
            return;
        }
        let asked = self.held.iter().any(|held| held.hash == hash);
        if let (Some(fetcher), false) = (&self.fetcher, asked) {
            fetcher.ask(Job {
                ros_type: super::Naming::of(&writer.topic, &writer.type_name).schema,
                hash: hash.clone(),
                participant: prefix_of(writer.guid),
            });
        }
        self.held.push(HeldTopic {
            writer: writer.clone(),
            others,
            hash,
            reader,
            gathered: Gathered::new(self.gather_bound),
            more: Vec::new(),
        });
    }

    /// Takes what every held reader holds into memory.
    pub(super) fn gather_held(&mut self) {
        for held in &mut self.held {
            let at = now_ns();
            let gathered = &mut held.gathered;
            if let Err(reason) = held.reader.take_owned(|taken| gathered.add(taken, at)) {
                let service = format!("dds:{}", held.writer.topic);
                self.registry
                    .note_problem(&service, format!("cannot take a sample: {reason}"));
            }
        }
    }

    /// Takes the answers the fetch thread has given and hands over the topics they free.
    pub(super) fn release_held(&mut self) {
        let Some(fetcher) = &self.fetcher else {
            return;
        };
        let mut answered = Vec::new();
        while let Some(fetched) = fetcher.take() {
            answered.push(fetched.hash.clone());
            self.definitions.learn(fetched.hash, fetched.definition);
        }
        if answered.is_empty() {
            return;
        }
        let held = std::mem::take(&mut self.held);
        let (free, still): (Vec<_>, Vec<_>) = held
            .into_iter()
            .partition(|held| answered.contains(&held.hash));
        self.held = still;
        for held in free {
            self.release(held);
        }
    }

    /// Hands over a held topic with what is now known of its type and what its reader
    /// gathered, and adds the writers seen while it waited; a writer gone meanwhile is
    /// lost at once.
    fn release(&mut self, held: HeldTopic) {
        let HeldTopic {
            writer,
            others,
            mut reader,
            mut gathered,
            more,
            ..
        } = held;
        let at = now_ns();
        let taken = reader.take_owned(|taken| gathered.add(taken, at));
        let _ = self.endpoints.poll.registry().deregister(reader.source());
        if !selected(&self.filter, &writer.topic, &writer.type_name) {
            return;
        }
        let service = format!("dds:{}", writer.topic);
        if let Err(reason) = taken {
            self.registry
                .note_problem(&service, format!("cannot take a sample: {reason}"));
        }
        let slot = self.topics.len();
        let registered = self.endpoints.receive_registry.register(
            reader.source(),
            Token(slot),
            Interest::READABLE,
        );
        if let Err(error) = registered {
            let reason = format!("cannot wait on the DDS reader: {error}");
            self.registry.note_problem(&service, reason);
            return;
        }
        let offers = offers_of(&writer, &others);
        let let_go = gathered.let_go();
        let Some(slot) = self.hand_topic(&writer, &offers, reader, gathered.into_samples()) else {
            return;
        };
        self.writers.insert(writer.guid, Some(slot));
        let topic = self.topics[slot].topic.clone();
        if let_go > 0 {
            topic.counters.add_received_dropped(let_go);
            self.registry.note_problem(
                &topic.service,
                format!(
                    "{let_go} samples dropped while its type was asked: more than {} \
                     arrived",
                    bytesize::ByteSize::b(self.gather_bound as u64)
                ),
            );
        }
        let discovered = self.endpoints.participant.discovered_writers();
        let alive = |guid: GUID| {
            discovered
                .iter()
                .any(|w| w.publication_topic_data.key == guid)
        };
        if !alive(writer.guid) {
            // rustdds forgets a lost writer's reliable marker, and the samples its reader
            // got from the writer after the last gathering may never be taken: nobody can
            // count them, so the topic says so.
            topic.counters.mark_unknown_loss();
            self.registry.note_problem(
                &topic.service,
                "its writer left while its type was asked: samples it sent meanwhile may be \
                 missing, uncounted"
                    .to_string(),
            );
            self.writer_lost(writer.guid);
        }
        for more in more.into_iter().filter(|w| alive(w.guid)) {
            self.writer_seen(more, &discovered);
        }
    }

    /// The session stops with topics still held: each is described in the registry,
    /// what it gathered counted as dropped, and why said, so that the stop's report shows
    /// the topic and its loss rather than nothing.
    pub(super) fn stop_holding(&mut self) {
        self.gather_held();
        for held in std::mem::take(&mut self.held) {
            let HeldTopic {
                writer,
                others,
                mut reader,
                gathered,
                ..
            } = held;
            let _ = self.endpoints.poll.registry().deregister(reader.source());
            if !selected(&self.filter, &writer.topic, &writer.type_name) {
                continue;
            }
            let offers = offers_of(&writer, &others);
            let topic = self.describe_topic(&writer, &offers, &topic_shape(&writer, &offers));
            let dropped = gathered.len() as u64 + gathered.let_go();
            topic.counters.add_received_dropped(dropped);
            self.registry.note_problem(
                &topic.service,
                format!(
                    "the session stopped while its type was asked: {dropped} samples \
                     received were not recorded"
                ),
            );
        }
    }
}
