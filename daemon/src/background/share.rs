//! The share of time background work gets while recordings lose samples, decided window
//! by window from what the recordings lost with it and without it.
//!
//! Time is cut into windows of [`WINDOW`]. While no recording loses anything, background
//! work runs in every window. Once one does, windows alternate: background work keeps
//! off one window in [`THROTTLED_CYCLE`] to measure what the recordings lose without it
//! (the machine's floor), and runs paced in the others. When the recordings lose clearly
//! more in the windows with it than in those without (see [`costs`]), it backs off to one
//! window in [`BACKED_OFF_CYCLE`]: a bounded share that keeps files moving and measures
//! again. A minute without any loss lets it run freely again, and so does a moment with
//! nothing recording: what the windows measured belonged to recordings that are gone.

use std::collections::VecDeque;
use std::fmt;
use std::time::{Duration, Instant};

/// The length of a window.
pub const WINDOW: Duration = Duration::from_secs(5);
/// While recordings lose as much without background work as with it, it runs in all
/// windows of this cycle but one.
pub const THROTTLED_CYCLE: u32 = 4;
/// While it costs the recordings, it runs in one window of this cycle.
pub const BACKED_OFF_CYCLE: u32 = 6;
/// Windows of each kind (with background work, without) compared.
const COMPARED: usize = 8;
/// Windows of each kind needed before a cost is judged at all.
const JUDGED_FROM: usize = 4;
/// Windows without any loss after which background work runs freely again.
const QUIET_WINDOWS: u32 = 12;
/// The median over windows with background work counts as higher when it exceeds the
/// median without by this factor and by [`SLACK`] events per window. Medians, because
/// losses come in bursts: one burst in one window is not a cost.
const FACTOR: f64 = 1.5;
const SLACK: f64 = 1.0;

/// What the recordings lost in some span: samples their writers were too late for
/// (spilled) and messages dropped or lost.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Losses {
    /// Samples taken back from writers that fell behind.
    pub spilled: u64,
    /// Messages dropped or lost.
    pub lost: u64,
}

impl Losses {
    fn any(&self) -> bool {
        self.spilled > 0 || self.lost > 0
    }

    /// Adds `other` to these.
    pub fn add(&mut self, other: Losses) {
        self.spilled += other.spilled;
        self.lost += other.lost;
    }
}

/// How much background work may run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// No recording loses anything: every window, at full speed.
    Free,
    /// Recordings lose as much without it: all windows of [`THROTTLED_CYCLE`] but one,
    /// paced.
    Throttled,
    /// Recordings lose more with it: one window of [`BACKED_OFF_CYCLE`], paced.
    BackedOff,
}

impl fmt::Display for Mode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Mode::Free => "running",
            Mode::Throttled => "throttled",
            Mode::BackedOff => "backed off",
        })
    }
}

/// The median losses per window with background work and without, over the windows
/// compared.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Comparison {
    /// Spilled per window with background work running.
    pub spilled_with: f64,
    /// Spilled per window without.
    pub spilled_without: f64,
    /// Dropped or lost per window with background work running.
    pub lost_with: f64,
    /// Dropped or lost per window without.
    pub lost_without: f64,
}

/// Whether background work is shown to cost the recordings: in the windows with it, they
/// spill or lose clearly more than in those without.
pub fn costs(comparison: &Comparison) -> bool {
    let higher = |with: f64, without: f64| with > without * FACTOR + SLACK;
    higher(comparison.spilled_with, comparison.spilled_without)
        || higher(comparison.lost_with, comparison.lost_without)
}

/// The window policy's state.
#[derive(Debug)]
pub struct Share {
    mode: Mode,
    /// The window under way: when it started, whether background work runs in it, what
    /// was lost in it and whether work was waiting.
    started: Instant,
    on: bool,
    losses: Losses,
    pending: bool,
    /// Windows since the mode's cycle began.
    position: u32,
    with: VecDeque<Losses>,
    without: VecDeque<Losses>,
    quiet: u32,
    /// What recordings lost last, in words.
    why: String,
}

impl Share {
    /// A policy that starts free at `now`.
    pub fn new(now: Instant) -> Self {
        Self {
            mode: Mode::Free,
            started: now,
            on: true,
            losses: Losses::default(),
            pending: false,
            position: 0,
            with: VecDeque::new(),
            without: VecDeque::new(),
            quiet: 0,
            why: String::new(),
        }
    }

    /// Takes what recordings lost since the last call (`why` says it in words) and
    /// whether background work has files waiting; closes the window when it is over.
    pub fn record(&mut self, now: Instant, losses: Losses, why: Option<String>, pending: bool) {
        self.losses.add(losses);
        self.pending |= pending;
        if let Some(why) = why {
            self.why = why;
        }
        if self.mode == Mode::Free && losses.any() && self.on {
            self.close(now, true);
            return;
        }
        if now.duration_since(self.started) >= WINDOW {
            self.close(now, false);
        }
    }

