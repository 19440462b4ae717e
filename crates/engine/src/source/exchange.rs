//! The two channels between a source's discovery thread and its real-time receive
//! thread: what discovery found (ready ports, readers) one way, what the receive thread
//! finished with (to be dropped, or acted on) the other.
//!
//! Both channels are unbounded, so neither side ever waits on the other: the receive
//! thread only takes what is waiting (`try_recv`) and gives back without blocking. No
//! lock is shared, so a discovery thread preempted anywhere cannot hold up the receive
//! thread. Each side may wake the other after sending ([`Wake`]).

use std::sync::mpsc::{self, Receiver, Sender, TryRecvError};
use std::thread::JoinHandle;

/// How one side tells the other that something was sent.
pub(crate) trait Wake {
    /// Wakes the side that receives.
    fn wake(&self);
}

/// Nobody to wake: the receiving side looks on its own schedule.
pub(crate) struct OnItsOwn;

impl Wake for OnItsOwn {
    fn wake(&self) {}
}

/// The receive thread's end: takes what discovery `F`ound, gives back what it
/// `B`rought to an end; `W` wakes the discovery thread.
pub(crate) struct FoundEnd<F, B, W: Wake> {
    found: Receiver<F>,
    /// `None` once closed.
    finished: Option<Sender<B>>,
    waker: W,
}

/// The discovery thread's end; `W` wakes the receive thread.
pub(crate) struct FinishedEnd<F, B, W> {
    found: Sender<F>,
    finished: Receiver<B>,
    waker: W,
}

/// The exchange's two ends, the receive thread's first; `receive_waker` wakes the
/// receive thread, `discovery_waker` the discovery thread.
pub(crate) fn channels<F, B, R: Wake, D: Wake>(
    receive_waker: R,
    discovery_waker: D,
) -> (FoundEnd<F, B, D>, FinishedEnd<F, B, R>) {
    let (found_tx, found_rx) = mpsc::channel();
    let (finished_tx, finished_rx) = mpsc::channel();
    (
        FoundEnd {
            found: found_rx,
            finished: Some(finished_tx),
            waker: discovery_waker,
        },
        FinishedEnd {
            found: found_tx,
            finished: finished_rx,
            waker: receive_waker,
        },
    )
}

impl<F, B, W: Wake> FoundEnd<F, B, W> {
    /// The next thing discovery found, if one is waiting; never blocks.
    pub fn take(&self) -> Option<F> {
        self.found.try_recv().ok()
    }

    /// Gives something back to the discovery thread and wakes it; never blocks.
    pub fn give_back(&self, finished: B) {
        if let Some(sender) = &self.finished {
            // The discovery thread ends only after this end closes, so the send finds it.
            let _ = sender.send(finished);
            self.waker.wake();
        }
    }

    /// Closes the way back: the discovery thread, once woken, sees the receive thread gone.
    pub fn close(&mut self) {
        self.finished = None;
        self.waker.wake();
    }
}

impl<F, B, W: Wake> FinishedEnd<F, B, W> {
    /// Everything given back so far, and whether the receive thread is still there
    /// (false: discovery ends); never blocks.
    pub fn take_finished(&self) -> (Vec<B>, bool) {
        let mut taken = Vec::new();
        loop {
            match self.finished.try_recv() {
                Ok(finished) => taken.push(finished),
                Err(TryRecvError::Empty) => return (taken, true),
                Err(TryRecvError::Disconnected) => return (taken, false),
            }
        }
    }

    /// Hands something found to the receive thread and wakes it; false when it is gone.
    pub fn hand(&self, found: F) -> bool {
        let handed = self.found.send(found).is_ok();
        if handed {
            self.waker.wake();
        }
        handed
    }
}

/// The receive thread's end together with the discovery thread it talks to.
pub(crate) struct DiscoveryLink<F, B, W: Wake> {
    end: FoundEnd<F, B, W>,
    thread: Option<JoinHandle<()>>,
}

/// Connects a receive thread (woken by `receive_waker`) to the discovery thread (woken by
/// `discovery_waker`) that `spawn` starts with the other end.
pub(crate) fn connect<F, B, R: Wake, D: Wake>(
    receive_waker: R,
    discovery_waker: D,
    spawn: impl FnOnce(FinishedEnd<F, B, R>) -> std::io::Result<JoinHandle<()>>,
) -> std::io::Result<DiscoveryLink<F, B, D>> {
    let (end, other) = channels(receive_waker, discovery_waker);
    let thread = spawn(other)?;
    Ok(DiscoveryLink {
        end,
        thread: Some(thread),
    })
}

impl<F, B, W: Wake> DiscoveryLink<F, B, W> {
    /// The next thing discovery found, if one is waiting; never blocks.
    pub fn take(&self) -> Option<F> {
        self.end.take()
    }

    /// Gives something back to the discovery thread and wakes it; never blocks.
    pub fn give_back(&self, finished: B) {
        self.end.give_back(finished);
    }

    /// Wakes the discovery thread if it sleeps on its own (parked) rather than on `W`.
    pub fn unpark(&self) {
        if let Some(thread) = &self.thread {
            thread.thread().unpark();
        }
    }

    /// Closes the exchange and waits for the discovery thread to drop what it holds.
    pub fn close(&mut self) {
        self.end.close();
        self.unpark();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

impl<F, B, W: Wake> Drop for DiscoveryLink<F, B, W> {
    fn drop(&mut self) {
        self.close();
    }
}
