//! The sessions' side of uploads: `rec upload` queueing files by hand, `rec upload
//! --status`, and what retention must respect.

use recd_catalog::Catalog;
use recd_control::{ErrorKind, ErrorReply, UploadRequest, UploadStatus, UploadsQueued};

use super::replies::{catalog_failure, catalog_file, error, unknown_session};
use super::Sessions;
use crate::retention::policy::UploadGuard;
use crate::uploads::{SessionFiles, Uploads};

impl Sessions {
    /// Queues a session's finished files, or one file, for upload (`rec upload`).
    pub fn queue_upload(&self, request: &UploadRequest) -> Result<UploadsQueued, ErrorReply> {
        let uploads = self.uploads().ok_or_else(|| {
            error(
                ErrorKind::Failed,
                "uploads are off: recd's configuration has no [upload] section",
            )
        })?;
        let catalog = self.catalog();
        let (session, files) = match (&request.session, &request.file) {
            (Some(name), None) => {
                let session = catalog
                    .session_by_name(name)
                    .map_err(catalog_failure)?
                    .ok_or_else(|| unknown_session(name))?;
                let files = catalog.files(session.id).map_err(catalog_failure)?;
                (session, files)
            }
            (None, Some(path)) => {
                let path = std::path::absolute(path).unwrap_or_else(|_| path.clone());
                let file = catalog_file(&catalog, &path)?;
                let session = catalog
                    .session(file.session)
                    .map_err(catalog_failure)?
                    .ok_or_else(|| unknown_session(&path.display().to_string()))?;
                if !uploadable(&file) {
                    return Err(error(
                        ErrorKind::InvalidArgument,
                        format!(
                            "{} is {}: only finished files are uploaded (rec reindex finishes one a crash left open)",
                            path.display(),
                            file.state
                        ),
                    ));
                }
                (session, vec![file])
            }
            _ => {
                return Err(error(
                    ErrorKind::InvalidArgument,
                    "name a session or a file to upload",
                ))
            }
        };
        let all = catalog.files(session.id).map_err(catalog_failure)?;
        // Each file is looked at before the catalog is locked again to queue it.
        drop(catalog);
        let session_files = SessionFiles {
            session: session.name.clone(),
            started_ns: session.started_ns,
            priority: false,
        };
        let mut reply = UploadsQueued {
            queued: Vec::new(),
            unchanged: Vec::new(),
        };
        for file in files.iter().filter(|f| uploadable(f)) {
            let index = all.iter().position(|f| f.path == file.path).unwrap_or(0);
            let queued = uploads
                .queue(
                    &self.catalog,
                    &session_files,
                    &file.path,
                    index,
                    file.messages,
                )
                .map_err(catalog_failure)?;
            if queued {
                reply.queued.push(file.path.clone());
            } else {
                reply.unchanged.push(file.path.clone());
            }
        }
        Ok(reply)
    }

    /// The upload queue and the uploader's state.
    pub fn upload_status(&self) -> Result<UploadStatus, ErrorReply> {
        let catalog = self.catalog();
        match self.uploads() {
            Some(uploads) => uploads.status(&catalog).map_err(catalog_failure),
            None => Ok(UploadStatus {
                mode: catalog.uploads_mode().map_err(catalog_failure)?,
                ..UploadStatus::default()
            }),
        }
    }
}

/// Whether `file` can be uploaded: finished, or sealed and left open by a crash (recd no
/// longer holds its key, so it goes as written and `rec decrypt --recover` finishes it
/// off the vehicle).
fn uploadable(file: &recd_catalog::File) -> bool {
    file.state.is_finished()
        || (file.state == recd_control::FileState::NeedsReindex
            && recd_storage::is_sealed(&file.path))
}

/// What retention must respect of uploads: nothing when uploads are off.
pub(super) fn upload_guard(
    catalog: &Catalog,
    uploads: Option<&Uploads>,
) -> Result<UploadGuard, recd_catalog::CatalogError> {
    Ok(match uploads {
        Some(uploads) => UploadGuard {
            states: catalog.upload_states()?,
            keep_until_uploaded: uploads.keep_until_uploaded,
        },
        None => UploadGuard::default(),
    })
}
