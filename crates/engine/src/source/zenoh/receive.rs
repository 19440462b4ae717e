//! What Zenoh's own threads do with each sample: find its topic, count it, hand it to
//! the writer. Zenoh delivers samples to a callback on its runtime's threads; the
//! callback takes the source's [`Inbox`] lock (uncontended but for the source thread's
//! short visits), so that the handoff, single-producer, has one producer at a time. It
//! never waits for the writer: when the handoff is full the sample is dropped and
//! counted, and Zenoh's receive task is never held up.

use std::collections::HashMap;
use std::sync::mpsc;
use std::sync::Arc;

use zenoh::bytes::ZBytes;
use zenoh::sample::{Sample, SampleKind};

use super::attachment::{Attachment, Gid};
use super::key::DataKey;
use super::Event;
use crate::handoff::{now_ns, Sender, Stamps};
use crate::source::{announce, hand_over, Arrival, Held, Retirements, SequenceGaps};
use crate::throttle::Throttle;
use crate::topic::Topic;

/// After this many samples handed over the writer is woken at once; fewer wait for the
/// source thread's next round (every [`super::GATHER_TIME`]), so that a busy topic's
/// samples are written in batches rather than with a wake-up each.
const WAKE_BATCH: usize = 256;
/// Samples of topics not known yet (on the wildcard subscription, ahead of their
/// discovery) kept until the source thread describes their topic.
const UNKNOWN_SAMPLES: usize = 1024;
/// Bytes of such samples kept.
const UNKNOWN_BYTES: usize = 16 << 20;

/// Where a key expression's samples go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Route {
    /// To the topic in this slot.
    Slot(usize),
    /// Nowhere: the selection leaves the topic out.
    Ignore,
}

/// A recorded topic as the callback sees it.
pub(super) struct Slot {
    pub topic: Arc<Topic>,
    /// ROS topic and type (`/chatter`, `std_msgs::msg::dds_::String_`).
    pub name: (String, String),
    /// Whether the selection records it now.
    pub receiving: bool,
    pub announced: bool,
    /// Each publisher's last sequence number, to count what never arrived.
    gaps: SequenceGaps<Gid>,
    /// The numbers when `rec topics-set` unselected the topic: a publisher's history
    /// sent again when it is selected again is not recorded twice.
    recorded: SequenceGaps<Gid>,
    pub throttle: Option<Throttle>,
    /// Each publisher's first live sequence number: its history's samples before it
    /// are recorded from the cache.
    first_live: Vec<(Gid, u64)>,
    /// The history samples recorded (publisher, sequence number).
    from_history: Vec<(Gid, u64)>,
}

impl Slot {
    pub fn new(topic: Arc<Topic>, name: (String, String), throttle: Option<Throttle>) -> Self {
        Self {
            topic,
            name,
            receiving: true,
            announced: false,
            gaps: SequenceGaps::default(),
            recorded: SequenceGaps::default(),
            throttle,
            first_live: Vec::new(),
            from_history: Vec::new(),
        }
    }
}

/// `gid` counts again from `sequence` (its node restarted keeping its id): what is known
/// of its earlier run's numbers (`from_history`, `first_live` of a [`Slot`]) no longer
/// tells its samples apart.
fn start_over(
    from_history: &mut Vec<(Gid, u64)>,
    first_live: &mut Vec<(Gid, u64)>,
    gid: Gid,
    sequence: u64,
) {
    from_history.retain(|(g, _)| *g != gid);
    first_live.retain(|(g, _)| *g != gid);
    first_live.push((gid, sequence));
}

/// A sample of a topic not known yet.
struct Unknown {
    key: String,
    at: u64,
    payload: ZBytes,
    attachment: Option<Attachment>,
}

/// The source's receiving state, behind its lock.
pub(super) struct Inbox {
    tx: Sender<Held>,
    zero_copy_threshold: usize,
    pub slots: Vec<Slot>,
    /// Each data key seen, resolved.
    routes: HashMap<String, Route>,
    /// Samples of keys the source thread is asked to describe.
    unknown: Vec<Unknown>,
    unknown_bytes: usize,
    /// Keys the source thread should describe (it drains this).
    asks: mpsc::Sender<Event>,
    since_wake: usize,
    /// The newest log time handed over.
    last_log_time: u64,
    pub retirements: Retirements,
    /// The stop mark is handed over: nothing more goes in.
    closed: bool,
}

