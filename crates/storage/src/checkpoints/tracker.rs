//! The writer's side: notes each latched channel's last message as it is written and
//! takes a checkpoint when enough bytes or log time passed since the last one.

use super::book::Growing;
use super::{Checkpoint, Checkpoints, Span, CHECKPOINT_BYTES, CHECKPOINT_INTERVAL_NS};

/// The checkpoints of the file being written, kept as its messages are written.
#[derive(Debug)]
pub(crate) struct CheckpointTracker {
    /// Per channel id: whether it is latched, and its last message's record if it is.
    latched: Vec<(bool, Option<Span>)>,
    /// The Schema, Channel and Metadata records of the current file.
    definitions: Vec<Span>,
    checkpoints: Checkpoints,
    /// Where the last checkpoint lies, and the log time it was taken at.
    last_offset: u64,
    last_time_ns: Option<u64>,
    /// The earliest log time since the last checkpoint, and the latest in the file.
    segment_min: u64,
    log_time_max: u64,
}

impl Default for CheckpointTracker {
    fn default() -> Self {
        Self {
            latched: Vec::new(),
            definitions: Vec::new(),
            checkpoints: Checkpoints::default(),
            last_offset: 0,
            last_time_ns: None,
            segment_min: u64::MAX,
            log_time_max: 0,
        }
    }
}

impl CheckpointTracker {
    /// Notes a channel added (ids count up from 0) and whether it is latched.
    pub fn channel_added(&mut self, latched: bool) {
        self.latched.push((latched, None));
    }

    /// Starts a new file: the channels stay, their messages and the checkpoints do not.
    pub fn file_started(&mut self) {
        for (_, last) in &mut self.latched {
            *last = None;
        }
        self.definitions.clear();
        self.checkpoints = Checkpoints::default();
        self.last_offset = 0;
        self.last_time_ns = None;
        self.segment_min = u64::MAX;
        self.log_time_max = 0;
    }

    /// Notes a Schema, Channel or Metadata record written at `record`.
    pub fn definition_written(&mut self, record: Span) {
        self.definitions.push(record);
    }

    /// Notes the Message record at `record` of `channel`, logged at `log_time_ns`; takes a
    /// checkpoint after it when due, and then says so.
    pub fn message_written(&mut self, channel: u16, record: Span, log_time_ns: u64) -> bool {
        if let Some((true, last)) = self.latched.get_mut(channel as usize) {
            *last = Some(record);
        }
        self.segment_min = self.segment_min.min(log_time_ns);
        self.log_time_max = self.log_time_max.max(log_time_ns);
        let end = record.offset + record.len;
        let since = *self.last_time_ns.get_or_insert(log_time_ns);
        let due = end - self.last_offset >= CHECKPOINT_BYTES
            || log_time_ns.saturating_sub(since) >= CHECKPOINT_INTERVAL_NS;
        if !due {
            return false;
        }
        self.take(end);
        self.last_time_ns = Some(log_time_ns);
        true
    }

    /// Takes the last checkpoint of a file being closed, at `end`, the end of its
    /// messages, if it has checkpoints and messages came after the last.
    pub fn file_ending(&mut self, end: u64) {
        if self.segment_min != u64::MAX && !self.checkpoints.0.is_empty() {
            self.take(end);
        }
    }

    fn take(&mut self, offset: u64) {
        let latched = (self.latched.iter().enumerate())
            .filter_map(|(id, (_, last))| Some((id as u16, (*last)?)))
            .collect();
        self.checkpoints.0.push(Checkpoint {
            offset,
            log_time_max: self.log_time_max,
            log_time_min: self.segment_min,
            latched,
        });
        self.last_offset = offset;
        self.segment_min = u64::MAX;
    }

    /// The checkpoints taken in the current file.
    pub fn checkpoints(&self) -> &Checkpoints {
        &self.checkpoints
    }

    /// What a cut of the current file needs while it grows.
    pub fn growing(&self) -> Growing {
        Growing {
            definitions: self.definitions.clone(),
            checkpoints: self.checkpoints.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn span(offset: u64, len: u64) -> Span {
        Span { offset, len }
    }

    #[test]
    fn a_checkpoint_follows_enough_bytes_or_log_time_with_the_latched_messages_before_it() {
        let mut tracker = CheckpointTracker::default();
        tracker.channel_added(false);
        tracker.channel_added(true);
        let frame = CHECKPOINT_BYTES / 4;
        let offset = std::cell::Cell::new(100);
        let write = |tracker: &mut CheckpointTracker, channel, len, t| {
            let _ = tracker.message_written(channel, span(offset.get(), len), t);
            offset.set(offset.get() + len);
        };
        write(&mut tracker, 1, 50, 1_000);
        for i in 0..4 {
            write(&mut tracker, 0, frame, 2_000 + i);
        }
        let taken = &tracker.checkpoints().0;
        assert_eq!(taken.len(), 1, "{taken:?}");
        assert_eq!(taken[0].offset, 100 + 50 + 4 * frame);
        assert_eq!(taken[0].log_time_max, 2_003);
        assert_eq!(taken[0].log_time_min, 1_000);
        assert_eq!(taken[0].latched, vec![(1, span(100, 50))]);
        // A slow stretch: log time alone makes the next.
        write(&mut tracker, 1, 50, 2_003 + CHECKPOINT_INTERVAL_NS - 1);
        assert_eq!(tracker.checkpoints().0.len(), 1);
        write(&mut tracker, 1, 50, 2_003 + CHECKPOINT_INTERVAL_NS);
        let taken = &tracker.checkpoints().0;
        assert_eq!(taken.len(), 2);
        assert_eq!(taken[1].latched, vec![(1, span(offset.get() - 50, 50))]);
        assert_eq!(taken[1].log_time_min, 2_003 + CHECKPOINT_INTERVAL_NS - 1);
        tracker.file_ending(offset.get());
        assert_eq!(tracker.checkpoints().0.len(), 2, "nothing after the last");
        write(&mut tracker, 0, 10, 3);
        tracker.file_ending(offset.get());
        let taken = &tracker.checkpoints().0;
        assert_eq!((taken[2].offset, taken[2].log_time_min), (offset.get(), 3));
        tracker.file_started();
        assert!(tracker.checkpoints().0.is_empty());
        offset.set(100);
        write(&mut tracker, 0, 10, 5);
        assert!(tracker.checkpoints().0.is_empty());
        tracker.file_ending(offset.get());
        assert!(tracker.checkpoints().0.is_empty(), "a small file has none");
    }
}
