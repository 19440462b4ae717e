//! The rules' own subscription: the topics content rules name that no running session
//! records, subscribed to for the rules alone and written nowhere, so that a rule sees
//! its topic when no session records it.
//!
//! It is a pre-trigger recording that is never triggered (its buffer, 1 MiB and 1 s, is
//! all it keeps, in memory), iceoryx2 and DDS on the default `[recording] dds_domain`. It
//! follows the sessions: a topic a running session's globs select leaves its selection
//! (that session's samples, with its files' log times, are the ones the rules see), and
//! comes back when no session records it any more.

use std::path::Path;
use std::sync::Arc;

use recd_control::StartRequest;
use recd_engine::{
    ChannelSpec, ClosedFile, Recording, RecordingObserver, TopicSelection, MIN_BUFFER_BYTES,
};

use super::{Rules, SessionTap, LISTENER};
use crate::config::DaemonConfig;

/// How much the listener's buffer keeps, ms.
const KEEP_MS: u64 = 1000;

/// A topic pattern only the empty name matches: a selection of no topic (an empty one
/// would select every topic).
const NO_TOPIC: &str = "";

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

/// The selection of exactly `topics` (none when empty).
fn selecting(topics: &[String]) -> Vec<String> {
    if topics.is_empty() {
        vec![NO_TOPIC.to_string()]
    } else {
        topics.to_vec()
    }
}

/// Starts the rules' own subscription, when a content rule names a topic; logged when
/// it cannot start (the rules then see only what sessions record).
pub fn start(config: &DaemonConfig, rules: &Arc<Rules>) {
    let topics = rules.unrecorded_topics();
    if rules.content_topics().is_empty() {
        return;
    }
    let request = StartRequest {
        topics: selecting(&topics),
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
            tracing::info!(
                ?topics,
                "the rules subscribe for themselves to their topics no session records"
            );
            *rules.listener.lock().expect("listener lock") = Some((recording, topics));
        }
        Err(error) => tracing::error!(
            "the rules see their topics only while a session records them: their own subscription failed: {error}"
        ),
    }
}

/// Brings the subscription's topics in line with what the sessions record now.
pub(super) fn follow(rules: &Rules) {
    let wanted = rules.unrecorded_topics();
    let mut listener = rules.listener.lock().expect("listener lock");
    let Some((recording, topics)) = listener.as_mut() else {
        return;
    };
    if *topics == wanted {
        return;
    }
    let selection = TopicSelection {
        include: selecting(&wanted),
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

/// Ends the subscription.
pub fn stop(rules: &Rules) {
    if let Some((recording, _)) = rules.listener.lock().expect("listener lock").take() {
        let _ = recording.stop();
    }
}
