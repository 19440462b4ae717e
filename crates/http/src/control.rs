//! The control endpoints: start from a preset, stop, pause, resume, mark and trigger. Each
//! goes through the daemon's one answering path (as the socket and remote control do) and
//! is logged with the client's address, refused ones too.

use axum::extract::{Request, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::{Extension, Json};
use recd_control::{ErrorKind, Request as Command, Response as Answer, TriggerRequest};
use serde::Deserialize;

use crate::access::Refusal;
use crate::reply::error_response;
use crate::settings::MAX_BODY_BYTES;
use crate::shared::{AppState, ClientAddr, Shared};

/// What a control request's body may hold.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct Body {
    /// The session acted on.
    session: Option<String>,
    /// The preset to start (or whose trigger window to use).
    preset: Option<String>,
    /// A marker's text.
    text: Option<String>,
}

/// `POST /api/start {"preset": NAME}`.
pub async fn start(state: AppState, client: Extension<ClientAddr>, request: Request) -> Response {
    act(state, client, request, "start").await
}

/// `POST /api/stop {"session": NAME}`.
pub async fn stop(state: AppState, client: Extension<ClientAddr>, request: Request) -> Response {
    act(state, client, request, "stop").await
}

/// `POST /api/pause {"session": NAME}`.
pub async fn pause(state: AppState, client: Extension<ClientAddr>, request: Request) -> Response {
    act(state, client, request, "pause").await
}

/// `POST /api/resume {"session": NAME}`.
pub async fn resume(state: AppState, client: Extension<ClientAddr>, request: Request) -> Response {
    act(state, client, request, "resume").await
}

/// `POST /api/mark {"session": NAME, "text": TEXT}`.
pub async fn mark(state: AppState, client: Extension<ClientAddr>, request: Request) -> Response {
    act(state, client, request, "mark").await
}

/// `POST /api/trigger {"session": NAME}`: the window of the preset the session was
/// started from (or of `"preset"`), else the whole buffer.
pub async fn trigger(state: AppState, client: Extension<ClientAddr>, request: Request) -> Response {
    act(state, client, request, "trigger").await
}

/// Checks the right to act, reads the body, answers and logs.
async fn act(
    State(shared): AppState,
    Extension(ClientAddr(client)): Extension<ClientAddr>,
    request: Request,
    action: &'static str,
) -> Response {
    if let Err(refusal) = shared.access.check_control(request.headers()) {
        tracing::warn!(%client, action, status = refusal.status.as_u16(), "HTTP control refused: {}", refusal.message);
        return refusal.into_response();
    }
    let body = match axum::body::to_bytes(request.into_body(), MAX_BODY_BYTES).await {
        Ok(bytes) => bytes,
        Err(_) => {
            return error_response(
                StatusCode::PAYLOAD_TOO_LARGE,
                "bad_request",
                &format!("a control request's body must be JSON of at most {MAX_BODY_BYTES} bytes"),
            )
        }
    };
    let body: Body = if body.is_empty() {
        Body::default()
    } else {
        match serde_json::from_slice(&body) {
            Ok(body) => body,
            Err(error) => {
                return error_response(
                    StatusCode::BAD_REQUEST,
                    "bad_request",
                    &format!("the body is not a control request: {error}"),
                )
            }
        }
    };
    let command = match command(&shared, action, &body, client) {
        Ok(command) => command,
        Err(refusal) => return refusal.into_response(),
    };
    let backend = shared.backend.clone();
    let outcome = tokio::task::spawn_blocking(move || backend.answer(command)).await;
    let session = body.session.as_deref().unwrap_or("-");
    match outcome {
        Ok(Ok(answer)) => {
            shared.snapshots.invalidate().await;
            tracing::info!(%client, action, session, preset = body.preset.as_deref().unwrap_or("-"), "HTTP control done");
            if let (Answer::Started(started), Some(preset)) = (&answer, &body.preset) {
                (shared.started_from.lock().expect("presets lock"))
                    .insert(started.name.clone(), preset.clone());
            }
            Json(answer).into_response()
        }
        Ok(Err(error)) => {
            tracing::warn!(%client, action, session, "HTTP control failed: {}", error.message);
            let status = match error.kind {
                ErrorKind::BadRequest | ErrorKind::InvalidArgument => StatusCode::BAD_REQUEST,
                ErrorKind::UnknownSession => StatusCode::NOT_FOUND,
                ErrorKind::AlreadyRunning => StatusCode::CONFLICT,
                ErrorKind::Failed => StatusCode::INTERNAL_SERVER_ERROR,
            };
            error_response(status, kind_name(error.kind), &error.message)
        }
        Err(error) => error_response(
            StatusCode::INTERNAL_SERVER_ERROR,
            "failed",
            &format!("recd failed on this request: {error}"),
        ),
    }
}

/// The control-protocol request for an action.
fn command(
    shared: &Shared,
    action: &str,
    body: &Body,
    client: std::net::SocketAddr,
) -> Result<Command, Refusal> {
    let bad = |message: &str| Refusal {
        status: StatusCode::BAD_REQUEST,
        kind: "bad_request",
        message: message.into(),
    };
    let preset = |name: &str| {
        (shared.presets.iter().find(|preset| preset.name == name)).ok_or_else(|| Refusal {
            status: StatusCode::NOT_FOUND,
            kind: "unknown_preset",
            message: format!("no [[preset]] named {name:?} in recd.toml"),
        })
    };
    if action == "start" {
        let name = body
            .preset
            .as_deref()
            .ok_or_else(|| bad("say which preset to start: {\"preset\": NAME}"))?;
        let preset = preset(name)?;
        let mut start = preset.start.clone();
        start.name = start.name.or_else(|| Some(preset.name.clone()));
        return Ok(Command::Start(start));
    }
    let session = body
        .session
        .clone()
        .ok_or_else(|| bad("say which session: {\"session\": NAME}"))?;
    Ok(match action {
        "stop" => Command::Stop {
            name: Some(session),
            all: false,
        },
        "pause" => Command::Pause {
            name: Some(session),
        },
        "resume" => Command::Resume {
            name: Some(session),
        },
        "mark" => Command::Mark {
            name: Some(session),
            text: (body.text.clone())
                .filter(|text| !text.trim().is_empty())
                .unwrap_or_else(|| "mark from the web page".into()),
        },
        _ => {
            let started_from = (shared.started_from.lock().expect("presets lock"))
                .get(&session)
                .cloned();
            let window = match body.preset.as_deref().or(started_from.as_deref()) {
                Some(name) => {
                    let preset = preset(name)?;
                    (preset.trigger_before_ms, preset.trigger_after_ms)
                }
                None => (None, 0),
            };
            Command::Trigger(TriggerRequest {
                name: Some(session),
                before_ms: window.0,
                after_ms: window.1,
                note: format!("web page ({client})"),
                at_ns: None,
                id: None,
                origin: Some(recd_control::origin::PAGE.to_string()),
                rule: None,
            })
        }
    })
}

fn kind_name(kind: ErrorKind) -> &'static str {
    match kind {
        ErrorKind::BadRequest => "bad_request",
        ErrorKind::InvalidArgument => "invalid_argument",
        ErrorKind::UnknownSession => "unknown_session",
        ErrorKind::AlreadyRunning => "already_running",
        ErrorKind::Failed => "failed",
    }
}
