//! When finishing may use the disk and the CPU: never while a recording needs them.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use recd_engine::BehindProbe;
use recd_upload::Pressure;

/// How long finishing keeps off once a recording's writer fell behind.
const YIELD: Duration = Duration::from_secs(5);

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
    /// Raised while a session drops messages or its writer falls behind.
    pressure: Arc<Pressure>,
    /// The recordings' receive threads, and until when finishing keeps off because one
    /// of them took a loan back from its writer.
    watched: Mutex<Watch>,
}

/// The watched recordings, and until when finishing keeps off, and why.
#[derive(Default)]
struct Watch {
    recordings: Vec<Watched>,
    held: Option<(Instant, String)>,
}

impl FinishGate {
    /// A gate that holds finishing while `pressure` is raised, and while any session
    /// records unless `while_recording`.
    pub fn new(while_recording: bool, pressure: Arc<Pressure>) -> Self {
        Self {
            recording: AtomicUsize::new(0),
            while_recording,
            pressure,
            watched: Mutex::default(),
        }
    }

    /// Watches `session`'s receive threads until the recording is gone: finishing
    /// keeps off as soon as they take a loan back from a writer that fell behind.
    pub fn watch(&self, session: &str, probe: BehindProbe) {
        let taken_back = probe.loans_taken_back().unwrap_or(0);
        let mut watched = self.watched.lock().expect("finish gate lock");
        watched.recordings.push(Watched {
            session: session.to_string(),
            probe,
            taken_back,
        });
    }

    /// Why finishing must wait because a watched writer fell behind lately.
    fn behind(&self) -> Option<String> {
        let mut guard = self.watched.lock().expect("finish gate lock");
        let Watch { recordings, held } = &mut *guard;
        let now = Instant::now();
        recordings.retain_mut(|w| match w.probe.loans_taken_back() {
            None => false,
            Some(taken_back) => {
                if taken_back > w.taken_back {
                    let why = format!(
                        "session {}'s writer fell behind (samples spilled)",
                        w.session
                    );
                    *held = Some((now + YIELD, why));
                    w.taken_back = taken_back;
                }
                true
            }
        });
        match held {
            Some((until, why)) if now < *until => Some(why.clone()),
            _ => {
                *held = None;
                None
            }
        }
    }

    /// The sessions writing to disk now.
    pub fn set_recording(&self, sessions: usize) {
        self.recording.store(sessions, Ordering::Relaxed);
    }

    /// Why finishing must wait now, if it must.
    pub fn hold(&self) -> Option<String> {
        if let Some(why) = self.behind().or_else(|| self.pressure.current()) {
            return Some(why);
        }
        let recording = self.recording.load(Ordering::Relaxed);
        (recording > 0 && !self.while_recording)
            .then(|| format!("{recording} session(s) recording (finish_while_recording = false)"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn finishing_waits_for_recordings_unless_told_otherwise_and_always_for_pressure() {
        let pressure = Arc::new(Pressure::default());
        let deferred = FinishGate::new(false, pressure.clone());
        let beside = FinishGate::new(true, pressure.clone());
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
        assert_eq!(
            deferred.hold().as_deref(),
            Some("session a dropped 3 messages")
        );
    }
}
