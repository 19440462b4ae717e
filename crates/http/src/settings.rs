//! How the listener is set up, and the checks that refuse an unsafe setup at start-up.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

/// The listener's settings (`[http]` in recd.toml).
#[derive(Debug, Clone, PartialEq)]
pub struct HttpSettings {
    /// Where to listen.
    pub listen: SocketAddr,
    /// A file holding the bearer token.
    pub token_file: Option<PathBuf>,
    /// Whether the page's buttons and the control endpoints may act (with the token).
    pub allow_control: bool,
    /// Host names (besides addresses) clients may reach the listener by.
    pub allowed_hosts: Vec<String>,
    /// Topic series per metric beyond which topics are summed into `topic="_other"`.
    pub max_topics: usize,
}

/// Connections served at once; more are closed as they come.
pub const MAX_CONNECTIONS: usize = 64;
/// A request's headers must arrive within this time, and an idle keep-alive connection
/// is closed after it.
pub const HEADER_TIMEOUT: Duration = Duration::from_secs(10);
/// A request must be answered within this time.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(15);
/// The largest request body (control requests are small JSON objects).
pub const MAX_BODY_BYTES: usize = 16 * 1024;
/// The largest request head.
pub const MAX_HEAD_BYTES: usize = 16 * 1024;

/// Why the settings are refused.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum SettingsError {
    /// Reachable from other machines without a token.
    #[error("[http] listen = \"{0}\" is not a loopback address: set token_file too, or listen on 127.0.0.1")]
    OpenWithoutToken(SocketAddr),
    /// Control allowed without a token to guard it.
    #[error("[http] allow_control = true needs token_file: control requests must carry the token")]
    ControlWithoutToken,
    /// `max_topics` of 0.
    #[error("[http] max_topics must be at least 1")]
    NoTopics,
}

impl HttpSettings {
    /// Refuses settings that would expose recd.
    pub fn check(&self) -> Result<(), SettingsError> {
        if self.token_file.is_none() {
            if !self.listen.ip().is_loopback() {
                return Err(SettingsError::OpenWithoutToken(self.listen));
            }
            if self.allow_control {
                return Err(SettingsError::ControlWithoutToken);
            }
        }
        if self.max_topics == 0 {
            return Err(SettingsError::NoTopics);
        }
        Ok(())
    }

    /// Whether reading (metrics, status, the page's data) needs the token: everywhere
    /// but on loopback, where anyone on the machine may read, as with `ps`.
    pub fn reads_need_token(&self) -> bool {
        self.token_file.is_some() && !self.listen.ip().is_loopback()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(listen: &str, token: bool, control: bool) -> HttpSettings {
        HttpSettings {
            listen: listen.parse().unwrap(),
            token_file: token.then(|| PathBuf::from("/etc/recd/http-token")),
            allow_control: control,
            allowed_hosts: vec![],
            max_topics: 500,
        }
    }

    #[test]
    fn an_open_address_needs_a_token() {
        assert_eq!(
            settings("0.0.0.0:9464", false, false).check(),
            Err(SettingsError::OpenWithoutToken(
                "0.0.0.0:9464".parse().unwrap()
            ))
        );
        assert_eq!(settings("0.0.0.0:9464", true, false).check(), Ok(()));
        assert_eq!(settings("127.0.0.1:9464", false, false).check(), Ok(()));
        assert_eq!(settings("[::1]:9464", false, false).check(), Ok(()));
    }

    #[test]
    fn control_needs_a_token() {
        assert_eq!(
            settings("127.0.0.1:9464", false, true).check(),
            Err(SettingsError::ControlWithoutToken)
        );
        assert_eq!(settings("127.0.0.1:9464", true, true).check(), Ok(()));
    }

    #[test]
    fn reads_need_the_token_off_loopback_only() {
        assert!(!settings("127.0.0.1:9464", true, true).reads_need_token());
        assert!(settings("192.168.1.5:9464", true, false).reads_need_token());
        assert!(!settings("127.0.0.1:9464", false, false).reads_need_token());
    }
}
