//! The playback's timeline: the wall-clock instant each recorded position is due at, one
//! for every sending thread, steered while it plays. Pausing freezes the position;
//! resuming continues from it, so everything after a pause is shifted by the pause and
//! nothing leaves in a burst. A step while paused lets exactly the next message go.
//! Changing the rate keeps the position. `--on-late stretch` shifts the timeline by how
//! late a message is, so the messages after it keep their relative timing.
//!
//! Messages are numbered in the order they play ([`Timeline::wait`] takes the number),
//! which is what makes "the next message" exact across sending threads.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// How late a message may leave before it counts as late.
pub const LATE_AFTER: Duration = Duration::from_millis(1);

/// The longest single wait, so that a cancel is noticed soon.
const LONGEST_WAIT: Duration = Duration::from_millis(100);

/// The shared timeline of one playback.
#[derive(Debug)]
pub struct Timeline {
    state: Mutex<State>,
    changed: Condvar,
}

#[derive(Debug)]
struct State {
    /// A wall-clock time and the position due then; `None` until the playback starts.
    /// (An anchor rather than the time of position 0, which may lie before the clock's
    /// beginning after a slow rate.)
    anchor: Option<(Instant, Duration)>,
    rate: f64,
    paused: Option<Paused>,
    /// The highest message number a sending thread has been let go.
    let_go: Option<u64>,
    /// A recorded time (ns since the epoch) and its position, once known.
    recorded_at: Option<(u64, Duration)>,
    /// Time spent paused, pauses that ended.
    paused_for: Duration,
    /// How far `--on-late stretch` shifted the timeline.
    stretched: Duration,
}

#[derive(Debug)]
struct Paused {
    since: Instant,
    /// The position the playback stands at.
    position: Duration,
    /// Messages up to this number may still go (those let go before the pause, or
    /// stepped).
    released: Option<u64>,
}

/// What [`Timeline::wait`] ended with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wait {
    /// The message is due; it is this late.
    Due(Duration),
    /// The playback is paused before this message: let go of what it holds and
    /// [`Timeline::wait_resumed`].
    Paused,
    /// The playback was cancelled.
    Cancelled,
}

/// What the timeline did over a playback, for the report.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Steered {
    /// Time spent paused.
    pub paused: Duration,
    /// How far `--on-late stretch` shifted the timeline.
    pub stretched: Duration,
    /// The rate at the end.
    pub rate: f64,
}

