//! The framing of the socket: one JSON line per message, requests in a versioned envelope.

use serde::{Deserialize, Serialize};

use super::request::Request;

/// The protocol version this build speaks; a request with another one is refused.
pub const PROTOCOL_VERSION: u32 = 1;

/// The largest request or response line, newline included: room for a start request
/// with [`MAX_ATTACHMENT_BYTES`](crate::MAX_ATTACHMENT_BYTES) of attachments in base64.
pub const MAX_MESSAGE_BYTES: usize = 8 << 20;

/// What travels on the wire for a request: the version, then the request's fields.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RequestEnvelope {
    /// [`PROTOCOL_VERSION`] of the sender.
    pub version: u32,
    /// The request.
    #[serde(flatten)]
    pub request: Request,
}

/// One message as a line: JSON and a newline.
pub fn encode<T: Serialize>(message: &T) -> Vec<u8> {
    let mut line = serde_json::to_vec(message).expect("protocol types serialize");
    line.push(b'\n');
    line
}

/// Reads a request line; the error says what is wrong with it for the reply.
pub fn decode_request(line: &[u8]) -> Result<Request, String> {
    let value: serde_json::Value =
        serde_json::from_slice(line).map_err(|e| format!("not a JSON request: {e}"))?;
    match value.get("version").and_then(|v| v.as_u64()) {
        Some(version) if version == u64::from(PROTOCOL_VERSION) => {}
        Some(version) => {
            return Err(format!(
                "protocol version {version} is not spoken here (recd speaks {PROTOCOL_VERSION}); use a rec of the same release"
            ))
        }
        None => return Err("a request needs a numeric \"version\"".into()),
    }
    let envelope: RequestEnvelope =
        serde_json::from_value(value).map_err(|e| format!("unknown or malformed request: {e}"))?;
    Ok(envelope.request)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::sessions::StartRequest;
    use crate::protocol::triggers::TriggerRequest;

    #[test]
    fn requests_round_trip_through_lines() {
        let requests = [
            Request::Ping,
            Request::Start(StartRequest {
                name: Some("drive".into()),
                topics: vec!["camera/*".into()],
                max_file_size: Some(1 << 30),
                ..StartRequest::default()
            }),
            Request::Stop {
                name: None,
                all: true,
            },
            Request::Status { name: None },
            Request::List,
            Request::Trigger(TriggerRequest {
                name: Some("drive".into()),
                before_ms: Some(30_000),
                after_ms: 10_000,
                note: "hard brake".into(),
                at_ns: Some(1_700_000_000_000_000_000),
                id: Some("brake-17".into()),
                origin: Some("fleet".into()),
                rule: None,
            }),
        ];
        for request in requests {
            let line = encode(&RequestEnvelope {
                version: PROTOCOL_VERSION,
                request: request.clone(),
            });
            assert_eq!(*line.last().unwrap(), b'\n');
            assert_eq!(decode_request(&line[..line.len() - 1]), Ok(request));
        }
    }

    #[test]
    fn bad_requests_say_what_is_wrong() {
        assert!(decode_request(b"{nope").unwrap_err().contains("not a JSON"));
        assert!(decode_request(br#"{"request":"ping"}"#)
            .unwrap_err()
            .contains("version"));
        assert!(decode_request(br#"{"version":99,"request":"ping"}"#)
            .unwrap_err()
            .contains("99"));
        assert!(decode_request(br#"{"version":1,"request":"explode"}"#)
            .unwrap_err()
            .contains("unknown"));
    }
}
