//! The shared-memory source: finds iceoryx2 services, subscribes to them and hands every
//! sample to the writer thread without blocking.
//!
//! The receive thread waits on the event services that go with recorded topics (where
//! there are any) and polls the other subscribers on a schedule ([`poll`]). A discovery
//! thread of normal priority ([`discovery`]) reads the service list only when the service
//! directory changed ([`service_dir`]), opens services whatever their payload type, with
//! the type details from their static config ([`service_types`]), creates and drops the
//! ports, and passes them to and from the receive thread ([`exchange`], [`topics`]): the
//! file I/O iceoryx2 does for that never falls on the real-time thread.

mod copy_budget;
mod discovery;
mod events;
mod exchange;
mod lease;
pub(crate) mod poll;
mod raw;
mod receive;
mod service_dir;
pub(crate) mod service_types;
mod topics;

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use iceoryx2::node::NodeCreationFailure;
use iceoryx2::prelude::*;

use super::spill::SpillPool;
use super::{Retirements, SourceLink, SourceSettings};
use copy_budget::{CopyBudget, COPY_SLICE};
use discovery::Discovery;
use events::EventPort;
use exchange::DiscoveryLink;
use lease::Leases;
use poll::PollBounds;
pub(crate) use receive::ShmSample;
use receive::{receive_topic, OpenTopic, PassContext};
use topics::ListenerChange;

/// The service flavour the recorder opens: its samples may move to the writer thread.
/// The iceoryx2 service flavor recd uses: inter-process, with thread-safe ports.
pub type Flavor = ipc_threadsafe::Service;

/// Why the shared-memory source could not start.
#[derive(Debug, thiserror::Error)]
pub enum ShmError {
    /// The iceoryx2 configuration prefix is not a valid file name.
    #[error("invalid iceoryx2 prefix {0:?}: it must be a valid file name")]
    Prefix(String),
    /// iceoryx2 refused to create the recorder's node.
    #[error("cannot create the iceoryx2 node: {0:?}")]
    Node(NodeCreationFailure),
    /// The discovery thread did not start.
    #[error("cannot start the iceoryx2 discovery thread: {0}")]
    Thread(std::io::Error),
}

/// Settings of the shared-memory source.
pub(crate) struct ShmSettings {
    pub common: SourceSettings,
    /// The iceoryx2 file prefix (`global.prefix`); `None` keeps iceoryx2's default.
    pub prefix: Option<String>,
    pub poll_bounds: PollBounds,
    /// Bytes of recorder memory for samples that cannot stay in shared memory.
    pub spill_bytes: usize,
    /// Testing aid: a sleep before each receive pass.
    pub receive_delay: Option<Duration>,
    /// Testing aid: the copying time per pass, in place of [`COPY_SLICE`].
    pub copy_slice: Option<Duration>,
}

/// The shared-memory receive thread.
pub(crate) struct ShmSource {
    settings: ShmSettings,
    link: SourceLink,
    /// The topics being received, as the discovery thread handed them over.
    open: Vec<OpenTopic>,
    /// Ports from and back to the discovery thread.
    discovery: DiscoveryLink,
    /// Listeners to add or give back before the next wait.
    listener_changes: Vec<ListenerChange>,
    retirements: Retirements,
    spill: SpillPool,
    /// How much time taking loans back may spend copying.
    copying: CopyBudget,
    /// The most copying one pass does ([`COPY_SLICE`]; no bound in the last pass).
    copy_slice: Duration,
    /// A topic waits for a copy to go on: the next pass comes at once.
    awaiting_copy: bool,
    leases: Leases,
    /// When the next topic is due to be polled.
    next_poll: Instant,
    /// Which topic the last pass started with.
    first_polled: usize,
}