impl Timeline {
    /// A timeline at `rate` that has not started; paused from the start if `paused`.
    pub fn new(rate: f64, paused: bool) -> Self {
        let paused = paused.then(|| Paused {
            since: Instant::now(),
            position: Duration::ZERO,
            released: None,
        });
        Self {
            state: Mutex::new(State {
                anchor: None,
                rate,
                paused,
                let_go: None,
                recorded_at: None,
                paused_for: Duration::ZERO,
                stretched: Duration::ZERO,
            }),
            changed: Condvar::new(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Starts the playback: position 0 is due at `origin`. Later calls change nothing.
    pub fn start(&self, origin: Instant) {
        let mut state = self.lock();
        if state.anchor.is_none() {
            state.anchor = Some((origin, Duration::ZERO));
            self.changed.notify_all();
        }
    }

    /// Whether the playback has started.
    pub fn started(&self) -> bool {
        self.lock().anchor.is_some()
    }

    /// Notes that the message recorded at `time` (ns since the epoch) plays at
    /// `position`, for [`Self::recorded_time`]; each pass of a `--loop` says it anew.
    pub fn set_recorded_time(&self, time: u64, position: Duration) {
        self.lock().recorded_at = Some((time, position));
    }

    /// Where the playback stands in the recording: 0 before it starts, frozen while paused.
    pub fn position(&self) -> Duration {
        self.lock().position(Instant::now())
    }

    /// The recorded time (ns since the epoch) the playback stands at, once known.
    pub fn recorded_time(&self) -> Option<u64> {
        let state = self.lock();
        let (time, at) = state.recorded_at?;
        let position = state.position(Instant::now());
        Some(if position >= at {
            time.saturating_add(nanos(position - at))
        } else {
            time.saturating_sub(nanos(at - position))
        })
    }

    /// How far the playback is past recorded `position` (zero when it is not there yet).
    pub fn behind(&self, position: Duration) -> Duration {
        self.position().saturating_sub(position)
    }

    /// Waits until message number `index`, at recorded `position`, is due, or until the
    /// playback pauses before it or is cancelled.
    pub fn wait(&self, index: u64, position: Duration, cancel: &AtomicBool) -> Wait {
        let mut state = self.lock();
        loop {
            if cancel.load(Ordering::Relaxed) {
                return Wait::Cancelled;
            }
            let now = Instant::now();
            if let Some(paused) = &mut state.paused {
                if paused.released.is_none_or(|released| index > released) {
                    return Wait::Paused;
                }
                paused.position = paused.position.max(position);
                state.let_go = state.let_go.max(Some(index));
                return Wait::Due(Duration::ZERO);
            }
            let timeout = match state.due(position) {
                Some(due) => {
                    if now >= due {
                        state.let_go = state.let_go.max(Some(index));
                        return Wait::Due(now - due);
                    }
                    (due - now).min(LONGEST_WAIT)
                }
                None => LONGEST_WAIT,
            };
            state = self
                .changed
                .wait_timeout(state, timeout)
                .unwrap_or_else(|poisoned| poisoned.into_inner())
                .0;
        }
    }

    /// Waits while the playback is paused before message number `index`; false when
    /// cancelled.
    pub fn wait_resumed(&self, index: u64, cancel: &AtomicBool) -> bool {
        let mut state = self.lock();
        loop {
            if cancel.load(Ordering::Relaxed) {
                return false;
            }
            match &state.paused {
                Some(paused) if paused.released.is_none_or(|released| index > released) => {}
                _ => return true,
            }
            state = self
                .changed
                .wait_timeout(state, LONGEST_WAIT)
                .unwrap_or_else(|poisoned| poisoned.into_inner())
                .0;
        }
    }

    /// Pauses; what was let go still leaves.
    pub fn pause(&self) {
        let mut state = self.lock();
        if state.paused.is_none() {
            let now = Instant::now();
            state.paused = Some(Paused {
                since: now,
                position: state.position(now),
                released: state.let_go,
            });
            self.changed.notify_all();
        }
    }

    /// Resumes where the playback stands.
    pub fn resume(&self) {
        let mut state = self.lock();
        if let Some(paused) = state.paused.take() {
            let now = Instant::now();
            if state.anchor.is_some() {
                state.anchor = Some((now, paused.position));
            }
            state.paused_for += now - paused.since;
            self.changed.notify_all();
        }
    }

    /// Pauses when playing, resumes when paused; true when it is paused now.
    pub fn toggle(&self) -> bool {
        if self.paused() {
            self.resume();
            false
        } else {
            self.pause();
            true
        }
    }

    /// Whether the playback is paused.
    pub fn paused(&self) -> bool {
        self.lock().paused.is_some()
    }

    /// While paused: lets exactly the next message go. Nothing when playing.
    pub fn step(&self) {
        let mut state = self.lock();
        let let_go = state.let_go;
        if let Some(paused) = &mut state.paused {
            let last = paused.released.max(let_go);
            paused.released = Some(last.map_or(0, |last| last + 1));
            self.changed.notify_all();
        }
    }

    /// The rate now.
    pub fn rate(&self) -> f64 {
        self.lock().rate
    }

    /// Plays at `rate` from where the playback stands.
    pub fn set_rate(&self, rate: f64) {
        let mut state = self.lock();
        let now = Instant::now();
        if state.paused.is_none() && state.anchor.is_some() {
            state.anchor = Some((now, state.position(now)));
        }
        state.rate = rate;
        self.changed.notify_all();
    }

    /// Shifts the timeline so that `position` is due now, when it is overdue by more than
    /// [`LATE_AFTER`]: what follows keeps its relative timing (`--on-late stretch`).
    pub fn stretch_to(&self, position: Duration) {
        let mut state = self.lock();
        let now = Instant::now();
        let (Some(due), Some((at, anchored)), None) =
            (state.due(position), state.anchor, &state.paused)
        else {
            return;
        };
        if now > due + LATE_AFTER {
            state.anchor = Some((at + (now - due), anchored));
            state.stretched += now - due;
            self.changed.notify_all();
        }
    }

    /// What the timeline did so far.
    pub fn steered(&self) -> Steered {
        let state = self.lock();
        let pausing = state
            .paused
            .as_ref()
            .map_or(Duration::ZERO, |p| p.since.elapsed());
        Steered {
            paused: state.paused_for + pausing,
            stretched: state.stretched,
            rate: state.rate,
        }
    }
}

/// `duration` in nanoseconds, as recorded times count (saturating).
pub fn nanos(duration: Duration) -> u64 {
    u64::try_from(duration.as_nanos()).unwrap_or(u64::MAX)
}

impl State {
    fn position(&self, now: Instant) -> Duration {
        if let Some(paused) = &self.paused {
            return paused.position;
        }
        match self.anchor {
            None => Duration::ZERO,
            Some((at, position)) if now >= at => position + (now - at).mul_f64(self.rate),
            Some((at, position)) => position.saturating_sub((at - now).mul_f64(self.rate)),
        }
    }

    /// When `position` is due, once the playback started (ignoring a pause).
    fn due(&self, position: Duration) -> Option<Instant> {
        let (at, anchored) = self.anchor?;
        Some(match position.checked_sub(anchored) {
            Some(after) => at + after.div_f64(self.rate),
            // Long due: as early as the clock goes, if not that far.
            None => {
                let before = (anchored - position).div_f64(self.rate);
                at.checked_sub(before).unwrap_or(at)
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    fn not_cancelled() -> AtomicBool {
        AtomicBool::new(false)
    }

    #[test]
    fn positions_are_due_at_the_rate_from_one_origin() {
        let timeline = Timeline::new(2.0, false);
        timeline.start(Instant::now());
        let cancel = not_cancelled();
        let started = Instant::now();
        assert!(matches!(
            timeline.wait(0, Duration::from_millis(100), &cancel),
            Wait::Due(_)
        ));
        let waited = started.elapsed();
        assert!(waited >= Duration::from_millis(45), "{waited:?}");
        assert!(waited < Duration::from_millis(95), "{waited:?}");
    }

    #[test]
    fn a_past_position_is_due_at_once_and_says_how_late() {
        let timeline = Timeline::new(1.0, false);
        timeline.start(Instant::now() - Duration::from_millis(20));
        match timeline.wait(0, Duration::ZERO, &not_cancelled()) {
            Wait::Due(late) => assert!(late >= Duration::from_millis(20)),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_pause_holds_back_the_next_message_and_resuming_shifts_by_the_pause() {
        let timeline = Arc::new(Timeline::new(1.0, false));
        timeline.start(Instant::now());
        timeline.pause();
        let cancel = not_cancelled();
        assert_eq!(
            timeline.wait(0, Duration::from_millis(10), &cancel),
            Wait::Paused
        );
        std::thread::sleep(Duration::from_millis(50));
        let position = timeline.position();
        assert!(position < Duration::from_millis(5), "{position:?}");
        timeline.resume();
        // Position 10 ms is due 10 ms after the resume, not at once.
        let resumed = Instant::now();
        assert!(matches!(
            timeline.wait(0, Duration::from_millis(10), &cancel),
            Wait::Due(_)
        ));
        assert!(resumed.elapsed() >= Duration::from_millis(5));
        assert!(timeline.steered().paused >= Duration::from_millis(50));
    }

    #[test]
    fn a_step_lets_exactly_the_next_message_go() {
        let timeline = Timeline::new(1.0, true);
        timeline.start(Instant::now());
        let cancel = not_cancelled();
        let far = Duration::from_secs(60);
        assert_eq!(timeline.wait(0, far, &cancel), Wait::Paused);
        timeline.step();
        assert_eq!(timeline.wait(0, far, &cancel), Wait::Due(Duration::ZERO));
        assert_eq!(timeline.wait(1, far, &cancel), Wait::Paused);
        assert_eq!(timeline.position(), far, "the step moved the position");
        timeline.step();
        assert_eq!(timeline.wait(1, far, &cancel), Wait::Due(Duration::ZERO));
        assert_eq!(timeline.wait(2, far, &cancel), Wait::Paused);
    }

    #[test]
    fn a_rate_change_keeps_the_position() {
        let timeline = Timeline::new(1.0, false);
        timeline.start(Instant::now() - Duration::from_secs(10));
        timeline.set_rate(4.0);
        let position = timeline.position();
        assert!(position >= Duration::from_secs(10), "{position:?}");
        assert!(position < Duration::from_millis(10_100), "{position:?}");
    }

    #[test]
    fn stretching_shifts_the_timeline_by_the_lateness() {
        let timeline = Timeline::new(1.0, false);
        timeline.start(Instant::now() - Duration::from_millis(30));
        timeline.stretch_to(Duration::ZERO);
        let stretched = timeline.steered().stretched;
        assert!(stretched >= Duration::from_millis(30), "{stretched:?}");
        assert!(timeline.behind(Duration::ZERO) < Duration::from_millis(5));
    }

    #[test]
    fn a_cancel_ends_any_wait() {
        let timeline = Timeline::new(1.0, true);
        let cancel = AtomicBool::new(true);
        assert_eq!(timeline.wait(0, Duration::ZERO, &cancel), Wait::Cancelled);
        assert!(!timeline.wait_resumed(0, &cancel));
    }
}
