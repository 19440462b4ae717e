//! When finishing may use the disk and the CPU: as the background policy decides
//! ([`crate::background`]), and never while a session records unless
//! `finish_while_recording`.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use recd_engine::BehindProbe;
use recd_upload::Holds;

use crate::background::Background;
use crate::locks::lock;

/// A recording's receive threads, watched between the sessions' once-a-second samples:
/// at 30 FullHD frames a second, a second of finishing beside a writer that fell behind
/// costs frames.
struct Watched {
    session: String,
    probe: BehindProbe,
    taken_back: u64,
}

/// What the sessions' sampling tells finishing about the recordings.
pub struct FinishGate {
    /// Sessions writing to disk now (not paused, nor a pre-trigger session between
    /// windows).
    recording: AtomicUsize,
    /// `[recording] finish_while_recording`.
    while_recording: bool,
    /// When background work may run, and at what pace; told at once when a watched
    /// writer falls behind.
    background: Arc<Background>,
    /// The recordings' receive threads.
    watched: Mutex<Vec<Watched>>,
}

impl FinishGate {
    /// A gate that holds finishing while `background` keeps background work off, and
    /// while any session records unless `while_recording`.
    pub fn new(while_recording: bool, background: Arc<Background>) -> Self {
        Self {
            recording: AtomicUsize::new(0),
            while_recording,
            background,
            watched: Mutex::default(),
        }
    }

    /// Watches `session`'s receive threads until the recording is gone: the background
    /// policy hears at once when they take a loan back from a writer that fell behind.
    pub fn watch(&self, session: &str, probe: BehindProbe) {
        let taken_back = probe.loans_taken_back().unwrap_or(0);
        let mut watched = lock(&self.watched);
        watched.push(Watched {
            session: session.to_string(),
            probe,
            taken_back,
        });
    }

    /// Tells the background policy when a watched writer fell behind since the last look.
    fn look_behind(&self) {
        let mut watched = lock(&self.watched);
        watched.retain_mut(|w| match w.probe.loans_taken_back() {
            None => false,
            Some(taken_back) => {
                if taken_back > w.taken_back {
                    w.taken_back = taken_back;
                    self.background.fell_behind(format!(
                        "session {}'s writer fell behind (samples spilled)",
                        w.session
                    ));
                }
                true
            }
        });
    }

    /// The sessions writing to disk now; once none does, the background policy hears it.
    pub fn set_recording(&self, sessions: usize) {
        let before = self.recording.swap(sessions, Ordering::Relaxed);
        if before > 0 && sessions == 0 {
            self.background.nothing_records();
        }
    }

    /// Why finishing must wait now, if it must.
    pub fn hold(&self) -> Option<String> {
        self.look_behind();
        if let Some(why) = self.background.hold() {
            return Some(why);
        }
        let recording = self.recording.load(Ordering::Relaxed);
        (recording > 0 && !self.while_recording)
            .then(|| format!("{recording} session(s) recording (finish_while_recording = false)"))
    }

    /// Why background work that runs while sessions record (cutting incidents) must wait
    /// now, if it must: the background policy alone.
    pub fn background_hold(&self) -> Option<String> {
        self.look_behind();
        self.background.hold()
    }

    /// The rate finishing keeps to now, if any (bytes read per second).
    pub fn pace(&self) -> Option<u64> {
        self.background.pace()
    }

    /// The gate as work that runs while sessions record (cutting incidents) obeys it:
    /// the background policy alone.
    pub fn beside_recordings(&self) -> BesideRecordings<'_> {
        BesideRecordings(self)
    }
}

/// Finishing obeys the whole gate.
impl Holds for FinishGate {
    fn hold(&self) -> Option<String> {
        FinishGate::hold(self)
    }

    fn pace(&self) -> Option<u64> {
        FinishGate::pace(self)
    }
}

/// The gate for work that runs while sessions record: [`FinishGate::background_hold`].
pub struct BesideRecordings<'a>(&'a FinishGate);

impl Holds for BesideRecordings<'_> {
    fn hold(&self) -> Option<String> {
        self.0.background_hold()
    }

    fn pace(&self) -> Option<u64> {
        self.0.pace()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use recd_upload::Pressure;
    use std::time::Duration;

    #[test]
    fn finishing_waits_for_recordings_unless_told_otherwise_and_always_for_pressure() {
        let pressure = Arc::new(Pressure::default());
        let background = Arc::new(Background::new(pressure.clone()));
        let deferred = FinishGate::new(false, background.clone());
        let beside = FinishGate::new(true, background);
        assert_eq!(deferred.hold(), None);
        deferred.set_recording(1);
        beside.set_recording(1);
        assert!(deferred.hold().unwrap().contains("1 session(s) recording"));
        assert_eq!(beside.hold(), None);
        pressure.raise(
            "session a dropped 3 messages".into(),
            Duration::from_secs(60),
        );
        assert_eq!(
            beside.hold().as_deref(),
            Some("session a dropped 3 messages")
        );
        deferred.set_recording(0);
        pressure.raise(
            "session b dropped 1 message".into(),
            Duration::from_secs(60),
        );
        assert_eq!(
            deferred.hold().as_deref(),
            Some("session b dropped 1 message")
        );
    }

    #[test]
    fn once_nothing_records_the_hold_a_recording_caused_is_lifted() {
        let background = Arc::new(Background::new(Arc::new(Pressure::default())));
        let gate = FinishGate::new(true, background.clone());
        gate.set_recording(1);
        background.fell_behind("session a's writer fell behind (samples spilled)".into());
        let held = gate.hold().unwrap();
        assert!(held.starts_with("session a's writer fell behind"), "{held}");
        gate.set_recording(0);
        assert_eq!(gate.hold(), None);
        assert_eq!(
            background.state().mode,
            crate::background::share::Mode::Free
        );
    }
}