impl ShmSource {
    /// Creates the recorder's iceoryx2 node and starts the discovery thread with it; the
    /// receive loop starts with [`ShmSource::run`].
    pub fn open(settings: ShmSettings, link: SourceLink) -> Result<Self, ShmError> {
        let node = iceoryx2_node(settings.prefix.as_deref())?;
        let registry = link.registry.clone();
        let discovery = exchange::connect(|end| {
            let discovery = Discovery::new(node, &settings.common, registry, end);
            std::thread::Builder::new()
                .name(discovery::THREAD_NAME.into())
                .spawn(move || discovery.run())
        })
        .map_err(ShmError::Thread)?;
        let (spill, memory) =
            SpillPool::new(settings.spill_bytes, settings.common.zero_copy_threshold);
        if let Some(reason) = memory.lock_refused {
            link.stats.set_memory_warning(format!(
                "the spill pool ({} bytes) could not be locked in memory ({reason}): it may be \
                 swapped out; raise LimitMEMLOCK (or RLIMIT_MEMLOCK) above spill_bytes",
                settings.spill_bytes
            ));
        }
        Ok(Self {
            spill,
            copying: CopyBudget::new(Instant::now()),
            copy_slice: settings.copy_slice.unwrap_or(COPY_SLICE),
            awaiting_copy: false,
            leases: Leases::default(),
            next_poll: Instant::now(),
            first_polled: 0,
            settings,
            link,
            open: Vec::new(),
            discovery,
            listener_changes: Vec::new(),
            retirements: Retirements::default(),
        })
    }

    /// What the receive thread reports about itself.
    pub fn stats(&self) -> Arc<super::stats::ReceiveStats> {
        self.link.stats.clone()
    }

    /// Names the thread to wake after handing something over.
    pub fn set_consumer_thread(&mut self, thread: std::thread::Thread) {
        self.link.tx.set_consumer_thread(thread);
    }

    /// Receives until asked to stop, then hands over the last samples and the stop mark.
    pub fn run(mut self) {
        let priority = self.settings.common.receive_priority;
        (self.link.stats).set_scheduling(super::priority::schedule_this_thread(priority));
        let mut listeners: Vec<EventPort> = Vec::new();
        loop {
            self.apply_listener_changes(&mut listeners);
            if self.receive_until_listeners_change(&listeners) {
                break;
            }
        }
        // The last pass copies whatever it takes back in one go: no pass follows.
        self.copy_slice = Duration::MAX;
        self.receive_every_topic();
        self.link.tx.push_stop();
        self.give_back_everything(listeners);
        self.discovery.close();
    }

