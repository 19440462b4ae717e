//! A background thread that runs until told to stop: finishing files, cutting incidents.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;

/// A named thread given a stop flag, stopped and joined by [`Worker::stop`].
pub struct Worker {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Worker {
    /// Starts `run` on a thread called `name` with the flag that tells it to stop; `what`
    /// names its work for the log when the thread cannot be started.
    pub fn start(
        name: &str,
        what: &str,
        run: impl FnOnce(Arc<AtomicBool>) + Send + 'static,
    ) -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let thread = match std::thread::Builder::new()
            .name(name.into())
            .spawn(move || run(flag))
        {
            Ok(thread) => Some(thread),
            Err(error) => {
                tracing::error!("cannot start {what}: {error}");
                None
            }
        };
        Self { stop, thread }
    }

    /// Tells the thread to stop and waits until it has.
    pub fn stop(mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}
