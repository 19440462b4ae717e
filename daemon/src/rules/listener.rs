//! The rules' own subscription: the topics content rules name that no running session
//! records, subscribed to for the rules alone and written nowhere, so that a rule sees
//! its topic when no session records it.
//!
//! It is a pre-trigger recording that is never triggered (its buffer, 1 MiB and 1 s, is
//! all it keeps, in memory), iceoryx2 and DDS on the default `[recording] dds_domain`. It
//! follows the sessions: a topic a running session's globs select leaves its selection
//! (that session's samples, with its files' log times, are the ones the rules see), and
//! comes back when no session records it any more; while sessions record every rule
//! topic it does not run at all.

use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::sync::Arc;

use recd_control::StartRequest;
use recd_engine::{
    ChannelSpec, ClosedFile, Recording, RecordingObserver, TopicSelection, MIN_BUFFER_BYTES,
};

use super::{Rules, SessionTap, LISTENER};
use crate::config::{DaemonConfig, SessionDefaults};
use crate::locks::lock;

/// How much the listener's buffer keeps, ms.
const KEEP_MS: u64 = 1000;

/// What starting the listener takes: the sessions' defaults (the DDS domain, iceoryx2's
/// settings) and the directory its never-written files would go to.
pub(super) struct Setup {
    defaults: SessionDefaults,
    directory: PathBuf,
    type_cache: Option<PathBuf>,
}

/// Hands the listener's samples to the rules; it makes no files.
struct ListenerTap(SessionTap);

impl RecordingObserver for ListenerTap {
    fn creating(&self, _: &Path) {}
    fn ended(&self, _: &ClosedFile) {}

    fn taps(&self, index: u32, name: &str, channel: &ChannelSpec) -> bool {
        self.0.taps(index, name, channel)
    }

    fn sample(&self, index: u32, log_time_ns: u64, parts: &[&[u8]]) {
        self.0.sample(index, log_time_ns, parts);
    }
}

/// Lets the rules subscribe to their topics for themselves, as `config` records; the
/// rules' thread starts the subscription (and follows the sessions) from then on.
pub fn prepare(config: &DaemonConfig, rules: &Rules) {
    if !rules.watches_content() && !rules.may_change {
        return;
    }
    let setup = Setup {
        defaults: config.recording.clone(),
        directory: config.state_dir.join("rules"),
        type_cache: Some(config.type_cache_dir()),
    };
    *lock(&rules.listener_setup) = Some(setup);
    rules.selection_changed.store(true, Ordering::Relaxed);
}

/// Brings the subscription in line with what the sessions record now: it runs only while
/// some rule topic is recorded by no session, and selects exactly those.
pub(super) fn follow(rules: &Arc<Rules>) {
    let wanted = rules.unrecorded_topics();
    let mut listener = lock(&rules.listener);
    match listener.as_mut() {
        Some((_, topics)) if *topics == wanted => {}
        Some(_) if wanted.is_empty() => {
            if let Some((recording, _)) = listener.take() {
                let _ = recording.stop();
            }
            tracing::info!("the rules' own subscription stops: sessions record every rule topic");
        }
        Some((recording, topics)) => {
            let selection = TopicSelection {
                include: wanted.clone(),
                ..TopicSelection::default()
            };
            match recording.set_topics(&selection, "the rules' topics no session records") {
                Ok(_) => {
                    tracing::info!(topics = ?wanted, "the rules' own subscription follows the sessions")
                }
                Err(error) => tracing::warn!(
                    "the rules' own subscription did not follow the sessions in time: {error}"
                ),
            }
            *topics = wanted;
        }
        None if wanted.is_empty() => {}
        None => {
            let setup = lock(&rules.listener_setup);
            let Some(setup) = setup.as_ref() else { return };
            match start(setup, rules, &wanted) {
                Ok(recording) => {
                    tracing::info!(topics = ?wanted, "the rules subscribe for themselves to their topics no session records");
                    *listener = Some((recording, wanted));
                }
                Err(error) => tracing::error!(
                    "the rules see their topics only while a session records them: their own subscription failed: {error}"
                ),
            }
        }
    }
}

fn start(setup: &Setup, rules: &Arc<Rules>, topics: &[String]) -> Result<Recording, String> {
    let request = StartRequest {
        topics: topics.to_vec(),
        pre_trigger_ms: Some(KEEP_MS),
        buffer_size: Some(MIN_BUFFER_BYTES),
        upload: Some(false),
        ..StartRequest::default()
    };
    let mut recording = (setup.defaults)
        .recording_config(&request, "rules".into(), setup.directory.clone())
        .map_err(|e| e.to_string())?;
    if let Some(dds) = &mut recording.dds {
        dds.type_cache = setup.type_cache.clone();
    }
    if let Some(zenoh) = &mut recording.zenoh {
        zenoh.type_cache = setup.type_cache.clone();
    }
    std::fs::create_dir_all(&setup.directory)
        .map_err(|e| format!("cannot create {}: {e}", setup.directory.display()))?;
    let tap = ListenerTap(rules.tap(LISTENER, "rules"));
    Recording::start_observed(recording, Arc::new(tap)).map_err(|e| e.to_string())
}

/// Ends the subscription.
pub fn stop(rules: &Rules) {
    if let Some((recording, _)) = lock(&rules.listener).take() {
        let _ = recording.stop();
    }
}
