//! A pre-trigger session's writing: every message goes into the [`MessageBuffer`]; a
//! trigger opens a file and writes the buffer's messages from the window's start, then
//! the new ones as they arrive, until the window's end.
//!
//! The window is written from the buffer, live messages too, so a file's messages stay
//! in order while a long window's backlog is still being written, and the handoff keeps
//! being taken meanwhile (a bounded amount is written per pass).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::time::Duration;

use recd_storage::{LogWindow, Trigger};

use super::buffer::{Buffered, MessageBuffer};
use super::{ending_of, keep_latched, write_counted, write_to, LoanedBytes, TopicSlot, Writer};
use crate::config::PreTrigger;
use crate::handoff::{now_ns, Stamps};
use crate::trigger::{TriggerWindow, TriggeredFile};

/// How long after a window's end the writer waits for messages logged before it (still
/// between the source and the writer) before it ends the file.
const WINDOW_GRACE_NS: u64 = 50_000_000;

/// The least written per pass while a window's backlog is written; at least twice what
/// arrived meanwhile is written too, so the backlog shrinks.
const WINDOW_BYTES_PER_PASS: u64 = 8 << 20;

/// The buffer of a pre-trigger writer, and the window it is writing.
pub(crate) struct PreTriggerState {
    buffer: MessageBuffer,
    max_age_ns: u64,
    window: Option<Window>,
    /// Bytes kept since the last pass wrote the window.
    kept_since_pass: u64,
}

/// The file a trigger opened, and how far it is written.
struct Window {
    path: PathBuf,
    /// The buffer position of the next message to write.
    next: u64,
    start_ns: u64,
    end_ns: u64,
}

impl PreTriggerState {
    /// A buffer of `bytes` keeping `pre_trigger.duration`.
    pub fn new(pre_trigger: &PreTrigger, bytes: u64) -> Self {
        Self {
            buffer: MessageBuffer::new(bytes),
            max_age_ns: recd_storage::window::nanos(pre_trigger.duration),
            window: None,
            kept_since_pass: 0,
        }
    }

    /// Copies a message into the buffer, letting the oldest go as needed.
    pub(super) fn keep(
        &mut self,
        topics: &mut [Option<TopicSlot>],
        topic: u32,
        stamps: Stamps,
        parts: &[&[u8]],
    ) {
        let pending_from = self.pending_from();
        let kept = self.buffer.push(topic, stamps, parts, |old| {
            let_go(topics, old, pending_from);
        });
        if kept {
            self.kept_since_pass += parts.iter().map(|p| p.len() as u64).sum::<u64>();
        } else {
            let counters = &slot(topics, topic).topic.counters;
            match self.window {
                // Larger than the whole buffer, so it cannot reach the window's file.
                Some(_) => counters.add_dropped(),
                None => counters.add_evicted(),
            }
        }
        self.buffer
            .evict_older_than(self.max_age_ns, pending_from, |old| {
                let_go(topics, old, pending_from);
            });
    }

    /// Where the messages a window has still to write begin (none: the end of time).
    fn pending_from(&self) -> u64 {
        self.window.as_ref().map_or(u64::MAX, |w| w.next)
    }
}

/// Counts a message leaving the buffer unwritten (dropped when its window was still to
/// write it), and keeps a latched topic's last one for the start of the next file.
fn let_go(topics: &mut [Option<TopicSlot>], old: &Buffered<'_>, pending_from: u64) {
    let slot = slot(topics, old.topic);
    if slot.topic.latched {
        keep_latched(slot, old.stamps, &[old.bytes]);
    }
    if !old.written {
        if old.position >= pending_from {
            slot.topic.counters.add_dropped();
        } else {
            slot.topic.counters.add_evicted();
        }
    }
}

fn slot(topics: &mut [Option<TopicSlot>], topic: u32) -> &mut TopicSlot {
    topics[topic as usize]
        .as_mut()
        .expect("announced before its messages")
}

impl<S: LoanedBytes> Writer<S> {
    /// Acts on the triggers asked for, answering each.
    pub(super) fn take_triggers(&mut self) {
        for request in self.requests.take_triggers() {
            let answer = self.trigger(request.time_ns, &request.window);
            // The asker may have given up waiting; the window is written all the same.
            let _ = request.answer.send(answer);
        }
    }

