//! The DDS / ROS 2 source: records RTPS topics as the serialized CDR they came as, into
//! channels of the MCAP `ros2` profile.
//!
//! One rustdds participant and subscriber per recording; a reader is created for each
//! selected topic when discovery reports its first writer, with the QoS rosbag2 would
//! choose ([`qos`]), and one thread waits on all readers at once. A discovery thread of
//! normal priority ([`discovery`]) follows the writers, creates, re-creates and drops the
//! readers and describes each topic in the file ([`channel`]), and passes readers to and
//! from the receive thread ([`exchange`], [`topics`]): rustdds' locks and the message
//! definitions' files never hold up the real-time thread. The readers are in [`reader`],
//! taking samples in [`receive`]. A ROS 2 type no `.msg` file describes is asked of its
//! node by [`fetch`]'s thread (kept in [`type_cache`]) while the new topic waits in the
//! discovery thread. [`bare`] reads one topic the same way and keeps
//! nothing: the benchmarks' reference for what recd adds to rustdds.

mod bare;
pub(super) mod channel;
mod discovery;
mod exchange;
mod fetch;
pub(super) mod fetch_wire;
mod gathered;
mod node_services;
mod parameter_values;
mod parameters;
mod qos;
mod raw;
mod reader;
mod receive;
mod topics;
pub(super) mod type_cache;
mod writers;

use std::net::IpAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use rustdds::mio1::{Events, Interest, Poll, Token, Waker};
use rustdds::{DomainParticipant, DomainParticipantBuilder, QosPolicyBuilder, RTPSEntity};

use recd_ros2::msgdef::MessageDefinitions;

pub use bare::{BareCounts, BareDdsReader};
#[cfg(feature = "zenoh")]
pub(in crate::source) use discovery::selected;

use super::{Retirements, SourceLink, SourceSettings};
use crate::config::DdsConfig;
use crate::parameters::ParameterBoard;
use channel::Definitions;
use discovery::{DdsEndpoints, Discovery};
use exchange::DiscoveryLink;
use receive::Pass;
use topics::DdsTopic;

/// Settings of the DDS source.
pub(crate) struct DdsSettings {
    pub common: SourceSettings,
    pub config: DdsConfig,
    /// (test hook) The receive thread sleeps this long before each pass, as a stalled
    /// thread would.
    pub receive_delay: Option<Duration>,
}

/// Why the DDS source could not start.
#[derive(Debug, thiserror::Error)]
pub enum DdsError {
    /// The domain id is out of DDS's range.
    #[error("DDS domain {0} is out of range (0 to 232)")]
    Domain(u16),
    /// rustdds could not create the participant (no usable interface, ports taken, ...).
    #[error("cannot join DDS domain {domain}: {reason}")]
    Participant {
        /// The domain.
        domain: u16,
        /// rustdds' reason.
        reason: String,
    },
    /// The event loop could not be set up.
    #[error("cannot set up the DDS receive loop: {0}")]
    Poll(std::io::Error),
    /// The discovery thread did not start.
    #[error("cannot start the DDS discovery thread: {0}")]
    Thread(std::io::Error),
}

/// Highest domain id RTPS' port mapping allows.
const MAX_DOMAIN: u16 = 232;
/// The participant's status events.
const STATUS: Token = Token(usize::MAX);
/// A stop request or, on the receive thread, something from the discovery thread (mio
/// allows one waker per poll).
const WAKE: Token = Token(usize::MAX - 1);
/// How often every reader is drained even without a readiness event (a safety net: the
/// readers' events are edge-triggered).
const SWEEP_INTERVAL: Duration = Duration::from_millis(100);
/// After a pass that took samples, how long the thread lets the next ones gather before
/// it looks again: a busy topic's samples are then taken in batches instead of one
/// wake-up each (the readers' history holds them meanwhile). Only while no reader's
/// history filled beyond a quarter in the pass ([`receive::Drained::crowded`]), so that
/// a burst is taken at once. 5 ms rather than 1 ms took a fifth off the DDS CPU at
/// 100 B × 10 kHz and 64 KiB × 1 kHz (BENCHMARKS.md); a recorder does not need the
/// latency.
const GATHER_TIME: Duration = Duration::from_millis(5);

