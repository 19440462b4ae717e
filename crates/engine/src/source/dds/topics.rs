//! The receive thread's side of DDS discovery: it takes the readers the discovery thread
//! made ready, announces their topics to the writer, takes a reader's last samples before
//! it is replaced or `rec topics-set` unselects its topic, retires a topic whose writers
//! all left, and gives readers back to be dropped. None of this creates or drops a reader,
//! reads a file or takes one of rustdds' participant locks.

use std::sync::Arc;

use rustdds::GUID;

use super::discovery::selected;
use super::exchange::{Finished, Found, NewTopic};
use super::gathered::Early;
use super::reader::{depth_for, Reader, MIN_DEPTH};
use super::DdsSource;
use crate::handoff::now_ns;
use crate::source::{announce, conclude_change, SequenceGaps};
use crate::throttle::Throttle;
use crate::topic::Topic;

/// A recorded DDS topic, as the receive thread holds it.
pub(super) struct DdsTopic {
    pub topic: Arc<Topic>,
    pub dds_name: String,
    pub type_name: String,
    /// Its reader; none while the topic is not selected (`rec topics-set`).
    pub reader: Option<Reader>,
    /// The samples the reader's history holds.
    pub depth: i32,
    /// The largest sample taken so far, in bytes.
    pub largest: usize,
    /// Each writer's last sequence number, to count gaps.
    pub gaps: SequenceGaps<GUID>,
    /// Each writer's last sequence number when the topic was unselected: selected again,
    /// samples up to it are ones recorded already, which a writer may send the new reader
    /// again.
    pub recorded: SequenceGaps<GUID>,
    pub announced: bool,
    /// Its rate limit or downsampling, if any.
    pub throttle: Option<Throttle>,
    /// Samples gathered while the topic was held, taken before the reader's.
    pub early: Vec<Early>,
}

impl DdsSource {
    /// Takes what the discovery thread found; true when a reader was taken (its first
    /// samples may wait without a readiness event the thread saw).
    pub(super) fn take_found(&mut self) -> bool {
        let mut taken = false;
        while let Some(found) = self.discovery.take() {
            match found {
                Found::Topic(new) => {
                    self.add_topic(new);
                    taken = true;
                }
                Found::Reader { slot, reader } => {
                    taken |= self.replace_reader(slot, reader);
                }
                Found::WriterLost { slot, writer, last } => self.writer_lost(slot, writer, last),
            }
        }
        taken
    }

    /// Adds a topic in the next slot; its reader goes back at once if a selection change
    /// the discovery thread had not seen yet unselected it.
    fn add_topic(&mut self, new: NewTopic) {
        let wanted = selected(&self.settings.common.filter, &new.dds_name, &new.type_name);
        let reader = if wanted {
            Some(new.reader)
        } else {
            self.discovery.give_back(Finished::Reader(new.reader));
            None
        };
        self.topics.push(DdsTopic {
            topic: new.topic,
            dds_name: new.dds_name,
            type_name: new.type_name,
            reader,
            depth: MIN_DEPTH,
            largest: 0,
            gaps: SequenceGaps::default(),
            recorded: SequenceGaps::default(),
            announced: false,
            throttle: new.throttle,
            early: new.early,
        });
    }

    /// Puts `reader` in place of the topic's reader, after taking what the old one holds;
    /// false when the topic is no longer selected and the reader went back.
    fn replace_reader(&mut self, slot: usize, reader: super::reader::Reader) -> bool {
        let Some(topic) = self.topics.get(slot) else {
            self.discovery.give_back(Finished::Reader(reader));
            return false;
        };
        if !selected(
            &self.settings.common.filter,
            &topic.dds_name,
            &topic.type_name,
        ) {
            self.discovery.give_back(Finished::Reader(reader));
            return false;
        }
        // What the old reader holds is recorded first; what its writers send until the
        // new reader matches them shows up as a sequence gap (lost).
        if self.drain(slot).handed_over {
            self.link.tx.wake();
        }
        let topic = &mut self.topics[slot];
        match topic.reader.replace(reader) {
            Some(old) => self.discovery.give_back(Finished::Reader(old)),
            // Selected again: the writers' history comes first, then a jump over what
            // they sent while the topic was not selected, which is not lost.
            None => topic.gaps.subscribed_anew(now_ns()),
        }
        true
    }

    /// A writer of the topic in `slot` left: when it was the last, what the reader still
    /// holds belongs to the file before the topic retires.
    fn writer_lost(&mut self, slot: usize, writer: rustdds::GUID, last: bool) {
        let Some(topic) = self.topics.get_mut(slot) else {
            return;
        };
        topic.gaps.forget(&writer);
        if last && topic.announced {
            self.drain(slot);
            self.retirements.push(self.topics[slot].topic.index);
        }
    }

    /// Takes a change of the selection, if one is pending: each topic no longer selected
    /// is received one last time, its reader given back and the topic ended; a marker
    /// stamped with that moment follows them; then the discovery thread looks at the
    /// writers again, so that topics added open after it.
    pub(super) fn take_selection_change(&mut self) {
        let Some(change) = self.link.selection.pending() else {
            return;
        };
        self.settings.common.filter = change.filter.clone();
        for slot in 0..self.topics.len() {
            let topic = &self.topics[slot];
            if topic.reader.is_none()
                || selected(
                    &self.settings.common.filter,
                    &topic.dds_name,
                    &topic.type_name,
                )
            {
                continue;
            }
            self.drain(slot);
            let topic = &mut self.topics[slot];
            if let Some(reader) = topic.reader.take() {
                self.discovery.give_back(Finished::Reader(reader));
            }
            topic.recorded = std::mem::take(&mut topic.gaps);
            topic.topic.counters.set_publishers(0);
            if topic.announced {
                topic.announced = false;
                self.retirements.unselect(topic.topic.index);
            }
        }
        self.discovery
            .give_back(Finished::Filter(self.settings.common.filter.clone()));
        conclude_change(&mut self.retirements, &mut self.link, change);
    }

    /// Announces the topics not announced yet (the handoff was full, or they are new) and
    /// hands over pending retirements.
    pub(super) fn announce_pending(&mut self) {
        for topic in self.topics.iter_mut().filter(|t| !t.announced) {
            if topic.reader.is_some() {
                topic.announced = announce(&mut self.link.tx, &topic.topic);
            }
        }
        self.retirements.send(&mut self.link.tx);
    }

    /// Asks the discovery thread to deepen a topic's history to hold `reader_memory`
    /// bytes of its largest samples, when that is deeper than it is.
    pub(super) fn fit_history(&mut self, slot: usize) {
        let topic = &mut self.topics[slot];
        let depth = depth_for(self.settings.config.reader_memory, topic.largest);
        if topic.reader.is_none() || depth <= topic.depth {
            return;
        }
        // Asked once: should rustdds refuse, the discovery thread notes the problem.
        topic.depth = depth;
        self.discovery.give_back(Finished::Deepen { slot, depth });
    }

    /// Gives every reader back, the recording over.
    pub(super) fn give_back_readers(&mut self) {
        for topic in &mut self.topics {
            if let Some(reader) = topic.reader.take() {
                self.discovery.give_back(Finished::Reader(reader));
            }
        }
    }
}
