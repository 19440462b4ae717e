//! Checkpoints of a streamed file: places the writer notes as it writes (every
//! [`CHECKPOINT_BYTES`] or [`CHECKPOINT_INTERVAL_NS`] of log time), each a record boundary
//! with the latest log time before it and where each latched channel's last message before
//! it lies. A cut of a file without chunk indexes starts its scan at the last checkpoint
//! before its window instead of at the file's start ([`crate::cut`]), reading the schemas
//! and channels from the summary and the latched messages where the checkpoint says.
//!
//! A closed file keeps them in a Metadata record named [`CHECKPOINTS`], indexed in its
//! summary; finishing or reindexing a file (chunked, indexed) leaves that record out. A
//! file still being written has no summary: its writer keeps them in a [`CheckpointBook`]
//! with where its Schema, Channel and Metadata records lie, for the cuts of the same
//! process.

mod book;
mod tracker;

use std::collections::BTreeMap;

pub use book::CheckpointBook;
pub(crate) use book::Growing;
pub(crate) use tracker::CheckpointTracker;

/// The name of the Metadata record that holds a streamed file's checkpoints.
pub const CHECKPOINTS: &str = "recd.checkpoints";
/// The key of that record's map whose value lists the checkpoints, one a line:
/// `OFFSET LOG_TIME_MAX LOG_TIME_MIN` then `CHANNEL:OFFSET:LEN` for each latched channel.
/// A closed file's last checkpoint lies at the end of its messages, where the record is.
const LIST_KEY: &str = "checkpoints";
/// A checkpoint is taken once this many bytes were written since the last.
pub(crate) const CHECKPOINT_BYTES: u64 = 64 << 20;
/// ... or once the log time passed the last checkpoint's by this much (a slow recording's
/// scan still starts near its window).
pub(crate) const CHECKPOINT_INTERVAL_NS: u64 = 10_000_000_000;

/// Where a record lies in a file: the offset of its opcode and its length with the
/// 9-byte opcode and length prefix.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Span {
    pub offset: u64,
    pub len: u64,
}

/// A record boundary in a streamed file, and what a scan that starts there needs of what
/// lies before it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Checkpoint {
    /// The offset of the record that follows it.
    pub offset: u64,
    /// The latest log time of the messages before it (none later lies before it).
    pub log_time_max: u64,
    /// The earliest log time of the messages between the checkpoint before it (or the
    /// file's start) and it; `u64::MAX` when there are none.
    pub log_time_min: u64,
    /// Each latched channel's last Message record before it, by channel id.
    pub latched: Vec<(u16, Span)>,
}

/// The checkpoints of one file, oldest first.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Checkpoints(pub Vec<Checkpoint>);

impl Checkpoints {
    /// The Metadata record's map.
    pub fn to_metadata(&self) -> BTreeMap<String, String> {
        let mut list = String::new();
        for checkpoint in &self.0 {
            let times = (checkpoint.log_time_max, checkpoint.log_time_min);
            list += &format!("{} {} {}", checkpoint.offset, times.0, times.1);
            for (channel, span) in &checkpoint.latched {
                list += &format!(" {channel}:{}:{}", span.offset, span.len);
            }
            list.push('\n');
        }
        BTreeMap::from([(LIST_KEY.to_string(), list)])
    }

    /// The checkpoints of a Metadata record's map, if it holds a list that can be read.
    pub fn from_metadata(metadata: &BTreeMap<String, String>) -> Option<Self> {
        let list = metadata.get(LIST_KEY)?;
        list.lines()
            .map(parse_checkpoint)
            .collect::<Option<_>>()
            .map(Self)
    }

    /// The last checkpoint before which every message is older than `start_ns` and that
    /// lies within the file's first `size` bytes: a scan for a window from `start_ns`
    /// may start there.
    pub fn before(&self, start_ns: u64, size: u64) -> Option<&Checkpoint> {
        self.0
            .iter()
            .take_while(|checkpoint| checkpoint.log_time_max < start_ns)
            .filter(|checkpoint| checkpoint.offset < size)
            .last()
    }

