//! Errors as the listener answers them: JSON `{"error": kind, "message": text}`.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;

use crate::access::Refusal;

/// An error as JSON: `{"error": kind, "message": text}`.
pub fn error_response(status: StatusCode, kind: &str, message: &str) -> Response {
    (
        status,
        Json(serde_json::json!({ "error": kind, "message": message })),
    )
        .into_response()
}

impl IntoResponse for Refusal {
    fn into_response(self) -> Response {
        error_response(self.status, self.kind, &self.message)
    }
}
