//! The control server: one task per client on the Unix socket, one request per line.

use std::io;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use recd_control::{
    decode_request, encode, ErrorKind, ErrorReply, Request, Response, MAX_MESSAGE_BYTES,
};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::{UnixListener, UnixStream};

use crate::sessions::Sessions;

/// A client that sends nothing for this long is disconnected.
const IDLE_TIMEOUT: Duration = Duration::from_secs(60);

/// Why the socket could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum ListenError {
    /// Another recd answers on the socket.
    #[error("another recd is already listening on {0}")]
    InUse(String),
    /// Binding, or preparing the socket's directory, failed.
    #[error("cannot listen on {path}: {source}")]
    Bind {
        /// The socket.
        path: String,
        /// Why.
        source: io::Error,
    },
}

/// Binds the control socket (mode 0660), replacing a stale one a dead recd left behind.
pub fn listen(path: &Path) -> Result<UnixListener, ListenError> {
    let bind_error = |source| ListenError::Bind {
        path: path.display().to_string(),
        source,
    };
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(bind_error)?;
    }
    if path.exists() {
        if std::os::unix::net::UnixStream::connect(path).is_ok() {
            return Err(ListenError::InUse(path.display().to_string()));
        }
        std::fs::remove_file(path).map_err(bind_error)?;
    }
    let listener = UnixListener::bind(path).map_err(bind_error)?;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o660)).map_err(bind_error)?;
    Ok(listener)
}

/// Accepts clients until the task is dropped.
pub async fn serve(listener: UnixListener, sessions: Arc<Sessions>) {
    loop {
        match listener.accept().await {
            Ok((stream, _)) => {
                tokio::spawn(serve_client(stream, sessions.clone()));
            }
            Err(error) => {
                tracing::warn!("accepting a control connection failed: {error}");
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
    }
}

async fn serve_client(stream: UnixStream, sessions: Arc<Sessions>) {
    let (reader, mut writer) = stream.into_split();
    let mut reader = BufReader::new(reader);
    loop {
        let mut line = Vec::new();
        let read = tokio::time::timeout(
            IDLE_TIMEOUT,
            (&mut reader)
                .take(MAX_MESSAGE_BYTES as u64)
                .read_until(b'\n', &mut line),
        )
        .await;
        let response = match read {
            Err(_) | Ok(Err(_)) | Ok(Ok(0)) => return,
            Ok(Ok(_)) if line.last() != Some(&b'\n') => {
                // Too long (or cut off by the client): answer and hang up, as the rest of
                // the stream cannot be framed.
                let message = if line.len() >= MAX_MESSAGE_BYTES {
                    format!("request larger than {MAX_MESSAGE_BYTES} bytes")
                } else {
                    "request not terminated by a newline".to_string()
                };
                let reply = Response::Error(ErrorReply {
                    kind: ErrorKind::BadRequest,
                    message,
                });
                let _ = writer.write_all(&encode(&reply)).await;
                return;
            }
            Ok(Ok(_)) => match decode_request(&line[..line.len() - 1]) {
                Ok(request) => handle(request, sessions.clone()).await,
                Err(message) => Response::Error(ErrorReply {
                    kind: ErrorKind::BadRequest,
                    message,
                }),
            },
        };
        if writer.write_all(&encode(&response)).await.is_err() {
            return;
        }
    }
}

/// Answers one request; the sessions' blocking work runs off the async threads.
async fn handle(request: Request, sessions: Arc<Sessions>) -> Response {
    let outcome = tokio::task::spawn_blocking(move || sessions.answer(request)).await;
    match outcome {
        Ok(Ok(response)) => response,
        Ok(Err(error)) => Response::Error(error),
        Err(join_error) => Response::Error(ErrorReply {
            kind: ErrorKind::Failed,
            message: format!("recd failed on this request: {join_error}"),
        }),
    }
}
