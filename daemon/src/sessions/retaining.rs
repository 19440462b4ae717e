//! Retention's pass over the sessions' files, at each load sample: the oldest finished
//! files beyond `max_total_size` and each session's `--max-files` and `--max-age` go.

use std::collections::{BTreeMap, HashSet};
use std::path::PathBuf;

use super::uploading::upload_guard;
use super::{Running, Sessions};
use crate::clock::now_ns;
use crate::retention;

impl Sessions {
    /// Deletes the oldest finished files beyond `max_total_size` and each session's
    /// `--max-files`; failures are logged, the next sample retries.
    /// `writing` are the files the sessions are writing now.
    pub(super) fn apply_retention(
        &self,
        running: &BTreeMap<String, Running>,
        writing: &HashSet<PathBuf>,
    ) {
        let catalog = self.catalog();
        let max_total = self.config.max_total_size.map(|size| size.as_u64());
        // Upload states and pins matter only when something may be deleted.
        let deletes = max_total.is_some()
            || running
                .values()
                .any(|s| s.max_files.is_some() || s.max_age.is_some());
        if !deletes {
            // Nothing to delete; the pass still marks files gone from the disk missing.
            if let Err(failure) = retention::enforce_total(&catalog, None, &Default::default()) {
                tracing::error!("retention failed: {failure}");
            }
            return;
        }
        let uploads = self.uploads.as_deref();
        let leave = match (upload_guard(&catalog, uploads), catalog.pinned_paths()) {
            (Ok(uploads), Ok(pinned)) => retention::Leave {
                writing: writing.clone(),
                pinned,
                uploads,
            },
            (Err(failure), _) | (_, Err(failure)) => {
                tracing::error!("retention failed: {failure}");
                return;
            }
        };
        let mut kept = 0;
        let mut tally =
            |result: Result<retention::Retained, recd_catalog::CatalogError>| match result {
                Ok(retained) => {
                    kept += retained.kept_for_upload;
                    self.sign_deleted(&retained.deleted);
                    self.forget_keys(&retained.deleted);
                }
                Err(failure) => tracing::error!("retention failed: {failure}"),
            };
        tally(retention::enforce_total(&catalog, max_total, &leave));
        let now = now_ns().max(0) as u64;
        for session in running.values() {
            if let Some(max_files) = session.max_files {
                tally(retention::enforce_ring(
                    &catalog, session.id, max_files, &leave,
                ));
            }
            if let Some(max_age) = session.max_age {
                tally(retention::enforce_age(
                    &catalog, session.id, max_age, now, &leave,
                ));
            }
        }
        let mut told = self.kept_for_upload.lock().expect("retention lock");
        if kept > 0 && *told == 0 {
            tracing::warn!(
                files = kept,
                "retention keeps {kept} files that are not uploaded yet (keep_until_uploaded); if uploads cannot keep up, the disk fills to min_free_space and recording pauses"
            );
        }
        *told = kept;
    }

    /// Forgets the keys of sealed files that are gone.
    fn forget_keys(&self, deleted: &[PathBuf]) {
        if let Some(sealing) = &self.sealing {
            deleted.iter().for_each(|path| sealing.keys.forget(path));
        }
    }
}
