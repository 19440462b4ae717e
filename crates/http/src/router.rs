//! The routes, and what every request goes through first: the `Host` check, the time
//! limit and the headers that keep browsers from framing or sniffing the answers.

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{header, HeaderValue, StatusCode};
use axum::middleware::{from_fn, from_fn_with_state, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;

use crate::reply::error_response;
use crate::settings::REQUEST_TIMEOUT;
use crate::shared::{AppState, Shared};
use crate::{api, control, page, probes};

/// Every route.
pub fn router(shared: Arc<Shared>) -> Router {
    Router::new()
        .route("/", get(page::index))
        .route("/app.js", get(page::script))
        .route("/style.css", get(page::style))
        .route("/favicon.ico", get(page::no_icon))
        .route("/livez", get(probes::livez))
        .route("/readyz", get(probes::readyz))
        .route("/metrics", get(api::metrics))
        .route("/api/status", get(api::status))
        .route("/api/overview", get(api::overview))
        .route("/api/incidents", get(api::incidents))
        .route("/api/start", post(control::start))
        .route("/api/stop", post(control::stop))
        .route("/api/pause", post(control::pause))
        .route("/api/resume", post(control::resume))
        .route("/api/mark", post(control::mark))
        .route("/api/trigger", post(control::trigger))
        .fallback(not_found)
        .layer(from_fn(protective_headers))
        .layer(from_fn(time_limit))
        .layer(from_fn_with_state(shared.clone(), check_host))
        .with_state(shared)
}

async fn not_found() -> Response {
    error_response(StatusCode::NOT_FOUND, "not_found", "no such page")
}

async fn check_host(State(shared): AppState, request: Request, next: Next) -> Response {
    match shared.access.check_host(request.headers()) {
        Ok(()) => next.run(request).await,
        Err(refusal) => refusal.into_response(),
    }
}

async fn time_limit(request: Request, next: Next) -> Response {
    match tokio::time::timeout(REQUEST_TIMEOUT, next.run(request)).await {
        Ok(response) => response,
        Err(_) => error_response(
            StatusCode::SERVICE_UNAVAILABLE,
            "timeout",
            "recd did not answer in time",
        ),
    }
}

async fn protective_headers(request: Request, next: Next) -> Response {
    let mut response = next.run(request).await;
    let headers = response.headers_mut();
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static("default-src 'self'; frame-ancestors 'none'"),
    );
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    headers
        .entry(header::CACHE_CONTROL)
        .or_insert(HeaderValue::from_static("no-store"));
    response
}
