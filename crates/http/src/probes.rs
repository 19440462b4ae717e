//! `/livez` and `/readyz`, in the Kubernetes manner: 200 `ok`, or 503 with the failed
//! checks; `?verbose` lists every check.

use axum::extract::State;
use axum::http::{StatusCode, Uri};
use axum::response::{IntoResponse, Response};

use crate::backend::Check;
use crate::shared::AppState;

/// `GET /livez`: the daemon's threads are alive (what the systemd watchdog is pinged on).
pub async fn livez(State(shared): AppState, uri: Uri) -> Response {
    let backend = shared.backend.clone();
    let outcome = tokio::task::spawn_blocking(move || backend.alive())
        .await
        .unwrap_or_else(|error| Err(error.to_string()));
    answer(
        "livez",
        &[Check {
            name: "threads",
            outcome,
        }],
        verbose(&uri),
    )
}

/// `GET /readyz`: the catalog answers, the data directory takes files, and its free
/// space is above `min_free_space`.
pub async fn readyz(State(shared): AppState, uri: Uri) -> Response {
    let backend = shared.backend.clone();
    let checks = tokio::task::spawn_blocking(move || backend.readiness())
        .await
        .unwrap_or_else(|error| {
            vec![Check {
                name: "checks",
                outcome: Err(error.to_string()),
            }]
        });
    answer("readyz", &checks, verbose(&uri))
}

fn verbose(uri: &Uri) -> bool {
    (uri.query().unwrap_or_default().split('&'))
        .any(|pair| pair == "verbose" || pair.starts_with("verbose="))
}

/// The answer: `ok` when every check passed (their list with `verbose`), else 503 with
/// every check and what failed.
pub fn answer(probe: &str, checks: &[Check], verbose: bool) -> Response {
    let passed = checks.iter().all(|check| check.outcome.is_ok());
    let status = if passed {
        StatusCode::OK
    } else {
        StatusCode::SERVICE_UNAVAILABLE
    };
    if passed && !verbose {
        return (status, "ok\n").into_response();
    }
    let mut text = String::new();
    for check in checks {
        match &check.outcome {
            Ok(()) => text += &format!("[+]{} ok\n", check.name),
            Err(reason) => text += &format!("[-]{} failed: {reason}\n", check.name),
        }
    }
    text += &format!(
        "{probe} check {}\n",
        if passed { "passed" } else { "failed" }
    );
    (status, text).into_response()
}