/// A rustdds participant in `domain` that uses only `interfaces` (every interface when
/// empty) and reaches participants on this host through loopback, its sockets' receive
/// buffers `receive_buffer_bytes` large (rustdds' default when `None`).
pub fn dds_participant(
    domain: u16,
    interfaces: &[IpAddr],
    receive_buffer_bytes: Option<usize>,
) -> Result<DomainParticipant, DdsError> {
    if domain > MAX_DOMAIN {
        return Err(DdsError::Domain(domain));
    }
    // rustdds quietly uses no network for an address the host does not have.
    for address in interfaces {
        if let Err(error) = std::net::UdpSocket::bind((*address, 0)) {
            return Err(DdsError::Participant {
                domain,
                reason: format!("{address} is not an address of this host ({error})"),
            });
        }
    }
    let mut builder = DomainParticipantBuilder::new(domain).same_host_loopback(true);
    if let Some(bytes) = receive_buffer_bytes {
        builder = builder.socket_receive_buffer_size(bytes);
    }
    if !interfaces.is_empty() {
        builder = builder.with_only_networks(interfaces.iter().copied());
    }
    with_signals_blocked(|| builder.build()).map_err(|e| DdsError::Participant {
        domain,
        reason: e.to_string(),
    })
}

/// Runs `build` with every signal blocked in this thread, so that the threads it starts
/// inherit the mask. rustdds' event loop ends for good at a poll interrupted by a signal
/// (EINTR), and a signal handled anywhere in the process (a child's SIGCHLD, say) may be
/// delivered to its thread: the participant would then go deaf and mute, silently.
fn with_signals_blocked<T>(build: impl FnOnce() -> T) -> T {
    // SAFETY: the sets are initialised by sigfillset/pthread_sigmask before use, and the
    // old mask is restored before returning.
    unsafe {
        let mut all: libc::sigset_t = std::mem::zeroed();
        let mut old: libc::sigset_t = std::mem::zeroed();
        libc::sigfillset(&mut all);
        libc::pthread_sigmask(libc::SIG_BLOCK, &all, &mut old);
        let built = build();
        libc::pthread_sigmask(libc::SIG_SETMASK, &old, std::ptr::null_mut());
        built
    }
}

/// Stops the DDS thread from another thread.
pub(crate) struct DdsStopper {
    waker: Arc<Waker>,
}

impl DdsStopper {
    /// Wakes the receive loop so that it sees the stop flag at once.
    pub fn wake(&self) {
        let _ = self.waker.wake();
    }
}

/// The DDS receive thread.
pub(crate) struct DdsSource {
    poll: Poll,
    settings: DdsSettings,
    link: SourceLink,
    waker: Arc<Waker>,
    /// The topics handed over by the discovery thread, in slot order.
    topics: Vec<DdsTopic>,
    /// Readers from and back to the discovery thread.
    discovery: DiscoveryLink,
    retirements: Retirements,
    /// Reads the nodes' parameters for each file (`rec start --parameters`).
    parameters: Option<parameters::ParameterReader>,
}