    /// A recording just fell behind (seen between records, e.g. by a receive thread's
    /// probe): while background work runs freely, it keeps off at once to measure the
    /// floor, so that it never runs on while it is not known to be harmless. The loss
    /// itself comes with the next [`record`](Self::record).
    pub fn first_loss(&mut self, now: Instant, why: String) {
        if self.mode == Mode::Free && self.on {
            self.why = why;
            self.close(now, true);
        }
    }

    /// No recording writes any more (the last stopped, or all are paused): there is nothing
    /// to protect, and the windows measured recordings that are gone, so background work
    /// runs freely from `now`. A recording that starts later and falls behind is then
    /// met as any first loss is: background work keeps off at once.
    pub fn nothing_records(&mut self, now: Instant) {
        *self = Self::new(now);
    }

    /// Ends the window under way, keeps what it showed and decides the next one;
    /// `lost_now` counts it as a window with a loss whatever its counts say.
    fn close(&mut self, now: Instant, lost_now: bool) {
        let lost = self.losses;
        let any = lost_now || lost.any();
        if self.on && self.pending {
            push(&mut self.with, lost);
        } else {
            push(&mut self.without, lost);
        }
        self.quiet = if any { 0 } else { self.quiet + 1 };
        let mode = if self.quiet >= QUIET_WINDOWS || (self.mode == Mode::Free && !any) {
            Mode::Free
        } else if self.with.len() >= JUDGED_FROM
            && self.without.len() >= JUDGED_FROM
            && costs(&self.comparison())
        {
            Mode::BackedOff
        } else {
            Mode::Throttled
        };
        if mode != self.mode {
            self.mode = mode;
            self.position = 0;
        } else {
            self.position += 1;
        }
        self.on = match self.mode {
            Mode::Free => true,
            // The cycle starts with the window without, so a loss is measured against
            // the floor at once.
            Mode::Throttled => !self.position.is_multiple_of(THROTTLED_CYCLE),
            Mode::BackedOff => self.position % BACKED_OFF_CYCLE == BACKED_OFF_CYCLE - 1,
        };
        self.started = now;
        self.losses = Losses::default();
        self.pending = false;
    }

    /// The mode now.
    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// Whether background work may run now.
    pub fn on(&self) -> bool {
        self.on
    }

    /// When the window under way ends.
    pub fn window_ends(&self) -> Instant {
        self.started + WINDOW
    }

    /// The median losses per window with and without background work.
    pub fn comparison(&self) -> Comparison {
        Comparison {
            spilled_with: median(&self.with, |l| l.spilled),
            spilled_without: median(&self.without, |l| l.spilled),
            lost_with: median(&self.with, |l| l.lost),
            lost_without: median(&self.without, |l| l.lost),
        }
    }

    /// What recordings lost last, in words.
    pub fn why(&self) -> &str {
        &self.why
    }
}

/// The median of one count over `windows` (0 for none).
fn median(windows: &VecDeque<Losses>, count: fn(&Losses) -> u64) -> f64 {
    let mut counts: Vec<u64> = windows.iter().map(count).collect();
    counts.sort_unstable();
    match counts.len() {
        0 => 0.0,
        n if n % 2 == 1 => counts[n / 2] as f64,
        n => (counts[n / 2 - 1] + counts[n / 2]) as f64 / 2.0,
    }
}

fn push(windows: &mut VecDeque<Losses>, losses: Losses) {
    if windows.len() == COMPARED {
        windows.pop_front();
    }
    windows.push_back(losses);
}

#[cfg(test)]
mod tests {
    use super::*;

    const SECOND: Duration = Duration::from_secs(1);

    fn spilled(samples: u64) -> Losses {
        Losses {
            spilled: samples,
            lost: 0,
        }
    }

    /// Runs `share` for `windows` windows, one record a second, losing `with` per window
    /// while background work runs and `without` while it keeps off; returns how many
    /// windows it ran in.
    fn run(share: &mut Share, now: &mut Instant, windows: u32, with: u64, without: u64) -> u32 {
        let mut ran = 0;
        let mut seconds = 0;
        while seconds < windows as u64 * WINDOW.as_secs() {
            let on = share.on();
            // The loss of a window, spread over its last second.
            let at_end = now.duration_since(share.started) + SECOND >= WINDOW;
            let lost = match (at_end, on) {
                (false, _) => 0,
                (true, true) => with,
                (true, false) => without,
            };
            let losses = spilled(lost);
            *now += SECOND;
            let before = share.started;
            share.record(*now, losses, Some("spilled".into()), true);
            if share.started != before && on {
                ran += 1;
            }
            seconds += 1;
        }
        ran
    }

    #[test]
    fn background_work_runs_freely_until_a_recording_loses_and_then_keeps_off_at_once() {
        let mut now = Instant::now();
        let mut share = Share::new(now);
        now += SECOND;
        share.record(now, Losses::default(), None, true);
        assert!(share.on());
        now += SECOND;
        share.record(
            now,
            spilled(1),
            Some("session a's writer fell behind".into()),
            true,
        );
        assert_eq!(share.mode(), Mode::Throttled);
        assert!(!share.on(), "the floor is measured first");
        assert_eq!(share.why(), "session a's writer fell behind");
    }

