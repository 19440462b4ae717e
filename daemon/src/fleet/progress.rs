//! A window request's later replies: `cut` once every incident of its id is cut (the
//! last, unless `[upload]` carries the files on), then `uploaded` with the object keys,
//! or `failed` with the reason. Where each request stands is the catalog's, so a
//! restart picks up where the replies were.

use recd_catalog::{Catalog, TakenRequest};
use recd_control::{CutState, Incident, UploadState};
use recd_fleet::{Reply, ReplyState};

use super::requests::Outgoing;

/// The next reply of each open window request, as the catalog says they stand now.
pub fn next_replies(
    catalog: &Catalog,
    vehicle: &str,
    uploading: bool,
) -> Result<Vec<Outgoing>, recd_catalog::CatalogError> {
    let open = catalog.open_fleet_requests()?;
    if open.is_empty() {
        return Ok(Vec::new());
    }
    let incidents = catalog.incidents(None)?;
    let mut replies = Vec::new();
    for request in open.iter().filter(|request| request.kind == "window") {
        let mine: Vec<&Incident> = (incidents.iter())
            .filter(|incident| incident.id == request.id)
            .collect();
        let Some(reply) = step(catalog, vehicle, request, &mine, uploading)? else {
            continue;
        };
        replies.push(Outgoing {
            topic: request.response_topic.clone(),
            correlation: request.correlation.clone(),
            reply,
        });
    }
    Ok(replies)
}

/// The reply due for `request`, whose incidents are `mine`, if its state moved on.
fn step(
    catalog: &Catalog,
    vehicle: &str,
    request: &TakenRequest,
    mine: &[&Incident],
    uploading: bool,
) -> Result<Option<Reply>, recd_catalog::CatalogError> {
    let id = Some(request.id.as_str());
    let failed = |reason: String| Reply {
        reason: Some(reason),
        ..Reply::new(vehicle, id, ReplyState::Failed, true)
    };
    if mine.is_empty() {
        return Ok(Some(failed(
            "its incidents are gone (released and their files deleted)".to_string(),
        )));
    }
    if let Some(broken) = mine.iter().find(|i| i.cut == CutState::Failed) {
        let why = broken.cut_error.clone().unwrap_or_default();
        return Ok(Some(failed(format!(
            "the cut of session {:?} failed: {why}",
            broken.session
        ))));
    }
    if mine.iter().any(|i| i.cut == CutState::Waiting) {
        return Ok(None);
    }
    let cut_files: Vec<_> = mine.iter().flat_map(|i| i.cut_files.iter()).collect();
    if cut_files.is_empty() {
        return Ok(Some(failed(
            "the window holds no message of any session: no file was cut".to_string(),
        )));
    }
    let files: Vec<String> = (cut_files.iter())
        .map(|file| file.path.display().to_string())
        .collect();
    if request.state == "accepted" {
        return Ok(Some(Reply {
            files,
            ..Reply::new(vehicle, id, ReplyState::Cut, !uploading)
        }));
    }
    let mut objects = Vec::new();
    for file in &cut_files {
        match catalog.upload(&file.path)? {
            Some(upload) if upload.state == UploadState::Uploaded => objects.push(upload.key),
            Some(upload) if upload.state == UploadState::Failed => {
                let why = upload.reason.unwrap_or_default();
                return Ok(Some(failed(format!(
                    "the upload of {} failed: {why}",
                    file.path.display()
                ))));
            }
            _ => return Ok(None),
        }
    }
    Ok(Some(Reply {
        files,
        objects,
        ..Reply::new(vehicle, id, ReplyState::Uploaded, true)
    }))
}
