//! Requests to recd over its control socket, shared by the commands that talk to it.

use std::path::Path;
use std::time::Duration;

use recd_control::{Client, Request, Response};

/// How long recd may take to answer (a stop finalizes files, which takes a moment).
const REPLY_TIMEOUT: Duration = Duration::from_secs(120);

/// Sends one request; recd's error replies become the command's error.
pub fn ask(socket: &Path, request: &Request) -> Result<Response, String> {
    ask_within(socket, request, REPLY_TIMEOUT)
}

/// [`ask`], waiting at most `timeout` to connect and for the reply.
pub fn ask_within(socket: &Path, request: &Request, timeout: Duration) -> Result<Response, String> {
    let mut client = Client::connect(socket, timeout).map_err(|e| e.to_string())?;
    match client.request(request).map_err(|e| e.to_string())? {
        Response::Error(error) => Err(error.message),
        response => Ok(response),
    }
}

/// The error of a reply that is not the one the request asks for.
pub fn unexpected(response: &Response) -> String {
    format!("recd answered with an unexpected {response:?}")
}
