//! Opening a recording's sources, before anything is created on disk.

use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use super::StartError;
use crate::config::RecordingConfig;
use crate::handoff::{handoff, Receiver};
use crate::live_selection::LiveSelection;
use crate::registry::TopicRegistry;
use crate::select::TopicFilter;
use crate::source::dds::{DdsSettings, DdsSource};
use crate::source::shm::poll::PollBounds;
use crate::source::shm::{ShmSettings, ShmSource};
use crate::source::stats::ReceiveStats;
#[cfg(feature = "zenoh")]
use crate::source::zenoh::{ZenohSettings, ZenohSource};
use crate::source::{Held, SelectionLink, SourceLink, SourceSettings};
use crate::throttle::Throttles;
use crate::writer::SourceFamily;

/// The sources of a recording, open and not yet running, each with its handoffs'
/// receiving ends.
pub(crate) struct Sources {
    pub stop: Arc<AtomicBool>,
    pub registry: Arc<TopicRegistry>,
    /// Changes of the selection while recording, taken by every source.
    pub selection: Arc<LiveSelection>,
    pub dds: Option<(DdsSource, Vec<Receiver<Held>>)>,
    pub shm: Option<(ShmSource, Vec<Receiver<Held>>)>,
    #[cfg(feature = "zenoh")]
    pub zenoh: Option<(ZenohSource, Vec<Receiver<Held>>)>,
}

impl Sources {
    /// Joins the DDS domain and opens iceoryx2, as `config` asks.
    pub fn open(config: &RecordingConfig) -> Result<Self, StartError> {
        let filter = TopicFilter::new(&config.topics)?;
        let families = SourceFamily::recorded(config);
        if families.is_empty() {
            return Err(StartError::NoSource);
        }
        #[cfg(not(feature = "zenoh"))]
        if config.zenoh.is_some() {
            return Err(StartError::ZenohNotBuilt);
        }
        let stop = Arc::new(AtomicBool::new(false));
        let registry = Arc::new(TopicRegistry::default());
        let selection = Arc::new(LiveSelection::new(families.len()));
        // Each receive thread's place among the recording's, in the families' order.
        let id = |family| families.iter().position(|f| *f == family).unwrap_or(0);
        let common = SourceSettings {
            filter,
            throttles: Throttles::new(&config.throttles)?,
            zero_copy_threshold: config.zero_copy_threshold,
            discovery_interval: config.discovery_interval,
            receive_priority: config.receive_priority,
        };
        let link = |source, id| {
            let (tx, rx) = handoff(&config.ring);
            let link = SourceLink {
                tx,
                registry: registry.clone(),
                stop: stop.clone(),
                stats: Arc::new(ReceiveStats::new(source)),
                selection: SelectionLink::new(selection.clone(), id),
            };
            (link, vec![rx])
        };
        let dds = match &config.dds {
            Some(dds_config) => {
                let settings = DdsSettings {
                    common: common.clone(),
                    config: dds_config.clone(),
                    receive_delay: config.test_hooks.receive_delay,
                };
                let (link, receivers) = link("dds", id(SourceFamily::Dds));
                Some((DdsSource::open(settings, link)?, receivers))
            }
            None => None,
        };
        #[cfg(feature = "zenoh")]
        let zenoh = match &config.zenoh {
            Some(zenoh_config) => {
                let settings = ZenohSettings {
                    common: common.clone(),
                    config: zenoh_config.clone(),
                };
                let (link, receivers) = link("zenoh", id(SourceFamily::Zenoh));
                Some((ZenohSource::open(settings, link)?, receivers))
            }
            None => None,
        };
        let shm = if config.iceoryx2 {
            let settings = ShmSettings {
                common,
                prefix: config.iceoryx2_prefix.clone(),
                poll_bounds: PollBounds {
                    shortest: config.min_poll_interval,
                    longest: config.max_poll_interval,
                },
                spill_bytes: config.spill_bytes,
                receive_delay: config.test_hooks.receive_delay,
                copy_slice: config.test_hooks.copy_slice,
            };
            let (link, receivers) = link("iceoryx2", id(SourceFamily::Iceoryx2));
            Some((ShmSource::open(settings, link)?, receivers))
        } else {
            None
        };
        Ok(Self {
            stop,
            registry,
            selection,
            dds,
            shm,
            #[cfg(feature = "zenoh")]
            zenoh,
        })
    }
}
