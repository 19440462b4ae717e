//! Background work (finishing files, uploads) beside recordings: how much of the time it
//! gets while they lose samples ([`share`]), told to the uploader and finishing through
//! [`Pressure`], and what it says about itself.
//!
//! Their priorities are `recd_priority`'s (finishing in SCHED_BATCH and the idle I/O
//! class on one compression thread per two cores, the uploader at nice 10); how they wait
//! while held off and pace their reads is `recd_upload::Yielding`'s. While a recording
//! loses samples they also keep to [`PACE`] each, and keep off the windows
//! [`share::Share`] gives to measuring the recordings without them.

pub mod share;
mod worker;

pub use worker::Worker;

use std::sync::{Arc, Mutex};
use std::time::Instant;

use recd_upload::Pressure;

use crate::locks::lock;
use share::{Losses, Mode, Share, BACKED_OFF_CYCLE, THROTTLED_CYCLE, WINDOW};

/// Bytes per second each of finishing and uploads keeps to while a recording loses
/// samples: a fraction of any disk recd records to, and above what a vehicle records
/// in a steady hour (the soak's camera and 20 topics write 31 MB/s).
pub const PACE: u64 = 64 << 20;

/// The policy for background work, shared by the sessions' sampling (which tells it what
/// recordings lost), finishing and the uploader (which obey it through the pressure).
pub struct Background {
    share: Mutex<Share>,
    pressure: Arc<Pressure>,
}

impl Background {
    /// A policy that tells background work through `pressure`.
    pub fn new(pressure: Arc<Pressure>) -> Self {
        Self {
            share: Mutex::new(Share::new(Instant::now())),
            pressure,
        }
    }

    /// What recordings lost since the last sample (`why` in words, when they lost
    /// anything) and whether files wait to be finished or uploaded.
    pub fn sample(&self, losses: Losses, why: Option<String>, pending: bool) {
        let mut share = lock(&self.share);
        share.record(Instant::now(), losses, why, pending);
        self.tell(&share);
    }

    /// A recording fell behind just now: background work keeps off at once unless the
    /// windows already decide.
    pub fn fell_behind(&self, why: String) {
        let mut share = lock(&self.share);
        share.first_loss(Instant::now(), why);
        self.tell(&share);
    }

    /// No recording writes any more: background work runs freely until one loses again.
    pub fn nothing_records(&self) {
        let mut share = lock(&self.share);
        share.nothing_records(Instant::now());
        self.tell(&share);
    }

    /// Passes the window's decision on to the pressure background work obeys.
    fn tell(&self, share: &Share) {
        if share.on() {
            self.pressure.clear();
        } else {
            let hold = share
                .window_ends()
                .saturating_duration_since(Instant::now());
            self.pressure.raise(reason_to_wait(share), hold);
        }
        let pace = (share.mode() != Mode::Free).then_some(PACE);
        self.pressure.set_pace(pace);
    }

    /// Why background work must keep off now, if it must.
    pub fn hold(&self) -> Option<String> {
        self.pressure.current()
    }

    /// The rate background work keeps to now, if any (bytes per second).
    pub fn pace(&self) -> Option<u64> {
        self.pressure.pace()
    }

    /// The policy's state, for `rec status`, the metrics and the page.
    pub fn state(&self) -> State {
        let share = lock(&self.share);
        State {
            mode: share.mode(),
            on: share.on(),
            line: describe(&share),
        }
    }
}

/// The background policy at one moment.
#[derive(Debug, Clone)]
pub struct State {
    /// How much of the time background work gets.
    pub mode: Mode,
    /// Whether it may run now.
    pub on: bool,
    /// The mode and why, in a line.
    pub line: String,
}

/// Why background work keeps off the window under way.
fn reason_to_wait(share: &Share) -> String {
    match share.mode() {
        Mode::BackedOff => format!(
            "recordings lose more with background work ({}), so it runs 1 window of {} s in {BACKED_OFF_CYCLE}",
            compared(share),
            WINDOW.as_secs()
        ),
        _ => format!(
            "{}; measuring the recordings without background work for {} s",
            share.why(),
            WINDOW.as_secs()
        ),
    }
}

/// The policy in a line.
fn describe(share: &Share) -> String {
    let window = WINDOW.as_secs();
    let pace = PACE >> 20;
    match share.mode() {
        Mode::Free => "running: no recording loses samples".into(),
        Mode::Throttled => format!(
            "throttled: recordings lose samples with or without background work ({}); it runs {} windows of {window} s in {THROTTLED_CYCLE}, at most {pace} MiB/s each",
            compared(share),
            THROTTLED_CYCLE - 1
        ),
        Mode::BackedOff => format!(
            "backed off: recordings lose more with background work ({}); it runs 1 window of {window} s in {BACKED_OFF_CYCLE}, at most {pace} MiB/s each",
            compared(share)
        ),
    }
}

/// The losses per window with and without background work, in words.
fn compared(share: &Share) -> String {
    let c = share.comparison();
    format!(
        "median per {} s window: spilled {:.1} with, {:.1} without; dropped or lost {:.1} with, {:.1} without",
        WINDOW.as_secs(),
        c.spilled_with,
        c.spilled_without,
        c.lost_with,
        c.lost_without
    )
}