    /// Writes the window `asked` around `time_ns`: its file, and the window itself (the
    /// whole buffer reaching back to its oldest message when it gives no `before`).
    fn trigger(
        &mut self,
        time_ns: u64,
        asked: &TriggerWindow,
    ) -> Result<(TriggeredFile, LogWindow), String> {
        let Some(pre) = &mut self.pre_trigger else {
            return Err("not a pre-trigger session".to_string());
        };
        let window = match asked.before {
            Some(before) => LogWindow::around(time_ns, before, asked.after),
            None => {
                let oldest = pre.buffer.oldest().map_or(time_ns, |m| m.stamps.log_time);
                LogWindow::from_start(oldest.min(time_ns), time_ns, asked.after)
            }
        };
        let record = Trigger {
            time_ns,
            start_ns: window.start_ns,
            end_ns: window.end_ns,
            note: asked.note.clone(),
            id: asked.id.clone(),
            clock_sync: asked.clock_sync.clone(),
        };
        if let Some(open) = &mut pre.window {
            if window.start_ns <= open.end_ns {
                open.end_ns = open.end_ns.max(window.end_ns);
                let extended = TriggeredFile {
                    path: open.path.clone(),
                    start_ns: open.start_ns,
                    end_ns: open.end_ns,
                    extended: true,
                };
                self.write_trigger_record(&record)?;
                return Ok((extended, window));
            }
        }
        // The open window ended before this one starts: what it still has to write was
        // logged before now, so it is all buffered.
        self.write_window_part(true);
        self.end_window();
        self.open_window(record).map(|file| (file, window))
    }

    /// Opens a file for `trigger`: its record, each latched topic's last message before
    /// the window, then the window from the buffer (as passes go by).
    fn open_window(&mut self, trigger: Trigger) -> Result<TriggeredFile, String> {
        let path = self.files.open_next().map_err(|e| e.to_string())?;
        for slot in self.topics.iter_mut().flatten() {
            slot.channel = None;
        }
        if let Err(message) = self.write_trigger_record(&trigger) {
            self.files
                .end_current(ending_of(&self.topics, &self.health));
            return Err(message);
        }
        let pre = self.pre_trigger.as_ref().expect("a pre-trigger writer");
        // The last buffered message of each latched topic before the window.
        let mut latched_before = BTreeMap::new();
        let mut position = 0;
        while let Some(message) = pre.buffer.get(position) {
            if message.stamps.log_time >= trigger.start_ns {
                break;
            }
            if slot(&mut self.topics, message.topic).topic.latched {
                latched_before.insert(message.topic, message.position);
            }
            position = pre.buffer.next(message.position);
        }
        let first = pre
            .buffer
            .get(position)
            .map_or(pre.buffer.end(), |m| m.position);
        for index in 0..self.topics.len() {
            let Some(slot) = self.topics[index].as_mut() else {
                continue;
            };
            if !slot.topic.latched {
                continue;
            }
            if let Some(&position) = latched_before.get(&(index as u32)) {
                self.write_buffered(position);
            } else if let Some(latched) = &slot.latched {
                // Let go of by the buffer already: repeated, as at the start of a split.
                let latched = (latched.stamps, latched.bytes.clone());
                if let Err(Some(error)) =
                    write_to(&mut self.files.current, slot, latched.0, &[&latched.1])
                {
                    self.fail(error);
                }
            }
        }
        let pre = self.pre_trigger.as_mut().expect("a pre-trigger writer");
        pre.window = Some(Window {
            path: path.clone(),
            next: first,
            start_ns: trigger.start_ns,
            end_ns: trigger.end_ns,
        });
        pre.kept_since_pass = 0;
        Ok(TriggeredFile {
            path,
            start_ns: trigger.start_ns,
            end_ns: trigger.end_ns,
            extended: false,
        })
    }

    fn write_trigger_record(&mut self, trigger: &Trigger) -> Result<(), String> {
        let Some(file) = self.files.current.as_mut() else {
            return Err("its file ended after a write error".to_string());
        };
        file.add_metadata(recd_storage::iceoryx2::TRIGGER, &trigger.record())
            .map_err(|error| {
                let message = error.to_string();
                self.fail(error);
                message
            })
    }