impl Inbox {
    pub fn new(tx: Sender<Held>, zero_copy_threshold: usize, asks: mpsc::Sender<Event>) -> Self {
        Self {
            tx,
            zero_copy_threshold,
            slots: Vec::new(),
            routes: HashMap::new(),
            unknown: Vec::new(),
            unknown_bytes: 0,
            asks,
            since_wake: 0,
            last_log_time: 0,
            retirements: Retirements::default(),
            closed: false,
        }
    }

    /// The handoff, for the source thread's control items.
    pub fn tx(&mut self) -> &mut Sender<Held> {
        &mut self.tx
    }

    /// Takes one sample from Zenoh.
    pub fn on_sample(&mut self, sample: &Sample) {
        if self.closed || sample.kind() != SampleKind::Put {
            return;
        }
        let key = sample.key_expr().as_str();
        let route = match self.routes.get(key) {
            Some(route) => *route,
            None => match self.slot_of(key) {
                Some(slot) => {
                    self.routes.insert(key.to_string(), Route::Slot(slot));
                    Route::Slot(slot)
                }
                None => {
                    self.keep_unknown(key, sample);
                    return;
                }
            },
        };
        if let Route::Slot(slot) = route {
            let attachment = sample.attachment().and_then(Attachment::parse);
            self.receive(slot, now_ns(), sample.payload(), attachment);
        }
    }

    /// The slot of the topic `key` belongs to, if known.
    fn slot_of(&self, key: &str) -> Option<usize> {
        let key = DataKey::parse(key)?;
        let topic = key.ros_topic();
        self.slots
            .iter()
            .position(|s| s.name.0 == topic && s.name.1 == key.type_name)
    }

    /// Keeps a sample of a key no topic describes yet and asks the source thread to
    /// describe it (the first time); beyond the bounds it is dropped, counted on its
    /// topic once known.
    fn keep_unknown(&mut self, key: &str, sample: &Sample) {
        let first = !self.unknown.iter().any(|u| u.key == key);
        if first && self.asks.send(Event::Ask(key.to_string())).is_err() {
            return;
        }
        let len = sample.payload().len();
        if self.unknown.len() >= UNKNOWN_SAMPLES || self.unknown_bytes + len > UNKNOWN_BYTES {
            // Kept as an empty entry: counted as received and dropped once described.
            self.unknown.push(Unknown {
                key: key.to_string(),
                at: 0,
                payload: ZBytes::default(),
                attachment: None,
            });
            return;
        }
        self.unknown_bytes += len;
        self.unknown.push(Unknown {
            key: key.to_string(),
            at: now_ns(),
            payload: sample.payload().clone(),
            attachment: sample.attachment().and_then(Attachment::parse),
        });
    }

    /// Routes `key` as the source thread decided, and takes the samples kept for it.
    pub fn route(&mut self, key: &str, route: Route) {
        self.routes.insert(key.to_string(), route);
        let (kept, others): (Vec<_>, Vec<_>) = std::mem::take(&mut self.unknown)
            .into_iter()
            .partition(|u| u.key == key);
        self.unknown = others;
        for unknown in kept {
            self.unknown_bytes -= unknown.payload.len();
            let Route::Slot(slot) = route else { continue };
            if unknown.at == 0 {
                let counters = &self.slots[slot].topic.counters;
                counters.add_received();
                counters.add_dropped();
                continue;
            }
            self.receive(slot, unknown.at, &unknown.payload, unknown.attachment);
        }
    }

    /// Takes a sample of a transient-local publisher's history: recorded unless it was
    /// received already, live (it is older than the publisher's first live sample) or
    /// in an earlier answer. It counts no loss: a history keeps only the last samples.
    pub fn on_history(&mut self, slot: usize, sample: &Sample) {
        let at = now_ns();
        let Some(attachment) = sample.attachment().and_then(Attachment::parse) else {
            return;
        };
        let Some(s) = self.slots.get_mut(slot) else {
            return;
        };
        let id = (attachment.gid, attachment.sequence);
        let live_from = s.first_live.iter().find(|(g, _)| *g == id.0).map(|f| f.1);
        if self.closed || !s.receiving {
            return;
        }
        // Answered twice, or received live already.
        if s.from_history.contains(&id) || live_from.is_some_and(|first| id.1 >= first) {
            s.topic.counters.add_repeated();
            return;
        }
        s.from_history.push(id);
        self.deliver(slot, at, sample.payload(), Some(attachment));
    }

