//! The background work's backlog as the sessions see it: what `rec status`, the metrics
//! and the page show, whether anything waits (for the background policy), and a warning
//! once a file has waited longer than `[upload] max_delay` to be finished or uploaded.

use std::time::Duration;

use recd_catalog::{Catalog, CatalogError, OldestWaiting, SessionId};
use recd_control::Backlog;

use super::Sessions;
use crate::clock::now_ns;
use crate::config::DEFAULT_MAX_DELAY;

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
    /// longer than `bound`; says so once more when the backlog is back under it.
    pub(super) fn check(&mut self, catalog: &Catalog, bound: Duration) {
        match self.look(catalog, bound) {
            Ok(()) => self.failing = false,
            Err(failure) if !self.failing => {
                tracing::error!("cannot read the backlog from the catalog: {failure}");
                self.failing = true;
            }
            Err(_) => {}
        }
    }

    fn look(&mut self, catalog: &Catalog, bound: Duration) -> Result<(), CatalogError> {
        let now = now_ns();
        let finishing = catalog.oldest_waiting_to_finish()?;
        tell(&mut self.finish, "finished", finishing, bound, now);
        let uploading = catalog.oldest_waiting_to_upload()?;
        tell(&mut self.upload, "uploaded", uploading, bound, now);
        Ok(())
    }
}

fn tell(told: &mut bool, to_be: &str, oldest: Option<OldestWaiting>, bound: Duration, now: i64) {
    let bound_ns = bound.as_nanos() as i64;
    match oldest.filter(|oldest| now - oldest.since_ns > bound_ns) {
        Some(oldest) if !*told => {
            let waited = Duration::from_secs(((now - oldest.since_ns) / 1_000_000_000) as u64);
            tracing::warn!(
                file = %oldest.path.display(),
                session = %oldest.session,
                "a file has waited {} to be {to_be}, more than max_delay ({}): background work falls behind the recording (rec status shows the backlog)",
                humantime::format_duration(waited),
                humantime::format_duration(bound)
            );
            *told = true;
        }
        None if *told => {
            tracing::info!("no file waits longer than max_delay to be {to_be} any more");
            *told = false;
        }
        _ => {}
    }
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

    /// Whether files wait to be finished or uploaded.
    pub(super) fn background_work_waits(&self) -> bool {
        self.backlog(None)
            .is_some_and(|b| b.finish_waiting > 0 || b.upload_waiting > 0)
    }

    /// `[upload] max_delay`, or its default when nothing uploads.
    pub(super) fn max_delay(&self) -> Duration {
        (self.config.upload.as_ref()).map_or(DEFAULT_MAX_DELAY, |upload| upload.max_delay)
    }
}
