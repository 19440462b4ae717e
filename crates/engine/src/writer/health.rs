//! The writer's part in topic health: it checks the watch ([`crate::health`]) between
//! passes, writes each change to the file's `recd/health` channel and tells the observer,
//! and gives each file a health record at its end.

use std::collections::BTreeMap;
use std::time::Duration;

use recd_health::{
    FileHealthSummary, HealthEvent, HEALTH_CHANNEL, HEALTH_SCHEMA, HEALTH_SCHEMA_NAME,
};
use recd_storage::{ChannelId, MessageHeader, StreamWriter, WriteError};

use super::{LoanedBytes, TopicSlot, Writer};
use crate::handoff::now_ns;
use crate::health::HealthMonitor;

/// The longest the writer sleeps with nothing to take, so that a silence is seen in time
/// (within a topic's `max_gap` and this).
pub(super) const IDLE_WAIT: Duration = Duration::from_millis(50);

impl<S: LoanedBytes> Writer<S> {
    /// A pause, or its end, breaks each topic's stretch in the file: a paused span is no
    /// gap.
    pub(super) fn watch_pause(&mut self) {
        let paused = self.requests.paused();
        if paused != self.was_paused {
            self.was_paused = paused;
            for slot in self.topics.iter_mut().flatten() {
                slot.file_health.break_continuity();
            }
        }
    }

    /// Checks the topics' health (now is the wall clock when `caught_up`), renews each
    /// topic's gap threshold, and writes and tells every change.
    pub(super) fn check_health(&mut self, caught_up: bool) {
        let number = self.files.file_number();
        let observer = self.files.observer().clone();
        let Self {
            health,
            topics,
            files,
            health_channel,
            ..
        } = self;
        health.check(caught_up);
        let events = health.events();
        for slot in topics.iter_mut().flatten() {
            slot.max_gap_ns = health.max_gap_ns(slot.topic.index);
        }
        let mut failure = None;
        for event in events {
            observer.health_changed(event);
            if let (Some(channel), Some(file)) = (health_channel.as_mut(), files.current.as_mut()) {
                if let Err(error) = write_event(file, channel, number, event) {
                    failure.get_or_insert(error);
                }
            }
        }
        if let Some(error) = failure {
            self.fail(error);
        }
    }
}

/// Writes `event` to the `recd/health` channel of `file` (file number `number`), adding
/// the channel first in a new file.
fn write_event(
    file: &mut StreamWriter,
    channel: &mut Option<(u32, ChannelId)>,
    number: u32,
    event: &HealthEvent,
) -> Result<(), WriteError> {
    let id = match *channel {
        Some((file_number, id)) if file_number == number => id,
        _ => {
            let schema =
                file.add_schema(HEALTH_SCHEMA_NAME, "jsonschema", HEALTH_SCHEMA.as_bytes())?;
            let id = file.add_channel(Some(schema), HEALTH_CHANNEL, "json", &BTreeMap::new())?;
            *channel = Some((number, id));
            id
        }
    };
    let now = now_ns();
    let header = MessageHeader {
        channel: id,
        sequence: 0,
        log_time: now,
        publish_time: now,
    };
    file.write_message_parts(&header, &[&event.to_json()])
}

/// The health of the file being ended: each topic with a message in it, under its
/// expectation as of now, and the required rules still missing.
pub(super) fn file_health(
    topics: &[Option<TopicSlot>],
    health: &HealthMonitor,
) -> FileHealthSummary {
    let in_file = || {
        topics
            .iter()
            .flatten()
            .filter(|slot| slot.channel.is_some())
    };
    let file_last_ns = in_file()
        .filter_map(|slot| slot.file_health.last_ns())
        .max()
        .unwrap_or(0);
    let topics = in_file()
        .map(|slot| {
            let expected = slot
                .topic
                .health
                .lock()
                .expect("health lock")
                .expected
                .clone();
            let summary = slot.file_health.summary(&expected, file_last_ns);
            (slot.topic.name.clone(), summary)
        })
        .collect();
    FileHealthSummary::new(topics, health.missing())
}
