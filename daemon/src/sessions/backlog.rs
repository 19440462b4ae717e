//! The background work's backlog as the sessions see it: what `rec status`, the metrics
//! and the page show, whether anything waits (for the background policy), and a warning
//! once a file has waited longer than `[upload] max_delay` to be finished or uploaded.

use std::time::Duration;

use recd_catalog::{Catalog, CatalogError, OldestWaiting, SessionId};
use recd_control::Backlog;

use super::Sessions;
use crate::background::share::Losses;
use crate::clock::now_ns;
use crate::config::DEFAULT_MAX_DELAY;
use crate::locks::lock;

/// Which delays the log was told of (once each time a file passes the bound).
#[derive(Debug, Default)]
pub(super) struct DelayWatch {
    finish: bool,
    upload: bool,
    /// The catalog could not be read at the last look (logged once).
    failing: bool,
}

impl DelayWatch {
    /// Warns when the oldest file waiting to be finished, or to be uploaded, has waited
    /// longer than `bound` (as `backlog`, just read from `catalog`, says); says so once
    /// more when the backlog is back under it.
    pub(super) fn check(
        &mut self,
        catalog: &Catalog,
        backlog: &Result<Backlog, CatalogError>,
        bound: Duration,
    ) {
        let late = |age: Option<f64>| age.is_some_and(|age| age > bound.as_secs_f64());
        let told = match backlog {
            Ok(backlog) => tell(
                &mut self.finish,
                "finished",
                late(backlog.finish_oldest_s),
                bound,
                || catalog.oldest_waiting_to_finish(),
            )
            .and_then(|()| {
                tell(
                    &mut self.upload,
                    "uploaded",
                    late(backlog.upload_oldest_s),
                    bound,
                    || catalog.oldest_waiting_to_upload(),
                )
            })
            .map_err(|failure| failure.to_string()),
            Err(failure) => Err(failure.to_string()),
        };
        match told {
            Ok(()) => self.failing = false,
            Err(failure) if !self.failing => {
                tracing::error!("cannot read the backlog from the catalog: {failure}");
                self.failing = true;
            }
            Err(_) => {}
        }
    }
}

/// Warns of the oldest file waiting to be `to_be` done (`oldest` finds it) when it is
/// `late` and the log was not `told` yet; says when none is late any more.
fn tell(
    told: &mut bool,
    to_be: &str,
    late: bool,
    bound: Duration,
    oldest: impl FnOnce() -> Result<Option<OldestWaiting>, CatalogError>,
) -> Result<(), CatalogError> {
    match (late, *told) {
        (true, false) => {
            if let Some(oldest) = oldest()? {
                let waited_s = (now_ns() - oldest.since_ns).max(0) / 1_000_000_000;
                tracing::warn!(
                    file = %oldest.path.display(),
                    session = %oldest.session,
                    "a file has waited {} to be {to_be}, more than max_delay ({}): background work falls behind the recording (rec status shows the backlog)",
                    humantime::format_duration(Duration::from_secs(waited_s as u64)),
                    humantime::format_duration(bound)
                );
                *told = true;
            }
        }
        (false, true) => {
            tracing::info!("no file waits longer than max_delay to be {to_be} any more");
            *told = false;
        }
        _ => {}
    }
    Ok(())
}

impl Sessions {
    /// The backlog of `session`, or of every session, with the background policy's
    /// state; `None` when the catalog cannot say.
    pub fn backlog(&self, session: Option<SessionId>) -> Option<Backlog> {
        let mut backlog = self.catalog().backlog(session, now_ns()).ok()?;
        let state = self.background.state();
        backlog.background_mode = state.mode.to_string();
        backlog.background = state.line;
        backlog.background_on = state.on;
        backlog.max_delay_s = Some(self.max_delay().as_secs_f64());
        Some(backlog)
    }

    /// Tells the background policy what recordings lost since the last sample and
    /// whether files wait, and the log when a file waits too long: one read of every
    /// session's backlog for both.
    pub(super) fn sample_background(&self, losses: Losses, why: Option<String>) {
        let catalog = self.catalog();
        let backlog = catalog.backlog(None, now_ns());
        let waits = (backlog.as_ref()).is_ok_and(|b| b.finish_waiting > 0 || b.upload_waiting > 0);
        self.background.sample(losses, why, waits);
        let mut delays = lock(&self.delays);
        delays.check(&catalog, &backlog, self.max_delay());
    }

    /// `[upload] max_delay`, or its default when nothing uploads.
    pub(super) fn max_delay(&self) -> Duration {
        (self.config.upload.as_ref()).map_or(DEFAULT_MAX_DELAY, |upload| upload.max_delay)
    }
}
