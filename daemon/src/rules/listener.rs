//! The rules' own recording: the topics content rules name, subscribed to for the rules
//! alone and written nowhere, so that a rule sees its topic when no session records it.
//!
//! It is a pre-trigger recording that is never triggered (its buffer, 1 MiB and 1 s,
//! is all it keeps, in memory) of exactly the rules' topics, iceoryx2 and DDS on the
//! default `[recording] dds_domain`. Its samples reach the rules only while no session
//! feeds them the topic (see [`super::watch`]), so that a firing's T is a recorded
//! sample's log time whenever a session records the topic.

use std::path::Path;
use std::sync::Arc;

use recd_control::StartRequest;
use recd_engine::{ChannelSpec, ClosedFile, Recording, RecordingObserver, MIN_BUFFER_BYTES};

use super::{Rules, SessionTap, LISTENER};
use crate::config::DaemonConfig;

/// How much the listener's buffer keeps, ms.
const KEEP_MS: u64 = 1000;

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

/// Starts the listener of `rules`' topics, when a content rule names one; `None` (logged)
/// when it cannot start.
pub fn start(config: &DaemonConfig, rules: &Arc<Rules>) -> Option<Recording> {
    let topics = rules.content_topics();
    if topics.is_empty() {
        return None;
    }
    let request = StartRequest {
        topics: topics.clone(),
        pre_trigger_ms: Some(KEEP_MS),
        buffer_size: Some(MIN_BUFFER_BYTES),
        upload: Some(false),
        ..StartRequest::default()
    };
    let directory = config.state_dir.join("rules");
    let recording = config
        .recording
        .recording_config(&request, "rules".into(), directory.clone())
        .map_err(|e| e.to_string())
        .and_then(|recording| {
            std::fs::create_dir_all(&directory)
                .map_err(|e| format!("cannot create {}: {e}", directory.display()))?;
            let tap = ListenerTap(rules.tap(LISTENER, "rules"));
            Recording::start_observed(recording, Arc::new(tap)).map_err(|e| e.to_string())
        });
    match recording {
        Ok(recording) => {
            tracing::info!(?topics, "the rules subscribe to their topics for themselves too, for when no session records them");
            Some(recording)
        }
        Err(error) => {
            tracing::error!("the rules see their topics only while a session records them: their own subscription failed: {error}");
            None
        }
    }
}