    /// Forgets every route: the selection changed, keys are decided again.
    pub fn forget_routes(&mut self) {
        self.routes.clear();
    }

    /// Takes a live sample of `slot` received at `at`: counts what its publisher's
    /// sequence numbers show lost, then hands it over.
    fn receive(&mut self, index: usize, at: u64, payload: &ZBytes, attachment: Option<Attachment>) {
        let slot = &mut self.slots[index];
        if !slot.receiving {
            return;
        }
        let counters = &slot.topic.counters;
        match &attachment {
            Some(a) => {
                // Recorded before the topic was unselected: not a new sample.
                if slot.recorded.repeats(&a.gid, a.sequence) {
                    counters.add_repeated();
                    return;
                }
                if !slot.gaps.knows(&a.gid) {
                    slot.first_live.push((a.gid, a.sequence));
                }
                match slot.gaps.arrive(a.gid, a.sequence, a.source_time_ns) {
                    Arrival::New { lost } if lost > 0 => counters.add_lost(lost),
                    Arrival::New { .. } => {}
                    Arrival::Restart => start_over(
                        &mut slot.from_history,
                        &mut slot.first_live,
                        a.gid,
                        a.sequence,
                    ),
                    // Received on two subscriptions while they were swapped.
                    Arrival::Repeat => {
                        counters.add_repeated();
                        return;
                    }
                }
                // Taken from the publisher's history already.
                if slot.from_history.contains(&(a.gid, a.sequence)) {
                    counters.add_repeated();
                    return;
                }
            }
            None => counters.mark_unknown_loss(),
        }
        self.deliver(index, at, payload, attachment);
    }

    /// Counts a sample of `slot` as received and hands it over, unless its topic's
    /// throttle leaves it out or the handoff is full.
    fn deliver(&mut self, slot: usize, at: u64, payload: &ZBytes, attachment: Option<Attachment>) {
        let threshold = self.zero_copy_threshold;
        // Log times never go back in the handoff (ROS 2 readers refuse an unindexed file
        // whose messages are out of time order): a sample kept while its topic was being
        // described is handed over after others received later, and is stamped with the
        // latest time handed over.
        let at = at.max(self.last_log_time);
        self.last_log_time = at;
        let slot = &mut self.slots[slot];
        let counters = &slot.topic.counters;
        counters.add_received();
        let mut stamps = Stamps::received_at(at);
        if let Some(time) = attachment.map(|a| a.source_time_ns).filter(|t| *t > 0) {
            stamps.publish_time = time;
        }
        if slot.throttle.as_mut().is_some_and(|t| !t.keeps(at)) {
            counters.add_filtered();
            return;
        }
        if !slot.announced {
            slot.announced = announce(&mut self.tx, &slot.topic);
            if !slot.announced {
                counters.add_dropped();
                return;
            }
        }
        // Lent (or copied) from Zenoh's own buffers, in as many pieces as Zenoh has them.
        let held = Held::Zenoh(payload.clone());
        if !hand_over(&mut self.tx, &slot.topic, stamps, held, threshold) {
            return;
        }
        self.since_wake += 1;
        if self.since_wake >= WAKE_BATCH {
            self.wake();
        }
    }

    /// Wakes the writer if anything was handed over since it was last woken.
    pub fn wake(&mut self) {
        if self.since_wake > 0 {
            self.since_wake = 0;
            self.tx.wake();
        }
    }

    /// Announces the topics not announced yet and hands over pending retirements.
    pub fn announce_pending(&mut self) {
        for slot in self
            .slots
            .iter_mut()
            .filter(|s| s.receiving && !s.announced)
        {
            slot.announced = announce(&mut self.tx, &slot.topic);
        }
        self.retirements.send(&mut self.tx);
    }

