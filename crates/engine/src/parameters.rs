//! The ROS 2 parameters each file starts with (`rec start --parameters`): the board
//! between the thread that reads them off the nodes and the writer that puts them into
//! its files.
//!
//! The writer tells the board which file it has open; the reading thread then reads every
//! node's parameters for that file and posts them, node by node; the writer puts each
//! node's into the file as one Metadata record the first time it sees them. A node found
//! later in the file is read and written then. Whatever the nodes take to answer, the
//! writer only ever takes a lock and copies records encoded beforehand: the reading waits
//! on the network and encodes, the writing never does either.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::Duration;

use recd_storage::iceoryx2::parameters_metadata_name;
use recd_storage::EncodedMetadata;

/// A node's parameters as its file's Metadata record (each name with its value as YAML),
/// encoded.
pub(crate) type NodeParameters = Arc<EncodedMetadata>;

/// What the reading thread and the writer share.
#[derive(Default)]
pub(crate) struct ParameterBoard {
    /// Changes with every post and every file opened, so that the writer looks at the
    /// board only when there is something new.
    version: AtomicU64,
    state: Mutex<State>,
    /// Wakes the reading thread when a file opens or the recording ends.
    changed: Condvar,
}

#[derive(Default)]
struct State {
    /// The number of the file the writer has open, once it has one.
    file: Option<u32>,
    /// That file's name, which its records' names hold.
    file_name: String,
    /// What was read for that file, by node (`/ns/talker`).
    read: BTreeMap<String, NodeParameters>,
    /// Set when the recording ends: the reading thread stops.
    closed: bool,
}

/// What the reading thread is to do next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Wanted {
    /// Read the nodes for this file (those not read for it yet).
    File(u32),
    /// No file is open yet: wait.
    Nothing,
    /// The recording ended.
    Closed,
}

impl ParameterBoard {
    /// A board with no file open.
    pub fn new() -> Arc<Self> {
        Arc::default()
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn bump(&self) {
        self.version.fetch_add(1, Ordering::Release);
    }

    /// The board's version: different after anything was posted or opened.
    pub fn version(&self) -> u64 {
        self.version.load(Ordering::Acquire)
    }

    /// The writer opened file `number`, named `name`: what was read for an earlier one
    /// no longer counts, and the nodes are read again.
    pub fn file_opened(&self, number: u32, name: &str) {
        let mut state = self.state();
        if state.file == Some(number) {
            return;
        }
        state.file = Some(number);
        state.file_name = name.to_string();
        state.read.clear();
        drop(state);
        self.bump();
        self.changed.notify_all();
    }

    /// What was read for file `number` of the nodes not in `written`, which they join.
    pub fn unwritten(&self, number: u32, written: &mut BTreeSet<String>) -> Vec<NodeParameters> {
        let state = self.state();
        if state.file != Some(number) {
            return Vec::new();
        }
        state
            .read
            .iter()
            .filter(|(node, _)| written.insert((*node).clone()))
            .map(|(_, record)| record.clone())
            .collect()
    }

    /// The recording ended: the reading thread stops at its next look.
    pub fn close(&self) {
        self.state().closed = true;
        self.changed.notify_all();
    }

    /// What to read now; waits up to `wait` for a file to open (or another than
    /// `done`, the last one whose nodes were all read) before answering.
    pub fn wanted(&self, done: Option<u32>, wait: Duration) -> Wanted {
        let state = self.state();
        let (state, _) = self
            .changed
            .wait_timeout_while(state, wait, |s| {
                !s.closed && (s.file.is_none() || s.file == done)
            })
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        match (state.closed, state.file) {
            (true, _) => Wanted::Closed,
            (false, Some(file)) => Wanted::File(file),
            (false, None) => Wanted::Nothing,
        }
    }

    /// Whether the writer still has file `number` open (a reading for it still counts).
    pub fn is_current(&self, number: u32) -> bool {
        let state = self.state();
        !state.closed && state.file == Some(number)
    }

    /// Posts `node`'s parameters as read for file `number`, encoded as its record (here,
    /// on the reading thread); a file since closed does not take them.
    pub fn post(
        &self,
        number: u32,
        node: &str,
        values: &BTreeMap<String, String>,
    ) -> std::io::Result<()> {
        let file_name = {
            let state = self.state();
            if state.file != Some(number) {
                return Ok(());
            }
            state.file_name.clone()
        };
        let name = parameters_metadata_name(&file_name, node);
        let record = Arc::new(EncodedMetadata::new(&name, values)?);
        let mut state = self.state();
        if state.file != Some(number) {
            return Ok(());
        }
        state.read.insert(node.to_string(), record);
        drop(state);
        self.bump();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn values(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    fn record(file: &str, node: &str, pairs: &[(&str, &str)]) -> EncodedMetadata {
        EncodedMetadata::new(&parameters_metadata_name(file, node), &values(pairs)).unwrap()
    }

    #[test]
    fn each_file_gets_each_node_once_as_read_for_it() {
        let board = ParameterBoard::new();
        assert_eq!(board.wanted(None, Duration::ZERO), Wanted::Nothing);
        board.file_opened(1, "a_0000.mcap");
        assert_eq!(board.wanted(None, Duration::ZERO), Wanted::File(1));
        let mut written = BTreeSet::new();
        assert!(board.unwritten(1, &mut written).is_empty());

        let before = board.version();
        board
            .post(1, "/talker", &values(&[("gain", "1.5")]))
            .unwrap();
        assert_ne!(board.version(), before);
        let got = board.unwritten(1, &mut written);
        assert_eq!(got.len(), 1);
        assert_eq!(got[0].name(), "parameters/a_0000.mcap/talker");
        assert_eq!(
            *got[0],
            record("a_0000.mcap", "/talker", &[("gain", "1.5")])
        );
        // Written once per file, however often the writer looks.
        assert!(board.unwritten(1, &mut written).is_empty());
        board.post(1, "/late", &values(&[])).unwrap();
        assert_eq!(board.unwritten(1, &mut written).len(), 1);

        // The next file reads everything again; a reading for the old one is not taken.
        board.file_opened(2, "a_0001.mcap");
        assert_eq!(board.wanted(Some(1), Duration::ZERO), Wanted::File(2));
        let mut written = BTreeSet::new();
        board
            .post(1, "/talker", &values(&[("gain", "1.5")]))
            .unwrap();
        assert!(board.unwritten(2, &mut written).is_empty());
        assert!(!board.is_current(1));
        board
            .post(2, "/talker", &values(&[("gain", "2.5")]))
            .unwrap();
        let got = board.unwritten(2, &mut written);
        assert_eq!(
            *got[0],
            record("a_0001.mcap", "/talker", &[("gain", "2.5")])
        );
        assert_eq!(got[0].name(), "parameters/a_0001.mcap/talker");
    }

    #[test]
    fn the_reader_waits_for_a_new_file_and_stops_when_closed() {
        let board = ParameterBoard::new();
        board.file_opened(1, "a_0000.mcap");
        // Everything read for file 1: nothing new within the wait.
        assert_eq!(
            board.wanted(Some(1), Duration::from_millis(10)),
            Wanted::File(1)
        );
        let waiting = {
            let board = board.clone();
            std::thread::spawn(move || board.wanted(Some(1), Duration::from_secs(30)))
        };
        board.file_opened(2, "a_0001.mcap");
        assert_eq!(waiting.join().unwrap(), Wanted::File(2));
        board.close();
        assert_eq!(
            board.wanted(Some(2), Duration::from_secs(30)),
            Wanted::Closed
        );
    }
}
