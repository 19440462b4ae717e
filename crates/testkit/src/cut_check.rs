//! The one check that an incident's cut holds exactly its window: whatever the payloads
//! (recd-load's proven ones, a Python publisher's) and whether the files were sealed
//! (decrypted first), per topic the cut holds the recorded messages whose log time lies in
//! the window, the same bytes at the same times, in order, and nothing else — but, for a
//! latched topic, the message in force at the window's start first.

use std::collections::hash_map::DefaultHasher;
use std::collections::BTreeMap;
use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};

/// recd's own health channel, which is no publisher's.
const HEALTH: &str = "recd/health";

/// A message as the check compares it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct HeldMessage {
    /// When it was logged.
    pub log_time: u64,
    /// A hash of its bytes.
    pub digest: u64,
}

/// Every complete message of the MCAP file at `path` per topic, in file order, recd's
/// health channel left out (a file cut short is read up to its last complete record).
pub fn held_messages(path: &Path) -> BTreeMap<String, Vec<HeldMessage>> {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut topics: BTreeMap<String, Vec<HeldMessage>> = BTreeMap::new();
    let Ok(stream) = mcap::MessageStream::new(&bytes) else {
        return topics;
    };
    for message in stream {
        let Ok(message) = message else { break };
        if message.channel.topic == HEALTH {
            continue;
        }
        let mut hasher = DefaultHasher::new();
        message.data.hash(&mut hasher);
        topics
            .entry(message.channel.topic.clone())
            .or_default()
            .push(HeldMessage {
                log_time: message.log_time,
                digest: hasher.finish(),
            });
    }
    topics
}

/// Asserts that `cut_files` hold exactly the messages of `recorded` (the session's files
/// the window overlaps, and more) logged in [`start_ns`, `end_ns`], topic by topic, with
/// each of the `latched` topics' message in force at the window's start first; returns
/// the cut's messages per topic, the latched ones' first left out.
pub fn assert_cut_is_window(
    cut_files: &[PathBuf],
    recorded: &[PathBuf],
    (start_ns, end_ns): (u64, u64),
    latched: &[&str],
) -> BTreeMap<String, Vec<HeldMessage>> {
    // A split file repeats a latched topic's message: the same bytes at the same time.
    let mut held: BTreeMap<String, Vec<HeldMessage>> = BTreeMap::new();
    for file in recorded {
        for (topic, messages) in held_messages(file) {
            held.entry(topic).or_default().extend(messages);
        }
    }
    for messages in held.values_mut() {
        messages.sort();
        messages.dedup();
    }
    let mut cut: BTreeMap<String, Vec<HeldMessage>> = BTreeMap::new();
    for file in cut_files {
        for (topic, messages) in held_messages(file) {
            cut.entry(topic).or_default().extend(messages);
        }
    }
    for topic in cut.keys() {
        assert!(held.contains_key(topic), "{topic}: in the cut only");
    }
    let in_window = |m: &&HeldMessage| (start_ns..=end_ns).contains(&m.log_time);
    let mut windows = BTreeMap::new();
    for (topic, recorded) in &held {
        let mut got: &[HeldMessage] = cut.get(topic).map_or(&[], Vec::as_slice);
        if latched.contains(&topic.as_str()) {
            let in_force = (recorded.iter())
                .filter(|m| m.log_time < start_ns)
                .max_by_key(|m| m.log_time)
                .unwrap_or_else(|| panic!("{topic}: nothing before the window"));
            let first = got
                .first()
                .unwrap_or_else(|| panic!("{topic}: no latched message in the cut"));
            assert_eq!(
                first, in_force,
                "{topic}: the cut starts with the message in force at {start_ns}"
            );
            got = &got[1..];
        }
        let expected: Vec<&HeldMessage> = recorded.iter().filter(in_window).collect();
        // In log-time order, as the recording's (a cut writes by log time).
        let mut got: Vec<&HeldMessage> = got.iter().collect();
        got.sort();
        assert_eq!(
            got, expected,
            "{topic}: the cut holds the window's messages [{start_ns}, {end_ns}] as recorded"
        );
        windows.insert(topic.clone(), got.into_iter().cloned().collect());
    }
    windows
}
