//! A recording's file from its creation to its close: known to the catalog before its
//! first byte is written (the catalog's commits are durable, so a power cut cannot hide
//! it), and once closed recorded with what it holds, queued for finishing and for upload,
//! and entered in its session's chain.

use std::path::Path;

use recd_catalog::{CatalogError, File, SessionId};
use recd_chain::Kind;
use recd_control::{FileEntry, FileState, FinishMode};
use recd_engine::ClosedFile;

use super::FileLife;
use crate::clock::now_ns;
use crate::uploads::SessionFiles;

/// How far before its creation an open file is taken to reach, for incidents' pins: its
/// first message may have waited in the handoff a little before the file was made.
const OPEN_FILE_REACH_NS: u64 = 1_000_000_000;

/// A file a session closed.
pub struct Closed<'a> {
    /// The session.
    pub session: SessionId,
    /// The file, as its writer ended it.
    pub file: &'a ClosedFile,
    /// What finishing does to the session's files.
    pub finish: FinishMode,
    /// Where its upload goes, and its place among the session's files, when the session
    /// uploads.
    pub upload: Option<(&'a SessionFiles, usize)>,
}

impl FileLife {
    /// The session `session` creates a file at `path`.
    pub fn created(&self, session: SessionId, path: &Path) {
        let catalog = self.catalog();
        let recorded = catalog.upsert_file(&File {
            session,
            path: path.to_path_buf(),
            bytes: 0,
            messages: 0,
            state: FileState::Recording,
        });
        let start = (now_ns().max(0) as u64).saturating_sub(OPEN_FILE_REACH_NS);
        if let Err(error) = recorded.and_then(|()| catalog.set_file_times(path, Some(start), None))
        {
            tracing::error!(file = %path.display(), "cannot record the file in the catalog: {error}");
        }
    }

    /// The engine removed the file at `path` that it had made but no message reached (the
    /// last file of a split, at a stop), or was about to make: it never was, and its seal
    /// key goes with it.
    pub fn removed(&self, path: &Path) {
        if let Err(error) = self.catalog().forget_file(path) {
            tracing::error!(file = %path.display(), "cannot forget the removed file: {error}");
        }
        self.forget_key(path);
    }

    /// A session closed a file: the catalog records what it holds (its health verdict and
    /// log-time span too), it waits to be finished and uploaded as its session asks, and
    /// it enters the session's chain as recorded, with the digest its writer took of the
    /// bytes it stored, and its directory's bag when it is a ROS 2 file. Finishing waits
    /// for the chain's entry, so that the recorded bytes are chained before they are
    /// replaced.
    pub fn closed(&self, closed: Closed<'_>) {
        let Closed {
            session,
            file,
            finish,
            upload,
        } = closed;
        if let Some(signing) = &self.signing {
            signing.expect(&file.path);
        }
        self.record_closed(session, file, finish);
        if let (Some(uploads), Some((files, index))) = (&self.uploads, upload) {
            if file.indexed {
                let queued = uploads.queue(&self.catalog, files, &file.path, index, file.messages);
                if let Err(error) = queued {
                    tracing::error!(file = %file.path.display(), "cannot queue the file for upload: {error}");
                }
            }
        }
        if let Some(signing) = &self.signing {
            // A recording's directory is its session's, where the chain is.
            let directory = file.path.parent().unwrap_or(Path::new("/"));
            signing.enter_recorded(directory, &file.path, file.stored);
        }
        self.enter_bag(&file.path);
    }

    /// Records the closed `file` of `session` in the catalog and, once closed with its
    /// summary, puts it on the finishing queue (before the uploader can see it: the
    /// finished file is the one uploaded).
    fn record_closed(&self, session: SessionId, file: &ClosedFile, finish: FinishMode) {
        let catalog = self.catalog();
        let mut result = catalog.upsert_file(&File {
            session,
            path: file.path.clone(),
            bytes: file.bytes,
            messages: file.messages,
            state: closed_state(file.indexed),
        });
        if let (Ok(()), Some(verdict)) = (&result, file.health) {
            result = catalog.set_file_health(&file.path, verdict.name());
        }
        if let (Ok(()), Some((start, end))) = (&result, file.time_range) {
            result = catalog.set_file_times(&file.path, Some(start), Some(end));
        }
        if result.is_ok() && file.indexed && finish != FinishMode::None {
            result = catalog.set_finish(&file.path, Some(finish), now_ns());
        }
        if let Err(error) = result {
            tracing::error!(file = %file.path.display(), "cannot record the closed file in the catalog: {error}");
        }
    }

    /// Session `session` stopped, its files as its stop report has them (what its
    /// writers ended them with; those gone since as deleted or missing): the catalog
    /// keeps them so, a file indexed in place since keeping what it holds now.
    /// A missing one takes its seal key along and leaves its directory's bag.
    pub fn session_stopped(
        &self,
        session: SessionId,
        files: &[FileEntry],
    ) -> Result<(), CatalogError> {
        let catalog = self.catalog();
        for file in files {
            catalog.upsert_file(&File {
                session,
                path: file.path.clone(),
                bytes: file.bytes,
                messages: file.messages,
                state: file.state,
            })?;
        }
        drop(catalog);
        for file in files.iter().filter(|f| f.state == FileState::Missing) {
            self.forget_key(&file.path);
            self.leave_bag(&file.path);
        }
        Ok(())
    }

    /// A session rewrote a file it keeps beside its recordings (rosbag2's
    /// `metadata.yaml` in `directory`): it enters the chain as it is now.
    pub fn rewritten(&self, directory: &Path, path: &Path) {
        if let Some(signing) = &self.signing {
            signing.enter(directory, path, Kind::Metadata);
        }
    }
}

/// A closed file's state: complete with its summary, or needing `rec reindex`.
pub fn closed_state(indexed: bool) -> FileState {
    if indexed {
        FileState::Complete
    } else {
        FileState::NeedsReindex
    }
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use recd_catalog::Catalog;
    use recd_storage::SealKeys;

    use super::*;

    #[test]
    fn a_file_removed_before_any_message_reached_it_takes_its_seal_key_along() {
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path().join("data");
        let catalog = Catalog::open(dir.path(), &data).unwrap();
        let session = catalog.begin_session("drive", &data, "{}", 0).unwrap();
        let keys = SealKeys::default();
        let catalog = Arc::new(Mutex::new(catalog));
        let files = FileLife::new(catalog.clone(), None, Some(keys.clone()), None, false);
        let path = data.join("drive_0001.mcap.age");
        files.created(session, &path);
        let fleet = age::x25519::Identity::generate().to_public().to_string();
        let recipients = recd_seal::Recipients::parse(&[fleet]).unwrap();
        let writer = recd_seal::SealedWriter::new(Vec::new(), &recipients).unwrap();
        keys.insert(&path, writer.key().clone());

        files.removed(&path);
        assert!(!keys.holds(&path));
        assert!(catalog.lock().unwrap().file(&path).unwrap().is_none());
    }
}