    #[test]
    fn a_loss_that_is_there_without_background_work_keeps_it_running_three_windows_in_four() {
        let mut now = Instant::now();
        let mut share = Share::new(now);
        let ran = run(&mut share, &mut now, 40, 3, 3);
        assert_eq!(share.mode(), Mode::Throttled);
        assert!((28..=31).contains(&ran), "ran {ran} of 40 windows");
    }

    #[test]
    fn a_loss_that_rises_with_background_work_backs_it_off_to_a_bounded_share() {
        let mut now = Instant::now();
        let mut share = Share::new(now);
        // Judged once 4 windows of each kind were seen: 16 windows in.
        run(&mut share, &mut now, 12, 10, 1);
        assert_eq!(share.mode(), Mode::Throttled, "{:?}", share.comparison());
        run(&mut share, &mut now, 8, 10, 1);
        assert_eq!(share.mode(), Mode::BackedOff, "{:?}", share.comparison());
        let ran = run(&mut share, &mut now, 36, 10, 1);
        assert_eq!(share.mode(), Mode::BackedOff);
        assert_eq!(
            ran,
            36 / BACKED_OFF_CYCLE,
            "one window in {BACKED_OFF_CYCLE}"
        );
        // Once it no longer costs, it goes back to the throttled share.
        run(&mut share, &mut now, 60, 1, 1);
        assert_eq!(share.mode(), Mode::Throttled);
    }

    #[test]
    fn a_minute_without_loss_frees_background_work_again() {
        let mut now = Instant::now();
        let mut share = Share::new(now);
        run(&mut share, &mut now, 8, 3, 3);
        assert_eq!(share.mode(), Mode::Throttled);
        run(&mut share, &mut now, QUIET_WINDOWS + 1, 0, 0);
        assert_eq!(share.mode(), Mode::Free);
        assert!(share.on());
    }

    #[test]
    fn windows_with_nothing_waiting_count_as_without_background_work() {
        let mut now = Instant::now();
        let mut share = Share::new(now);
        // Nothing waits: every window is the floor, however it is scheduled.
        for _ in 0..30 {
            now += SECOND;
            share.record(now, spilled(1), None, false);
        }
        assert!(share.with.is_empty());
        assert!(!share.without.is_empty());
    }

    #[test]
    fn a_loss_seen_between_records_keeps_background_work_off_at_once() {
        let now = Instant::now();
        let mut share = Share::new(now);
        share.first_loss(now + SECOND, "session a's writer fell behind".into());
        assert_eq!(share.mode(), Mode::Throttled);
        assert!(!share.on());
        // Seen again within the window it started: nothing changes.
        let ends = share.window_ends();
        share.first_loss(now + 2 * SECOND, "again".into());
        assert_eq!(
            (share.window_ends(), share.why()),
            (ends, "session a's writer fell behind")
        );
    }

    #[test]
    fn with_nothing_recording_background_work_runs_freely_and_the_next_loss_stops_it_at_once() {
        let mut now = Instant::now();
        let mut share = Share::new(now);
        run(&mut share, &mut now, 8, 3, 3);
        assert_eq!(share.mode(), Mode::Throttled);
        share.nothing_records(now);
        assert_eq!(share.mode(), Mode::Free);
        assert!(share.on());
        assert!(share.with.is_empty() && share.without.is_empty());
        // The next recording's first loss is measured against its own floor at once.
        share.first_loss(now + SECOND, "session b's writer fell behind".into());
        assert_eq!(share.mode(), Mode::Throttled);
        assert!(!share.on());
        assert_eq!(share.why(), "session b's writer fell behind");
    }

    #[test]
    fn a_burst_in_one_window_with_background_work_is_no_cost() {
        let mut now = Instant::now();
        let mut share = Share::new(now);
        run(&mut share, &mut now, 8, 3, 3);
        // One window with a burst, then as before.
        let before = share.with.len();
        while share.with.len() == before {
            run(&mut share, &mut now, 1, 500, 3);
        }
        run(&mut share, &mut now, 16, 3, 3);
        assert_eq!(share.mode(), Mode::Throttled, "{:?}", share.comparison());
    }

    #[test]
    fn costs_needs_clearly_more_with_background_work() {
        let comparison = |with: f64, without: f64| Comparison {
            spilled_with: with,
            spilled_without: without,
            lost_with: 0.0,
            lost_without: 0.0,
        };
        assert!(!costs(&comparison(3.0, 3.0)));
        assert!(!costs(&comparison(5.0, 3.0)));
        assert!(costs(&comparison(6.0, 3.0)));
        assert!(!costs(&comparison(1.0, 0.0)));
        assert!(costs(&comparison(2.0, 0.0)));
    }
}