    /// Writes the open window's next messages from the buffer: a bounded amount, or all
    /// of them up to the window's end when `all`; ends the file past the end. True if
    /// it wrote anything.
    fn write_window_part(&mut self, all: bool) -> bool {
        let Some(pre) = &mut self.pre_trigger else {
            return false;
        };
        let budget = if all {
            u64::MAX
        } else {
            WINDOW_BYTES_PER_PASS.max(2 * pre.kept_since_pass)
        };
        pre.kept_since_pass = 0;
        let mut written = 0;
        let mut wrote = false;
        while written < budget {
            let pre = self.pre_trigger.as_mut().expect("a pre-trigger writer");
            let Some(window) = &pre.window else {
                break;
            };
            let Some(message) = pre.buffer.get(window.next) else {
                break;
            };
            if message.stamps.log_time > window.end_ns {
                self.end_window();
                break;
            }
            let (position, len) = (message.position, message.bytes.len() as u64);
            let next = pre.buffer.next(position);
            if let Some(window) = &mut pre.window {
                window.next = next;
            }
            self.write_buffered(position);
            written += len;
            wrote = true;
        }
        self.show_buffer();
        wrote
    }

    /// A pass's part of the window (see [`Self::write_window_part`]).
    pub(super) fn write_window(&mut self) -> bool {
        self.write_window_part(false)
    }

    /// Writes the buffered message at `position` to the current file, counting it as
    /// written the first time it reaches a file.
    fn write_buffered(&mut self, position: u64) {
        let Self {
            files,
            topics,
            pre_trigger,
            ..
        } = self;
        let buffer = &mut pre_trigger.as_mut().expect("a pre-trigger writer").buffer;
        let Some(message) = buffer.get(position) else {
            return;
        };
        let slot = slot(topics, message.topic);
        let (first_time, len) = (!message.written, message.bytes.len() as u64);
        let result = write_counted(&mut files.current, slot, message.stamps, &[message.bytes]);
        let counters = &slot.topic.counters;
        match result {
            Ok(()) if first_time => {
                counters.add_written(len);
                buffer.mark_written(position);
            }
            Ok(()) => {}
            Err(error) => {
                if first_time {
                    counters.add_dropped();
                    buffer.mark_written(position);
                }
                if let Some(error) = error {
                    self.write_failed(error);
                }
            }
        }
        self.show_bytes_written();
    }

    /// Ends the open window's file once every message logged before its end was
    /// written (called when the handoff is empty).
    pub(super) fn close_window_if_over(&mut self) {
        let Some(pre) = &self.pre_trigger else {
            return;
        };
        let Some(window) = &pre.window else {
            return;
        };
        let caught_up = pre.buffer.get(window.next).is_none();
        if caught_up && now_ns() > window.end_ns.saturating_add(WINDOW_GRACE_NS) {
            self.end_window();
        }
    }

    /// Finishes the open window's file, if any.
    pub(super) fn end_window(&mut self) {
        let Some(pre) = &mut self.pre_trigger else {
            return;
        };
        if pre.window.take().is_some() {
            self.files
                .end_current(ending_of(&self.topics, &self.health));
        }
    }

    /// At the stop: writes the rest of the open window, then lets go of the buffer.
    pub(super) fn finish_buffer(&mut self) {
        if self.pre_trigger.is_none() {
            return;
        }
        self.write_window_part(true);
        self.end_window();
        let Self {
            topics,
            pre_trigger,
            ..
        } = self;
        let pre = pre_trigger.as_mut().expect("a pre-trigger writer");
        pre.buffer.clear(|old| let_go(topics, old, u64::MAX));
        self.show_buffer();
    }

    /// Shows the buffer's fill in the status.
    fn show_buffer(&self) {
        let Some(pre) = &self.pre_trigger else {
            return;
        };
        let progress = &self.progress;
        (progress.buffered_messages).store(pre.buffer.messages(), Ordering::Relaxed);
        (progress.buffered_bytes).store(pre.buffer.payload_bytes(), Ordering::Relaxed);
        (progress.buffered_span_ns).store(pre.buffer.span_ns(), Ordering::Relaxed);
    }

    /// How long to sleep with nothing to take: a window's end is watched closely.
    pub(super) fn idle_wait(&self) -> Duration {
        let wait = self.files.idle_wait();
        match &self.pre_trigger {
            Some(pre) if pre.window.is_some() => wait.min(Duration::from_millis(10)),
            _ => wait.min(super::health::IDLE_WAIT),
        }
    }
}
