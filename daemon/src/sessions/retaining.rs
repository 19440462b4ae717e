//! Retention's pass over the sessions' files, at each load sample: the oldest finished
//! files beyond `max_total_size` and each session's `--max-files` and `--max-age` go, and
//! the seal keys of files no incident can reach any more are forgotten.
//! What must stay is read from the catalog under its lock; the pass itself holds no lock
//! while it looks at or deletes files ([`crate::retention`]).

use std::collections::HashSet;
use std::path::PathBuf;

use super::uploading::upload_guard;
use super::Sessions;
use crate::clock::now_ns;
use crate::locks::lock;
use crate::retention::policy::Leave;
use crate::retention::{self, Bounds, SessionBounds};

impl Sessions {
    /// Deletes the oldest finished files beyond `max_total_size` and the `sessions`'
    /// bounds, leaving the files being `writing` now; failures are logged, the next
    /// sample retries.
    pub(super) fn apply_retention(&self, sessions: Vec<SessionBounds>, writing: HashSet<PathBuf>) {
        let bounds = Bounds {
            max_total: self.config.max_total_size.map(|size| size.as_u64()),
            sessions,
        };
        // Upload states and pins matter only when something may be deleted; the pass
        // still marks files gone from the disk missing.
        let leave = if bounds.delete_anything() {
            let catalog = self.catalog();
            match (
                upload_guard(&catalog, self.uploads().map(|u| &**u)),
                catalog.pinned_paths(),
            ) {
                (Ok(uploads), Ok(pinned)) => Leave {
                    writing,
                    pinned,
                    uploads,
                },
                (Err(failure), _) | (_, Err(failure)) => {
                    tracing::error!("retention failed: {failure}");
                    return;
                }
            }
        } else {
            Leave::default()
        };
        let now = now_ns().max(0) as u64;
        let retained = match retention::run(&self.files, &self.catalog, &bounds, &leave, now) {
            Ok(retained) => retained,
            Err(failure) => {
                tracing::error!("retention failed: {failure}");
                return;
            }
        };
        if let Some(encryption) = &self.config.encryption {
            self.files.forget_settled_keys(now, encryption.key_reach);
        }
        let kept = retained.kept_for_upload;
        let mut told = lock(&self.kept_for_upload);
        if kept > 0 && *told == 0 {
            tracing::warn!(
                files = kept,
                "retention keeps {kept} files that are not uploaded yet (keep_until_uploaded); if uploads cannot keep up, the disk fills to min_free_space and recording pauses"
            );
        }
        *told = kept;
    }
}
