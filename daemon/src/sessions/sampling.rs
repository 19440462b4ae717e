//! The periodic sample, on a snapshot of the registry: each session's rates and what its
//! log must hear, the background policy told what recordings lost, retention applied,
//! and sessions whose `--duration` passed stopped. No lock of the registry is held while
//! it runs.

use std::collections::HashSet;
use std::time::Instant;

use super::telling::{losses_since_last, tell_changes};
use super::Sessions;
use crate::background::share::Losses;

/// What the periodic sample found, for systemd's status line.
#[derive(Debug, Default, Clone, Copy)]
pub struct Load {
    /// Sessions recording.
    pub sessions: usize,
    /// Bytes per second over all sessions.
    pub bytes_per_s: f64,
    /// Messages dropped or lost over all sessions so far.
    pub dropped: u64,
    /// Every session's receive and writer threads are running.
    pub healthy: bool,
}

impl Sessions {
    /// Updates rates, tells the log of pauses and write errors, applies retention;
    /// returns the load for systemd's status.
    pub fn sample(&self) -> Load {
        let sessions = self.registry.snapshot();
        let mut load = Load {
            sessions: sessions.len(),
            healthy: true,
            ..Load::default()
        };
        let mut writing = HashSet::new();
        let mut writing_sessions = 0;
        let mut losses = Losses::default();
        let mut why = None;
        for session in &sessions {
            let name = &session.name;
            if !session.recording.threads_alive() {
                tracing::error!(session = %name, "a recording thread ended unexpectedly");
                load.healthy = false;
            }
            let status = session.recording.status();
            let mut sampled = session.sampled();
            sampled.rates.update(&status);
            load.bytes_per_s += sampled.rates.bytes_per_s;
            load.dropped += (status.topics.iter())
                .map(|t| t.counts.dropped + t.counts.lost)
                .sum::<u64>();
            tell_changes(session, &mut sampled, &status);
            let (lost, said) = losses_since_last(name, &mut sampled, &status);
            drop(sampled);
            losses.add(lost);
            why = why.or(said);
            // A paused session, or a pre-trigger one between windows, writes nothing.
            let buffering = status.buffer.is_some() && status.current_files.is_empty();
            if !status.paused && !buffering {
                writing_sessions += 1;
            }
            writing.extend(status.current_files);
        }
        self.finish_gate.set_recording(writing_sessions);
        self.sample_background(losses, why);
        let bounds = (sessions.iter()).map(|session| session.bounds()).collect();
        drop(sessions);
        self.apply_retention(bounds, writing);
        let now = Instant::now();
        for session in self.registry.remove_where(|session| session.expired(now)) {
            tracing::info!(session = %session.name, "its --duration has passed: stopping");
            self.finish(session);
        }
        load
    }
}