impl DdsSource {
    /// Joins the domain and starts the discovery thread; the receive loop starts with
    /// [`DdsSource::run`].
    pub fn open(settings: DdsSettings, link: SourceLink) -> Result<Self, DdsError> {
        let config = &settings.config;
        let participant = dds_participant(
            config.domain,
            &config.interfaces,
            Some(config.receive_buffer_bytes),
        )?;
        let participant_error = |reason: String| DdsError::Participant {
            domain: config.domain,
            reason,
        };
        let subscriber = participant
            .create_subscriber(&QosPolicyBuilder::new().build())
            .map_err(|e| participant_error(e.to_string()))?;
        let mut status = participant.status_listener();
        let discovery_poll = Poll::new().map_err(DdsError::Poll)?;
        discovery_poll
            .registry()
            .register(&mut status, STATUS, Interest::READABLE)
            .map_err(DdsError::Poll)?;
        let discovery_waker =
            Arc::new(Waker::new(discovery_poll.registry(), WAKE).map_err(DdsError::Poll)?);
        let poll = Poll::new().map_err(DdsError::Poll)?;
        let waker = Arc::new(Waker::new(poll.registry(), WAKE).map_err(DdsError::Poll)?);
        let parameters = if config.parameters {
            Some(parameters::ParameterReader::start(
                config.domain,
                &config.interfaces,
                ParameterBoard::new(),
                link.registry.clone(),
            )?)
        } else {
            None
        };
        // recd's own participants: the recording's and the parameters' reader's.
        let ours = std::iter::once(fetch::prefix_of(participant.guid()))
            .chain(parameters.iter().map(|reader| reader.participant()))
            .collect();
        let endpoints = DdsEndpoints {
            participant,
            subscriber,
            status,
            poll: discovery_poll,
            receive_registry: poll.registry().try_clone().map_err(DdsError::Poll)?,
            ours,
        };
        let definitions = Definitions::new(MessageDefinitions::with_ament_prefix_path(
            config.message_dirs.clone(),
        ))
        .with_cache(config.type_cache.clone());
        let fetcher = if config.fetch_types {
            Some(
                fetch::TypeFetcher::start(
                    endpoints.participant.clone(),
                    config.type_cache.clone(),
                    discovery_waker.clone(),
                )
                .map_err(DdsError::Thread)?,
            )
        } else {
            None
        };
        let registry = link.registry.clone();
        let discovery = exchange::connect(waker.clone(), discovery_waker, |end| {
            let discovery =
                Discovery::new(endpoints, &settings, (definitions, fetcher), registry, end);
            std::thread::Builder::new()
                .name(discovery::THREAD_NAME.into())
                .spawn(move || discovery.run())
        })
        .map_err(DdsError::Thread)?;
        Ok(Self {
            poll,
            settings,
            link,
            waker,
            topics: Vec::new(),
            discovery,
            retirements: Retirements::default(),
            parameters,
        })
    }

    /// Where the nodes' parameters are posted for the writer, when they are read.
    pub fn parameter_board(&self) -> Option<Arc<ParameterBoard>> {
        self.parameters
            .as_ref()
            .map(|reader| reader.board().clone())
    }

    /// What stops the receive loop at once from another thread.
    pub fn stopper(&self) -> DdsStopper {
        DdsStopper {
            waker: self.waker.clone(),
        }
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
        let mut events = Events::with_capacity(256);
        let mut next_sweep = Instant::now();
        loop {
            if let Some(delay) = self.settings.receive_delay {
                std::thread::sleep(delay);
            }
            let stopping = self.link.stopping();
            self.take_selection_change();
            let new_readers = self.take_found();
            self.announce_pending();
            let now = Instant::now();
            let mut pass = Pass::default();
            if stopping || now >= next_sweep || new_readers {
                if now >= next_sweep {
                    next_sweep = now + SWEEP_INTERVAL;
                }
                for slot in 0..self.topics.len() {
                    pass.add(self.drain(slot));
                }
            } else {
                for event in events.iter() {
                    if event.token().0 < self.topics.len() {
                        pass.add(self.drain(event.token().0));
                    }
                }
            }
            if pass.handed_over {
                self.link.tx.wake();
            }
            if stopping {
                break;
            }
            if pass.taken > 0 && !pass.crowded {
                std::thread::sleep(GATHER_TIME);
            }
            let wait = next_sweep.saturating_duration_since(Instant::now());
            if let Err(error) = self.poll.poll(&mut events, Some(wait)) {
                if error.kind() != std::io::ErrorKind::Interrupted {
                    self.link
                        .note_problem("(dds)", format!("waiting for DDS samples: {error}"));
                    std::thread::sleep(wait);
                }
            }
        }
        self.link.tx.push_stop();
        // The discovery thread drops the readers and the participant.
        self.give_back_readers();
        exchange::give_back_waiting(&self.discovery);
        self.discovery.close();
    }
}