    /// A publisher of the topic in `slot` left; when it was the last, the topic retires.
    pub fn publisher_left(&mut self, slot: usize, gid: Option<Gid>, last: bool) {
        let Some(s) = self.slots.get_mut(slot) else {
            return;
        };
        if let Some(gid) = gid {
            s.gaps.forget(&gid);
            s.from_history.retain(|(g, _)| *g != gid);
            s.first_live.retain(|(g, _)| *g != gid);
        }
        // The topic stays announced: a publisher that comes later writes to its channel.
        if last && s.announced {
            self.retirements.push(s.topic.index);
        }
    }

    /// Stops recording the topic in `slot` (`rec topics-set` unselected it).
    pub fn unselect(&mut self, slot: usize) {
        let s = &mut self.slots[slot];
        s.receiving = false;
        s.recorded = std::mem::take(&mut s.gaps);
        s.topic.counters.set_publishers(0);
        if s.announced {
            s.announced = false;
            self.retirements.unselect(s.topic.index);
        }
    }

    /// Hands over the pending retirements and markers, waiting at most `limit` for room.
    pub fn send_retirements(&mut self, limit: std::time::Duration) {
        self.retirements.send_all(&mut self.tx, limit);
    }

    /// Hands over what is pending and the stop mark; nothing goes in after it.
    pub fn close(&mut self) {
        self.retirements
            .send_all(&mut self.tx, std::time::Duration::from_secs(1));
        self.closed = true;
        self.tx.push_stop();
        self.tx.wake();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::RingConfig;
    use crate::handoff::{handoff, Item};
    use zenoh::sample::SampleBuilder;

    fn topic(index: u32, name: &str) -> Arc<Topic> {
        Arc::new(Topic {
            index,
            name: name.into(),
            service: format!("zenoh:{name}"),
            channel: crate::topic::ChannelSpec {
                message_encoding: "cdr".into(),
                schema_name: "std_msgs/msg/String".into(),
                schema_encoding: "ros2msg".into(),
                schema_data: Vec::new(),
                metadata: Default::default(),
            },
            latched: false,
            counters: Default::default(),
            health: Default::default(),
        })
    }

    fn sample(key: &str, sequence: u64) -> Sample {
        let attachment = Attachment {
            sequence,
            source_time_ns: 1,
            gid: [sequence as u8; 16],
        };
        let key: zenoh::key_expr::KeyExpr<'static> = key.to_string().try_into().unwrap();
        SampleBuilder::put(key, vec![0, 1, 0, 0, 9, 9, 9, 9])
            .attachment(attachment.to_bytes())
            .into()
    }

    #[test]
    fn samples_kept_for_a_topic_described_late_never_go_back_in_time() {
        let (tx, mut rx) = handoff::<Held>(&RingConfig::default());
        let (asks, asked) = mpsc::channel();
        let mut inbox = Inbox::new(tx, 1 << 20, asks);
        let known = "0/known/std_msgs::msg::dds_::String_/RIHS01_00";
        let late = "0/late/std_msgs::msg::dds_::String_/RIHS01_00";
        inbox.slots.push(Slot::new(
            topic(0, "/known"),
            ("/known".into(), "std_msgs::msg::dds_::String_".into()),
            None,
        ));
        inbox.on_sample(&sample(late, 1));
        assert!(matches!(asked.try_recv(), Ok(Event::Ask(key)) if key == late));
        std::thread::sleep(std::time::Duration::from_millis(2));
        inbox.on_sample(&sample(known, 1));
        inbox.slots.push(Slot::new(
            topic(1, "/late"),
            ("/late".into(), "std_msgs::msg::dds_::String_".into()),
            None,
        ));
        inbox.route(late, Route::Slot(1));
        let mut times = Vec::new();
        while let Some(item) = rx.pop() {
            if let Item::Copied { topic, stamps, len } = item {
                rx.with_copied(len, |_| ());
                times.push((topic, stamps.log_time));
            }
        }
        assert_eq!(times.iter().map(|t| t.0).collect::<Vec<_>>(), [0, 1]);
        assert!(times[1].1 >= times[0].1, "{times:?}");
        assert_eq!(inbox.slots[1].topic.counters.received(), 1);
    }
}
