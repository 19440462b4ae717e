//! Background work that reads recordings' bytes — finishing files, cutting incidents,
//! uploading — gives way to the recordings in one manner: it waits while they hold it
//! off (the uploader's `Pressure`, or the finishing gate), then keeps its reads to the pace
//! they set. This is the one home of "wait while held, pace the reads"; the uploader asks
//! it on its async task, finishing and the cutter block on [`Yielding::wait_turn`].

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crate::rate::Paced;

/// How often work held off looks again whether it may go on.
pub const HOLD_LOOK: Duration = Duration::from_millis(250);

/// What background work obeys: a reason to hold off, and a pace.
pub trait Holds {
    /// Why it must hold off now, if it must.
    fn hold(&self) -> Option<String>;
    /// The rate it keeps to now, if any (bytes read per second).
    fn pace(&self) -> Option<u64>;
}

/// What background work does before it reads on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Turn {
    /// Hold off, for this reason; look again after [`HOLD_LOOK`].
    Hold(String),
    /// Wait this long first: the pace.
    Wait(Duration),
    /// Read on.
    Go,
}

/// One worker's giving way: a hold first, then the pace of what it read.
#[derive(Debug, Default)]
pub struct Yielding {
    paced: Paced,
}

impl Yielding {
    /// What to do before reading on, having read `bytes` since the last turn, when the
    /// recordings say `hold` and `pace`. A pace of `None` starts the next pace afresh, so
    /// a worker that looks for a hold apart from pacing asks [`Holds::hold`] alone.
    pub fn turn(&mut self, hold: Option<String>, pace: Option<u64>, bytes: u64) -> Turn {
        if let Some(why) = hold {
            return Turn::Hold(why);
        }
        match self.paced.delay_for(pace, bytes) {
            Some(delay) if !delay.is_zero() => Turn::Wait(delay),
            _ => Turn::Go,
        }
    }

    /// How long to wait, having read `bytes` more, for the pace `holds` sets now; a hold
    /// is not looked at (the worker looked for one before it read).
    pub fn pace_after(&mut self, bytes: u64, holds: &dyn Holds) -> Option<Duration> {
        match self.turn(None, holds.pace(), bytes) {
            Turn::Wait(delay) => Some(delay),
            _ => None,
        }
    }

    /// Blocks until reading may go on after `bytes` more, as `holds` says: while held off
    /// (`told` hears the reason once as the hold starts, and `None` once it ends), then
    /// for the pace. Stops waiting once `stop` is raised. Returns how long it waited.
    pub fn wait_turn(
        &mut self,
        bytes: u64,
        holds: &dyn Holds,
        stop: &AtomicBool,
        told: &mut dyn FnMut(Option<&str>),
    ) -> Duration {
        let started = Instant::now();
        let mut held = false;
        loop {
            if stop.load(Ordering::Relaxed) {
                break;
            }
            // A hold accounts nothing: the bytes are paced once, when it ends.
            match self.turn(holds.hold(), holds.pace(), bytes) {
                Turn::Hold(why) => {
                    if !held {
                        told(Some(&why));
                        held = true;
                    }
                    std::thread::sleep(HOLD_LOOK);
                }
                Turn::Wait(delay) => {
                    std::thread::sleep(delay);
                    break;
                }
                Turn::Go => break,
            }
        }
        if held {
            told(None);
        }
        started.elapsed()
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use super::*;

    struct Scripted {
        holds: Mutex<Vec<Option<String>>>,
        pace: Option<u64>,
    }

    impl Holds for Scripted {
        fn hold(&self) -> Option<String> {
            let mut holds = self.holds.lock().unwrap();
            if holds.len() > 1 {
                holds.remove(0)
            } else {
                holds[0].clone()
            }
        }

        fn pace(&self) -> Option<u64> {
            self.pace
        }
    }

    #[test]
    fn a_hold_comes_before_the_pace_and_no_pace_reads_on() {
        let mut yielding = Yielding::default();
        assert_eq!(
            yielding.turn(Some("a session records".into()), Some(1 << 20), 1 << 20),
            Turn::Hold("a session records".into())
        );
        assert_eq!(yielding.turn(None, None, 1 << 20), Turn::Go);
        // The first read of a pace costs nothing; the next waits for it at the pace.
        assert_eq!(yielding.turn(None, Some(1 << 20), 1 << 19), Turn::Go);
        let Turn::Wait(delay) = yielding.turn(None, Some(1 << 20), 1 << 19) else {
            panic!("no wait for the pace");
        };
        // Half a MiB at a MiB a second, less the time since the first read.
        assert!(
            delay <= Duration::from_millis(500) && delay > Duration::from_millis(400),
            "{delay:?}"
        );
    }

    #[test]
    fn looking_for_a_hold_between_paced_reads_keeps_the_pace() {
        let holds = Scripted {
            holds: Mutex::new(vec![None]),
            pace: Some(1 << 20),
        };
        let mut yielding = Yielding::default();
        // As the uploader does per part: look for a hold, read, then keep to the pace.
        assert_eq!(holds.hold(), None);
        assert_eq!(yielding.pace_after(1 << 19, &holds), None);
        assert_eq!(holds.hold(), None);
        let delay = yielding.pace_after(1 << 19, &holds);
        assert!(
            delay.is_some_and(|delay| delay > Duration::from_millis(400)),
            "the second half MiB waits for the first at a MiB a second: {delay:?}"
        );
    }

    #[test]
    fn waiting_tells_a_hold_once_and_its_end_and_stops_when_told() {
        let holds = Scripted {
            holds: Mutex::new(vec![Some("busy".into()), Some("busy".into()), None]),
            pace: None,
        };
        let mut heard = Vec::new();
        let stop = AtomicBool::new(false);
        let waited = Yielding::default().wait_turn(1, &holds, &stop, &mut |told| {
            heard.push(told.map(str::to_string))
        });
        assert_eq!(heard, [Some("busy".to_string()), None]);
        assert!(waited >= 2 * HOLD_LOOK);

        let forever = Scripted {
            holds: Mutex::new(vec![Some("busy".into())]),
            pace: None,
        };
        stop.store(true, Ordering::Relaxed);
        let waited = Yielding::default().wait_turn(1, &forever, &stop, &mut |_| {});
        assert!(waited < HOLD_LOOK, "a stop ends the wait");
    }
}
