//! When finishing may use the disk and the CPU: never while a recording needs them.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use recd_upload::Pressure;

/// What the sessions' sampling tells finishing about the recordings.
pub struct FinishGate {
    /// Sessions writing to disk now (not paused, nor a pre-trigger session between
    /// windows).
    recording: AtomicUsize,
    /// `[recording] finish_while_recording`.
    while_recording: bool,
    /// Raised while a session drops messages or its writer falls behind.
    pressure: Arc<Pressure>,
}

impl FinishGate {
    /// A gate that holds finishing while `pressure` is raised, and while any session
    /// records unless `while_recording`.
    pub fn new(while_recording: bool, pressure: Arc<Pressure>) -> Self {
        Self {
            recording: AtomicUsize::new(0),
            while_recording,
            pressure,
        }
    }

    /// The sessions writing to disk now.
    pub fn set_recording(&self, sessions: usize) {
        self.recording.store(sessions, Ordering::Relaxed);
    }

    /// Why finishing must wait now, if it must.
    pub fn hold(&self) -> Option<String> {
        if let Some(why) = self.pressure.current() {
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