    /// Waits and receives until the listeners to wait on change (false) or the recording
    /// stops (true). Takes what discovery found after every wake, at least every quarter
    /// discovery interval, and closes vanished topics every interval. Listener changes
    /// are applied at most every quarter interval: each means a new WaitSet with every
    /// listener attached, and discovery hands over thousands of listeners one by one
    /// (their topics are polled on their schedule meanwhile).
    fn receive_until_listeners_change(&mut self, listeners: &[EventPort]) -> bool {
        let waitset = match WaitSetBuilder::new()
            .signal_handling_mode(SignalHandlingMode::Disabled)
            .create::<Flavor>()
        {
            Ok(waitset) => Some(waitset),
            Err(error) => {
                self.link
                    .note_problem("(waitset)", format!("cannot create a WaitSet: {error:?}"));
                None
            }
        };
        // Each guard with the index of its listener.
        let guards: Vec<_> = waitset
            .iter()
            .flat_map(|ws| {
                listeners.iter().enumerate().filter_map(|(index, port)| {
                    Some((index, ws.attach_notification(&port.listener).ok()?))
                })
            })
            .collect();
        let listener_of_attachment: HashMap<_, usize> = (guards.iter())
            .map(|(index, guard)| (WaitSetAttachmentId::from_guard(guard), *index))
            .collect();
        let mut topic_of_listener = self.match_listeners(listeners);
        let mut fired: Vec<usize> = Vec::new();
        let discovery_interval = self.settings.common.discovery_interval;
        let pickup_interval = discovery_interval / 4;
        let mut all_have_events = self.all_have_events();
        let mut next_round = Instant::now() + discovery_interval;
        let next_listener_change = Instant::now() + pickup_interval;
        loop {
            let wait = if self.awaiting_copy {
                Duration::ZERO
            } else if all_have_events {
                pickup_interval
            } else {
                self.next_poll.saturating_duration_since(Instant::now())
            }
            .min(pickup_interval);
            fired.clear();
            match (&waitset, guards.is_empty()) {
                (Some(ws), false) => {
                    let _ = ws.wait_and_process_once_with_timeout(
                        |attachment| {
                            // Only a listener that fired has events to drain: a drain is
                            // a syscall, and with 100 topics notifying at 1 kHz each,
                            // draining every listener on every wake cost most of a core.
                            if let Some(&index) = listener_of_attachment.get(&attachment) {
                                let _ = listeners[index].listener.try_wait(|_| {});
                                fired.push(index);
                            }
                            CallbackProgression::Continue
                        },
                        wait,
                    );
                }
                _ => std::thread::sleep(wait),
            }
            for topic in fired.iter().filter_map(|&index| topic_of_listener[index]) {
                self.open[topic].woken = true;
            }
            if self.receive_due() {
                self.link.tx.wake();
            }
            if self.link.stopping() {
                return true;
            }
            let mut topics_changed = self.take_selection_change();
            topics_changed |= self.take_found();
            if Instant::now() >= next_round {
                next_round = Instant::now() + discovery_interval;
                topics_changed |= self.close_vanished();
                self.announce_new();
            }
            if !self.listener_changes.is_empty() && Instant::now() >= next_listener_change {
                return false;
            }
            if topics_changed {
                topic_of_listener = self.match_listeners(listeners);
                all_have_events = self.all_have_events();
            }
        }
    }

    /// Marks the open topics that have an event service among `listeners`, and says which
    /// topic each listener wakes (by its index in `open`, which the next change of topics
    /// shifts).
    fn match_listeners(&mut self, listeners: &[EventPort]) -> Vec<Option<usize>> {
        let listener_of: HashMap<&str, usize> = (listeners.iter().enumerate())
            .map(|(index, port)| (port.service.as_str(), index))
            .collect();
        let mut topic_of_listener = vec![None; listeners.len()];
        for (index, topic) in self.open.iter_mut().enumerate() {
            let listener = listener_of.get(topic.topic.service.as_str());
            topic.has_events = listener.is_some();
            if let Some(&listener) = listener {
                topic_of_listener[listener] = Some(index);
            }
        }
        topic_of_listener
    }

    /// True when there are open topics and each has an event service to wait on.
    fn all_have_events(&self) -> bool {
        !self.open.is_empty() && self.open.iter().all(|t| t.has_events)
    }

    /// Receives everything waiting on every subscriber.
    fn receive_every_topic(&mut self) -> bool {
        self.receive(|_, _| Pick::Woken)
    }

    /// Receives everything waiting on the subscribers whose event service fired and on
    /// those due to be polled; true when anything was handed over. Only topics without an
    /// event service keep a poll schedule whose lateness means something.
    fn receive_due(&mut self) -> bool {
        // Topics due a little later are polled now too: their schedules stay together,
        // so the thread wakes once for many topics rather than once for each.
        let slack = self.settings.poll_bounds.shortest / 2;
        self.receive(|topic, now| {
            if topic.woken || topic.awaits_copy {
                Pick::Woken
            } else if topic.schedule.next_poll() > now + slack {
                Pick::Skip
            } else if topic.has_events {
                Pick::Woken
            } else {
                Pick::Scheduled
            }
        })
    }

