//! Files being closed beside the writer: each file's summary and sync run on a thread of
//! their own, so that they do not hold up the handoff.
//!
//! A thread that has ended is joined at the next file's closing rather than at the
//! session's end: until it is joined, a thread keeps its stack mapped (about 24 KiB
//! resident and two mappings each), so a session that splits every few seconds grew by
//! about 10 MB an hour and would, after some 32,000 files, reach the kernel's limit of
//! mappings, where no thread can be started.

use std::thread::JoinHandle;

use recd_storage::{FileSummary, WriteError};

/// What closing a file gives: its summary, and the error that cut it short if any.
pub(crate) type Closed = (FileSummary, Option<WriteError>);

/// The threads closing files, and what those that ended said.
#[derive(Default)]
pub(crate) struct Closing {
    running: Vec<JoinHandle<Closed>>,
    ended: Vec<Closed>,
}

impl Closing {
    /// Closes a file with `close` on a thread of its own, after joining the threads that
    /// have ended.
    pub fn start(&mut self, close: impl FnOnce() -> Closed + Send + 'static) {
        self.join_ended();
        self.running.push(std::thread::spawn(close));
    }

    /// Waits for every file still being closed; what each closing gave, in no order.
    pub fn finish(self) -> impl Iterator<Item = Closed> {
        self.ended
            .into_iter()
            .chain(self.running.into_iter().map(join))
    }

    fn join_ended(&mut self) {
        let ended = self.running.extract_if(.., |thread| thread.is_finished());
        self.ended.extend(ended.map(join));
    }
}

fn join(thread: JoinHandle<Closed>) -> Closed {
    thread.join().expect("file closing thread does not panic")
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;
    use std::time::{Duration, Instant};

    use super::*;

    fn summary(name: &str) -> Closed {
        let summary = FileSummary {
            path: PathBuf::from(name),
            bytes: 0,
            message_count: 0,
            channel_message_counts: Default::default(),
            time_range: None,
            data_crc: None,
            indexed: true,
            stored_sha256: None,
        };
        (summary, None)
    }

    #[test]
    fn threads_that_ended_are_joined_when_the_next_file_closes() {
        let mut closing = Closing::default();
        for index in 0..50 {
            closing.start(move || summary(&format!("{index}")));
            let deadline = Instant::now() + Duration::from_secs(10);
            while !closing.running.iter().all(JoinHandle::is_finished) {
                assert!(Instant::now() < deadline, "a closing thread did not end");
                std::thread::sleep(Duration::from_millis(1));
            }
        }
        assert_eq!(
            closing.running.len(),
            1,
            "only the last file's thread unjoined"
        );
        let mut paths: Vec<_> = closing.finish().map(|(s, _)| s.path).collect();
        paths.sort();
        let mut expected: Vec<_> = (0..50).map(|i| PathBuf::from(format!("{i}"))).collect();
        expected.sort();
        assert_eq!(paths, expected, "every file's summary, once");
    }

    #[test]
    fn a_file_still_closing_is_waited_for_at_the_end() {
        let mut closing = Closing::default();
        closing.start(|| {
            std::thread::sleep(Duration::from_millis(100));
            summary("slow")
        });
        closing.start(|| summary("fast"));
        assert_eq!(closing.finish().count(), 2);
    }
}
