//! A plain HTTP/1.1 client for the tests of recd's HTTP listener: one request per
//! connection, written and read by hand so that a test sees exactly what went over the
//! wire (and can send what no well-behaved client would).

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

/// How long one exchange may take.
const EXCHANGE_LIMIT: Duration = Duration::from_secs(20);

/// An answer.
#[derive(Debug, Clone)]
pub struct HttpReply {
    /// The status code.
    pub status: u16,
    /// The headers, names in lower case.
    pub headers: Vec<(String, String)>,
    /// The body as text.
    pub body: String,
}

impl HttpReply {
    /// The first header of that (lower-case) name.
    pub fn header(&self, name: &str) -> Option<&str> {
        (self.headers.iter())
            .find(|(key, _)| key == name)
            .map(|(_, value)| value.as_str())
    }

    /// The body as JSON.
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.body)
            .unwrap_or_else(|e| panic!("not JSON ({e}): {} {}", self.status, self.body))
    }
}

/// Sends one request (with `Host: <address>` unless `headers` has one, and `Connection:
/// close`) and reads the whole answer.
pub fn http_request(
    address: SocketAddr,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &[u8],
) -> std::io::Result<HttpReply> {
    let mut stream = TcpStream::connect_timeout(&address, EXCHANGE_LIMIT)?;
    stream.set_read_timeout(Some(EXCHANGE_LIMIT))?;
    stream.set_write_timeout(Some(EXCHANGE_LIMIT))?;
    let mut head = format!("{method} {path} HTTP/1.1\r\nConnection: close\r\n");
    if !headers
        .iter()
        .any(|(name, _)| name.eq_ignore_ascii_case("host"))
    {
        head += &format!("Host: {address}\r\n");
    }
    for (name, value) in headers {
        head += &format!("{name}: {value}\r\n");
    }
    if !body.is_empty() || method == "POST" {
        head += &format!("Content-Length: {}\r\n", body.len());
    }
    head += "\r\n";
    stream.write_all(head.as_bytes())?;
    stream.write_all(body)?;
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw)?;
    parse(&raw)
}

/// `GET path` with no extra headers; panics when the exchange fails.
pub fn http_get(address: SocketAddr, path: &str) -> HttpReply {
    http_request(address, "GET", path, &[], b"")
        .unwrap_or_else(|e| panic!("GET {path} from {address}: {e}"))
}

fn parse(raw: &[u8]) -> std::io::Result<HttpReply> {
    let invalid =
        |what: &str| std::io::Error::new(std::io::ErrorKind::InvalidData, what.to_string());
    let split = (raw.windows(4))
        .position(|w| w == b"\r\n\r\n")
        .ok_or_else(|| invalid("no end of the head"))?;
    let head = String::from_utf8_lossy(&raw[..split]);
    let mut lines = head.split("\r\n");
    let status = (lines.next().and_then(|line| line.split(' ').nth(1)))
        .and_then(|code| code.parse().ok())
        .ok_or_else(|| invalid("no status"))?;
    let headers: Vec<(String, String)> = lines
        .filter_map(|line| line.split_once(':'))
        .map(|(name, value)| (name.trim().to_ascii_lowercase(), value.trim().to_string()))
        .collect();
    let mut body = raw[split + 4..].to_vec();
    if (headers.iter()).any(|(k, v)| k == "transfer-encoding" && v.contains("chunked")) {
        body = unchunk(&body).ok_or_else(|| invalid("bad chunked body"))?;
    }
    Ok(HttpReply {
        status,
        headers,
        body: String::from_utf8_lossy(&body).into_owned(),
    })
}

fn unchunk(mut raw: &[u8]) -> Option<Vec<u8>> {
    let mut body = Vec::new();
    loop {
        let line_end = raw.windows(2).position(|w| w == b"\r\n")?;
        let size_text = std::str::from_utf8(&raw[..line_end]).ok()?;
        let size = usize::from_str_radix(size_text.split(';').next()?.trim(), 16).ok()?;
        raw = &raw[line_end + 2..];
        if size == 0 {
            return Some(body);
        }
        body.extend_from_slice(raw.get(..size)?);
        raw = raw.get(size + 2..)?;
    }
}
