//! Who may ask what: the `Host` header against the listening address (against DNS
//! rebinding), and the bearer token for reading off loopback and for control.

use std::net::{IpAddr, SocketAddr};

use axum::http::{HeaderMap, StatusCode};

use crate::settings::HttpSettings;
use crate::token::TokenFile;

/// Why a request is refused, with the status it gets.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// 400, 401, 403 or 421.
    pub status: StatusCode,
    /// The error's kind in the JSON answer.
    pub kind: &'static str,
    /// What to do about it.
    pub message: String,
}

/// The listener's access rules.
#[derive(Debug)]
pub struct Access {
    listen: SocketAddr,
    allowed_hosts: Vec<String>,
    token: Option<TokenFile>,
    reads_need_token: bool,
    allow_control: bool,
}

impl Access {
    /// The rules of `settings` for a listener bound to `listen` (which has the port
    /// chosen when `settings` asked for port 0), with the token file already read.
    pub fn new(settings: &HttpSettings, listen: SocketAddr, token: Option<TokenFile>) -> Self {
        Self {
            listen,
            allowed_hosts: (settings.allowed_hosts.iter())
                .map(|host| host.to_ascii_lowercase())
                .collect(),
            token,
            reads_need_token: settings.reads_need_token(),
            allow_control: settings.allow_control,
        }
    }

    /// Whether control is allowed at all (`allow_control`).
    pub fn control_allowed(&self) -> bool {
        self.allow_control
    }

    /// Whether the `Host` header names this listener: its address (any address when it
    /// listens on all), `localhost` when it listens on loopback or all, or one of
    /// `allowed_hosts`; and its port.
    pub fn check_host(&self, headers: &HeaderMap) -> Result<(), Refusal> {
        let refuse = |message: String| Refusal {
            status: StatusCode::MISDIRECTED_REQUEST,
            kind: "bad_host",
            message,
        };
        let Some(host) = headers
            .get(axum::http::header::HOST)
            .and_then(|value| value.to_str().ok())
        else {
            return Err(refuse("a Host header is needed".into()));
        };
        let (name, port) = split_host(host);
        if port.unwrap_or(80) != self.listen.port() {
            return Err(refuse(format!(
                "Host {host} does not name this listener's port {}",
                self.listen.port()
            )));
        }
        let name = name.to_ascii_lowercase();
        let listen_ip = self.listen.ip();
        let allowed = match name.parse::<IpAddr>() {
            Ok(ip) => {
                ip == listen_ip
                    || listen_ip.is_unspecified()
                    || (listen_ip.is_loopback() && ip.is_loopback())
            }
            Err(_) => {
                (name == "localhost" && (listen_ip.is_loopback() || listen_ip.is_unspecified()))
                    || self.allowed_hosts.contains(&name)
            }
        };
        if allowed {
            Ok(())
        } else {
            Err(refuse(format!(
                "Host {host} is not an address of this listener (add the name to [http] allowed_hosts)"
            )))
        }
    }

    /// Whether the request may read metrics and status.
    pub fn check_read(&self, headers: &HeaderMap) -> Result<(), Refusal> {
        if self.reads_need_token {
            self.check_token(headers)?;
        }
        Ok(())
    }

    /// Whether the request may act: control allowed, and the token presented.
    pub fn check_control(&self, headers: &HeaderMap) -> Result<(), Refusal> {
        if !self.allow_control {
            return Err(Refusal {
                status: StatusCode::FORBIDDEN,
                kind: "control_off",
                message: "control over HTTP is off ([http] allow_control = false)".into(),
            });
        }
        self.check_token(headers)
    }

    fn check_token(&self, headers: &HeaderMap) -> Result<(), Refusal> {
        let presented = headers
            .get(axum::http::header::AUTHORIZATION)
            .and_then(|value| value.to_str().ok())
            .and_then(|value| value.strip_prefix("Bearer "))
            .map(str::trim);
        let accepted = match (&self.token, presented) {
            (Some(token), Some(presented)) => token.accepts(presented),
            _ => false,
        };
        if accepted {
            Ok(())
        } else {
            Err(Refusal {
                status: StatusCode::UNAUTHORIZED,
                kind: "unauthorized",
                message: "a token is needed: send `Authorization: Bearer <the token in [http] token_file>`".into(),
            })
        }
    }
}

/// `name:port`, `[v6]:port`, `name` or `[v6]` into the name (brackets removed) and port.
fn split_host(host: &str) -> (&str, Option<u16>) {
    if let Some(rest) = host.strip_prefix('[') {
        if let Some((name, after)) = rest.split_once(']') {
            let port = after.strip_prefix(':').and_then(|port| port.parse().ok());
            return (name, port.or(if after.is_empty() { None } else { Some(0) }));
        }
        return (host, Some(0));
    }
    match host.rsplit_once(':') {
        Some((name, port)) => (name, Some(port.parse().unwrap_or(0))),
        None => (host, None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::HeaderValue;

    fn access(listen: &str, hosts: &[&str]) -> Access {
        let settings = HttpSettings {
            listen: listen.parse().unwrap(),
            token_file: None,
            allow_control: false,
            allowed_hosts: hosts.iter().map(|h| h.to_string()).collect(),
            max_topics: 10,
        };
        Access::new(&settings, settings.listen, None)
    }

    fn host(value: &str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert("host", HeaderValue::from_str(value).unwrap());
        headers
    }

    #[test]
    fn loopback_accepts_its_addresses_and_localhost() {
        let access = access("127.0.0.1:9464", &[]);
        for ok in [
            "127.0.0.1:9464",
            "localhost:9464",
            "LOCALHOST:9464",
            "[::1]:9464",
        ] {
            assert_eq!(access.check_host(&host(ok)), Ok(()), "{ok}");
        }
        for bad in [
            "attacker.example:9464",
            "127.0.0.1:80",
            "127.0.0.1",
            "10.0.0.1:9464",
            "127.0.0.1:x",
        ] {
            let refusal = access.check_host(&host(bad)).unwrap_err();
            assert_eq!(refusal.status, StatusCode::MISDIRECTED_REQUEST, "{bad}");
        }
        assert!(access.check_host(&HeaderMap::new()).is_err());
    }

    #[test]
    fn all_addresses_accept_any_address_and_the_allowed_names() {
        let access = access("0.0.0.0:8080", &["ecu-7.local"]);
        for ok in ["192.168.4.1:8080", "ecu-7.local:8080", "localhost:8080"] {
            assert_eq!(access.check_host(&host(ok)), Ok(()), "{ok}");
        }
        assert!(access.check_host(&host("rebind.example:8080")).is_err());
    }

    #[test]
    fn control_off_is_forbidden_whatever_the_token() {
        let access = access("127.0.0.1:9464", &[]);
        let mut headers = host("127.0.0.1:9464");
        headers.insert("authorization", HeaderValue::from_static("Bearer x"));
        assert_eq!(
            access.check_control(&headers).unwrap_err().status,
            StatusCode::FORBIDDEN
        );
        assert_eq!(access.check_read(&headers), Ok(()));
    }
}
