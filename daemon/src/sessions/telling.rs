//! What a running session tells as its sampled status changes: what it lost since the
//! last sample (for the background policy), and log lines for a full disk, a write
//! error, unknown loss and a selection that matches no topic.

use recd_engine::RecordingStatus;

use std::time::Duration;

use super::session::{Sampled, Session};
use crate::background::share::Losses;

/// How long discovery has to find a session's first topic before the log warns that its
/// selection matches nothing.
const FIRST_TOPIC_GRACE: Duration = Duration::from_secs(3);

/// What the session lost since the last sample (messages dropped or lost, samples its
/// writer was too late for), and in words when it lost anything.
pub(super) fn losses_since_last(
    name: &str,
    session: &mut Sampled,
    status: &RecordingStatus,
) -> (Losses, Option<String>) {
    let dropped: u64 = (status.topics.iter())
        .map(|t| t.counts.dropped + t.counts.lost)
        .sum();
    let spilled: u64 = status.receive_threads.iter().map(|t| t.spilled).sum();
    let losses = Losses {
        spilled: spilled.saturating_sub(session.spilled),
        lost: dropped.saturating_sub(session.dropped),
    };
    let why = if losses.lost > 0 {
        Some(format!(
            "session {name} dropped {} messages in the last second",
            losses.lost
        ))
    } else if losses.spilled > 0 {
        Some(format!(
            "session {name}'s writer fell behind (samples spilled)"
        ))
    } else {
        None
    };
    session.dropped = dropped;
    session.spilled = spilled;
    (losses, why)
}

/// Logs what changed since the last sample: writing paused for disk space or resumed, a
/// write error (naming the file).
pub(super) fn tell_changes(running: &Session, session: &mut Sampled, status: &RecordingStatus) {
    let name = &running.name;
    match (&status.disk_full, session.told_disk_full) {
        (Some(full), false) => tracing::warn!(
            session = %name,
            free = full.free,
            minimum = full.minimum,
            "paused: disk full (free {}, min_free_space {}); messages are dropped and counted until there is room",
            bytesize::ByteSize::b(full.free),
            bytesize::ByteSize::b(full.minimum)
        ),
        (None, true) => {
            tracing::info!(session = %name, "disk space is back: recording continues in a new file")
        }
        _ => {}
    }
    session.told_disk_full = status.disk_full.is_some();
    if let (Some(write_error), false) = (&status.write_error, session.told_write_error) {
        tracing::error!(session = %name, "writing failed, the session records nothing more until stopped: {write_error}");
        session.told_write_error = true;
    }
    for topic in &status.topics {
        if topic.counts.unknown_loss && session.told_unknown_loss.insert(topic.service.clone()) {
            let depth = topic.queue_depth.map_or("?".into(), |d| d.to_string());
            tracing::warn!(
                session = %name,
                topic = %topic.name,
                service = %topic.service,
                queue_depth = %depth,
                "unknown loss: the publisher's queue ({depth} samples) was found full and its samples carry no sequence numbers, so samples may have been overwritten uncounted"
            );
        }
    }
    if status.topics.is_empty()
        && !session.told_no_topic
        && running.started.elapsed() >= FIRST_TOPIC_GRACE
    {
        let selection = if session.topics.include.is_empty() {
            "no topic exists to record".to_string()
        } else {
            format!(
                "no topic matches --topic {}",
                session.topics.include.join(", --topic ")
            )
        };
        tracing::warn!(
            session = %name,
            "{selection} after {} s of discovery; recording starts when one appears (rec status shows what is recorded)",
            FIRST_TOPIC_GRACE.as_secs()
        );
        session.told_no_topic = true;
    }
}
