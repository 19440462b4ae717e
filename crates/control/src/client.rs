//! The blocking client `rec` talks to recd with.

use std::io::{self, BufRead, BufReader, Read, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::protocol::{
    encode, Request, RequestEnvelope, Response, MAX_MESSAGE_BYTES, PROTOCOL_VERSION,
};

/// A connection to recd.
pub struct Client {
    socket: PathBuf,
    reader: BufReader<UnixStream>,
    writer: UnixStream,
}

/// Why talking to recd failed; each says what to do about it.
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// There is no socket.
    #[error("recd is not running (no socket at {}); start it with `systemctl start recd`, or pass --socket or set RECD_SOCKET", socket.display())]
    NotRunning {
        /// The socket tried.
        socket: PathBuf,
    },
    /// The socket file exists but nothing listens on it.
    #[error("{} exists but no recd answers on it (left by a crashed recd?); start recd again (`systemctl restart recd`), it replaces the socket", socket.display())]
    StaleSocket {
        /// The socket tried.
        socket: PathBuf,
    },
    /// The socket exists but this user may not use it.
    #[error("no permission to use {}; join recd's group (`usermod -aG recd $USER`, then log in again) or run as root", socket.display())]
    PermissionDenied {
        /// The socket tried.
        socket: PathBuf,
    },
    /// The path is not a socket recd listens on.
    #[error("cannot connect to {}: {source}", socket.display())]
    Connect {
        /// The socket tried.
        socket: PathBuf,
        /// Why.
        source: io::Error,
    },
    /// The connection broke or timed out.
    #[error("lost the connection to recd at {}: {source}", socket.display())]
    Io {
        /// The socket.
        socket: PathBuf,
        /// Why.
        source: io::Error,
    },
    /// recd answered something this client does not understand.
    #[error("recd answered something this rec does not understand ({0}); are rec and recd from the same release?")]
    Protocol(String),
}

impl Client {
    /// Connects to recd at `socket`; a reply that takes longer than `timeout` is an error.
    pub fn connect(socket: &Path, timeout: Duration) -> Result<Self, ClientError> {
        let stream = UnixStream::connect(socket).map_err(|source| match source.kind() {
            io::ErrorKind::NotFound => ClientError::NotRunning {
                socket: socket.to_path_buf(),
            },
            io::ErrorKind::ConnectionRefused => ClientError::StaleSocket {
                socket: socket.to_path_buf(),
            },
            io::ErrorKind::PermissionDenied => ClientError::PermissionDenied {
                socket: socket.to_path_buf(),
            },
            _ => ClientError::Connect {
                socket: socket.to_path_buf(),
                source,
            },
        })?;
        let io_error = |source| ClientError::Io {
            socket: socket.to_path_buf(),
            source,
        };
        stream.set_read_timeout(Some(timeout)).map_err(io_error)?;
        stream.set_write_timeout(Some(timeout)).map_err(io_error)?;
        let writer = stream.try_clone().map_err(io_error)?;
        Ok(Self {
            socket: socket.to_path_buf(),
            reader: BufReader::new(stream),
            writer,
        })
    }

    /// Sends `request` and waits for recd's response.
    pub fn request(&mut self, request: &Request) -> Result<Response, ClientError> {
        let line = encode(&RequestEnvelope {
            version: PROTOCOL_VERSION,
            request: request.clone(),
        });
        self.writer
            .write_all(&line)
            .map_err(|source| self.io(source))?;
        let mut reply = Vec::new();
        let read = (&mut self.reader)
            .take(MAX_MESSAGE_BYTES as u64)
            .read_until(b'\n', &mut reply)
            .map_err(|source| self.io(source))?;
        if read == 0 {
            return Err(self.io(io::ErrorKind::UnexpectedEof.into()));
        }
        serde_json::from_slice(&reply).map_err(|e| ClientError::Protocol(e.to_string()))
    }

    fn io(&self, source: io::Error) -> ClientError {
        ClientError::Io {
            socket: self.socket.clone(),
            source,
        }
    }
}