    /// Receives everything waiting on the subscribers `pick` picks at the pass's
    /// start time; true when anything was handed over. A pass that polls topics on their
    /// schedule notes how late it came behind the earliest of them.
    fn receive(&mut self, pick: impl Fn(&OpenTopic, Instant) -> Pick) -> bool {
        if let Some(delay) = self.settings.receive_delay {
            std::thread::sleep(delay);
        }
        let now = Instant::now();
        let bounds = self.settings.poll_bounds;
        let mut handed_over = false;
        let mut next_poll = now + bounds.longest;
        let mut earliest_due: Option<Instant> = None;
        let mut awaiting_copy = false;
        // Start each pass at the next topic, so that when the handoff fills up the drops
        // fall on every topic in turn rather than always on the last ones.
        self.first_polled = self.first_polled.wrapping_add(1);
        let first = self.first_polled % self.open.len().max(1);
        let mut open = std::mem::take(&mut self.open);
        let mut pass = self.pass();
        let (later, earlier) = open.split_at_mut(first);
        for topic in earlier.iter_mut().chain(later) {
            if !topic.announced {
                continue;
            }
            let picked = pick(topic, now);
            if picked != Pick::Skip {
                let due = topic.schedule.scheduled_poll().filter(|&due| due <= now);
                if let (Pick::Scheduled, Some(due)) = (picked, due) {
                    earliest_due = Some(earliest_due.map_or(due, |e| e.min(due)));
                }
                topic.woken = false;
                let received = receive_topic(topic, &mut pass);
                handed_over |= received.handed_over;
                awaiting_copy |= topic.awaits_copy;
                let bounds = if topic.has_events {
                    bounds.with_events()
                } else {
                    bounds
                };
                topic
                    .schedule
                    .polled(now, received.samples, received.held_back, bounds);
            }
            next_poll = next_poll.min(topic.schedule.next_poll());
        }
        if let Some(due) = earliest_due {
            pass.stats.add_pass(now - due);
        }
        if pass.copied {
            pass.stats.add_copy_pass();
        }
        self.open = open;
        self.next_poll = next_poll;
        self.awaiting_copy = awaiting_copy;
        handed_over
    }

    /// What a receive pass works with besides the topic.
    fn pass(&mut self) -> PassContext<'_> {
        PassContext {
            tx: &mut self.link.tx,
            spill: &mut self.spill,
            copying: &mut self.copying,
            copy_left: self.copy_slice,
            copied: false,
            leases: &mut self.leases,
            stats: &self.link.stats,
            zero_copy_threshold: self.settings.common.zero_copy_threshold,
        }
    }
}

/// Whether a pass takes a topic's samples, and why.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Pick {
    Skip,
    /// Its event service fired (or the recording ends).
    Woken,
    /// Its poll schedule says so.
    Scheduled,
}

/// Publishers gone with samples still queued or borrowed whose connection a subscriber
/// keeps until they are taken (iceoryx2's `subscriber_expired_connection_buffer`, 128 by
/// default, raised by iceoryx2 to a service's borrow limit where that is larger). Every
/// subscriber holds room for these beside its live connections, about 3.6 KiB each, and
/// each `receive` walks them all: at 128, a topic cost 474 KiB of heap, and 1,000 topics
/// about a third more CPU (BENCHMARKS.md, "Thousands of topics"). More
/// than this many publishers of one topic leaving with samples queued between two polls
/// (50 ms at most) would have the oldest connections' samples discarded.
const EXPIRED_CONNECTIONS: usize = 8;

/// A node in the iceoryx2 domain of `prefix` (iceoryx2's default if none), leaving signals
/// to the process (recd and rec handle SIGINT/SIGTERM themselves).
pub fn iceoryx2_node(prefix: Option<&str>) -> Result<Node<Flavor>, ShmError> {
    let mut config = iceoryx2::config::Config::global_config().clone();
    config
        .defaults
        .publish_subscribe
        .subscriber_expired_connection_buffer = EXPIRED_CONNECTIONS;
    if let Some(prefix) = prefix {
        config.global.prefix =
            FileName::new(prefix.as_bytes()).map_err(|_| ShmError::Prefix(prefix.to_string()))?;
    }
    NodeBuilder::new()
        .config(&config)
        .signal_handling_mode(SignalHandlingMode::Disabled)
        .create::<Flavor>()
        .map_err(ShmError::Node)
}
