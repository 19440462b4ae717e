//! The incidents as `/api/incidents` and the page show them: each with its files
//! counted rather than listed (a window of an hour pins many), and its cut files with
//! their upload states.

use recd_control::{Incident, IncidentsOverview};
use serde_json::{json, Value};

/// The overview as JSON: the counts, and the newest incidents newest first.
pub fn overview_json(overview: &IncidentsOverview) -> Value {
    json!({
        "newest": overview.newest.iter().map(incident_json).collect::<Vec<_>>(),
        "by_origin": overview.by_origin,
        "pinned": overview.pinned,
        "waiting_to_cut": overview.waiting_to_cut,
        "refused": overview.refused,
        "pinned_bytes": overview.pinned_bytes,
        "pinned_bytes_limit": overview.pinned_bytes_limit,
    })
}

fn incident_json(incident: &Incident) -> Value {
    let cut_files: Vec<Value> = (incident.cut_files.iter())
        .map(|file| {
            json!({
                "path": file.path,
                "bytes": file.bytes,
                "state": file.state,
                "upload": file.upload,
            })
        })
        .collect();
    json!({
        "id": incident.id,
        "session": incident.session,
        "note": incident.note,
        "origin": incident.origin,
        "time_ns": incident.time_ns,
        "start_ns": incident.start_ns,
        "end_ns": incident.end_ns,
        "created_ns": incident.created_ns,
        "cut": incident.cut,
        "cut_error": incident.cut_error,
        "released": incident.released,
        "pinned_files": incident.pinned_files.len(),
        "pinned_bytes": incident.pinned_files.iter().map(|f| f.bytes).sum::<u64>(),
        "cut_files": cut_files,
        "rule": incident.rule,
    })
}