    /// The first checkpoint after which no message is older than `end_ns` or as old, when
    /// the checkpoints cover the whole file (a closed file's, its last at the end of its
    /// messages): a scan for a window up to `end_ns` may stop there.
    pub fn after(&self, end_ns: u64) -> Option<u64> {
        let mut stop = None;
        // From the end: each checkpoint's earliest log time is of the messages before it.
        for checkpoint in self.0.iter().rev() {
            stop = Some(checkpoint.offset);
            if checkpoint.log_time_min <= end_ns {
                break;
            }
        }
        stop
    }
}

fn parse_checkpoint(line: &str) -> Option<Checkpoint> {
    let mut words = line.split(' ');
    let offset = words.next()?.parse().ok()?;
    let log_time_max = words.next()?.parse().ok()?;
    let log_time_min = words.next()?.parse().ok()?;
    let latched = words
        .map(|word| {
            let mut parts = word.split(':');
            let channel = parts.next()?.parse().ok()?;
            let offset = parts.next()?.parse().ok()?;
            let len = parts.next()?.parse().ok()?;
            Some((channel, Span { offset, len }))
        })
        .collect::<Option<_>>()?;
    Some(Checkpoint {
        offset,
        log_time_max,
        log_time_min,
        latched,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(offset: u64, log_time_max: u64) -> Checkpoint {
        Checkpoint {
            offset,
            log_time_max,
            log_time_min: log_time_max - 9,
            latched: vec![(
                3,
                Span {
                    offset: offset - 100,
                    len: 40,
                },
            )],
        }
    }

    #[test]
    fn a_scan_starts_at_the_last_checkpoint_with_nothing_of_the_window_before_it() {
        let checkpoints = Checkpoints(vec![at(1_000, 10), at(2_000, 20), at(3_000, 30)]);
        assert_eq!(checkpoints.before(5, 10_000), None);
        assert_eq!(
            checkpoints.before(10, 10_000),
            None,
            "a message at 10 lies before"
        );
        assert_eq!(checkpoints.before(11, 10_000).unwrap().offset, 1_000);
        assert_eq!(checkpoints.before(25, 10_000).unwrap().offset, 2_000);
        assert_eq!(checkpoints.before(99, 10_000).unwrap().offset, 3_000);
        assert_eq!(
            checkpoints.before(99, 2_500).unwrap().offset,
            2_000,
            "one past the bytes read is not used"
        );
    }

    #[test]
    fn a_scan_stops_at_the_first_checkpoint_with_nothing_of_the_window_after_it() {
        // Segments [1, 10], [11, 20], [21, 30] (by log time), the last ending the file.
        let checkpoints = Checkpoints(vec![at(1_000, 10), at(2_000, 20), at(3_000, 30)]);
        assert_eq!(checkpoints.after(5), Some(1_000));
        assert_eq!(checkpoints.after(10), Some(1_000));
        assert_eq!(
            checkpoints.after(11),
            Some(2_000),
            "a message at 11 lies after 1000"
        );
        assert_eq!(checkpoints.after(29), Some(3_000));
        assert_eq!(checkpoints.after(99), Some(3_000));
        // A message passed on the way to the writer: one at 9 lies after 2000.
        let mut late = checkpoints.clone();
        late.0[2].log_time_min = 9;
        assert_eq!(late.after(12), Some(3_000));
        assert_eq!(Checkpoints::default().after(1), None);
    }

    #[test]
    fn checkpoints_come_back_from_their_record() {
        let checkpoints = Checkpoints(vec![at(1_000, 10), at(2_000, 20)]);
        let metadata = checkpoints.to_metadata();
        assert_eq!(Checkpoints::from_metadata(&metadata), Some(checkpoints));
        let garbled = BTreeMap::from([(LIST_KEY.to_string(), "1000 10 3:9".to_string())]);
        assert_eq!(Checkpoints::from_metadata(&garbled), None);
    }
}
