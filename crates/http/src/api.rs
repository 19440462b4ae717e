//! The read endpoints: `/metrics`, `/api/status` (what `rec status --json` prints),
//! `/api/incidents` (the incidents counted and the newest) and `/api/overview`
//! (everything the page shows).

use axum::extract::State;
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;

use crate::reply::error_response;
use crate::shared::AppState;
use crate::snapshot::{Snapshot, FRESH_FOR};

/// The version the build info and the page show.
const VERSION: &str = env!("CARGO_PKG_VERSION");

/// `GET /metrics`.
pub async fn metrics(State(shared): AppState, headers: HeaderMap) -> Response {
    if let Err(refusal) = shared.access.check_read(&headers) {
        return refusal.into_response();
    }
    let snapshot = match shared.snapshots.get(FRESH_FOR).await {
        Ok(snapshot) => snapshot,
        Err(message) => return unavailable(&message),
    };
    let families = {
        let mut budget = shared.budget.lock().expect("budget lock");
        crate::metrics::families(&snapshot, &mut budget, VERSION)
    };
    let accept = headers
        .get(header::ACCEPT)
        .and_then(|value| value.to_str().ok())
        .unwrap_or_default();
    let (content_type, text) = crate::metrics::render(families, accept);
    ([(header::CONTENT_TYPE, content_type)], text).into_response()
}

/// `GET /api/status`: the running sessions, as `rec status --json` prints them.
pub async fn status(State(shared): AppState, headers: HeaderMap) -> Response {
    if let Err(refusal) = shared.access.check_read(&headers) {
        return refusal.into_response();
    }
    match shared.snapshots.get(FRESH_FOR).await {
        Ok(snapshot) => Json(&snapshot.sessions).into_response(),
        Err(message) => unavailable(&message),
    }
}

/// `GET /api/incidents`: the incidents counted and the newest
/// ([`NEWEST_INCIDENTS`](crate::snapshot::NEWEST_INCIDENTS)) of them.
pub async fn incidents(State(shared): AppState, headers: HeaderMap) -> Response {
    if let Err(refusal) = shared.access.check_read(&headers) {
        return refusal.into_response();
    }
    match shared.snapshots.get(FRESH_FOR).await {
        Ok(snapshot) => match &snapshot.incidents {
            Some(overview) => Json(crate::incidents::overview_json(overview)).into_response(),
            None => unavailable("the catalog's incidents cannot be read now (see /readyz)"),
        },
        Err(message) => unavailable(&message),
    }
}

/// `GET /api/overview`: the page's data.
pub async fn overview(State(shared): AppState, headers: HeaderMap) -> Response {
    if let Err(refusal) = shared.access.check_read(&headers) {
        return refusal.into_response();
    }
    let snapshot = match shared.snapshots.get(FRESH_FOR).await {
        Ok(snapshot) => snapshot,
        Err(message) => return unavailable(&message),
    };
    let history = shared.history.lock().expect("history lock");
    let started_from = shared.started_from.lock().expect("presets lock");
    Json(overview_json(
        &snapshot,
        &history.view(),
        &*started_from,
        &shared.presets,
        shared.access.control_allowed(),
    ))
    .into_response()
}

fn overview_json(
    snapshot: &Snapshot,
    history: &impl serde::Serialize,
    started_from: &impl serde::Serialize,
    presets: &[crate::Preset],
    control: bool,
) -> serde_json::Value {
    let facts = &snapshot.facts;
    let presets: Vec<_> = (presets.iter())
        .map(|preset| {
            serde_json::json!({
                "name": preset.name,
                "topics": preset.start.topics,
                "pre_trigger": preset.start.pre_trigger_ms.is_some(),
            })
        })
        .collect();
    serde_json::json!({
        "version": VERSION,
        "hostname": facts.hostname,
        "control": control,
        "presets": presets,
        "started_from": started_from,
        "sessions": snapshot.sessions,
        "history": history,
        "file_sizes": snapshot.file_sizes,
        "disk": {
            "data_dir": facts.data_dir,
            "free_bytes": facts.free_bytes,
            "min_free_space": facts.min_free_space,
            "waiting_to_finish": snapshot.backlog.as_ref().map(|b| b.finish_waiting),
        },
        "uploads": snapshot.uploads,
        "backlog": snapshot.backlog,
        "clock_sync": facts.clock_sync,
        "incidents": snapshot.incidents.as_ref().map(crate::incidents::overview_json),
    })
}

fn unavailable(message: &str) -> Response {
    error_response(StatusCode::SERVICE_UNAVAILABLE, "unavailable", message)
}
