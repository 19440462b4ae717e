//! The Zenoh session a recording (or a replay) joins the network with, configured as
//! rmw_zenoh configures its nodes' sessions unless told otherwise.

use zenoh::{Config, Session, Wait};

use crate::config::{ZenohConfig, ZenohMode};

/// Where rmw_zenoh's nodes find their router: `rmw_zenohd` on this host.
pub const DEFAULT_ROUTER: &str = "tcp/localhost:7447";

/// Why a Zenoh session could not be opened.
#[derive(Debug, thiserror::Error)]
pub enum ZenohSessionError {
    /// The configuration file could not be read or is not a Zenoh configuration.
    #[error("cannot read the Zenoh configuration {path}: {reason}")]
    ConfigFile {
        /// The file.
        path: std::path::PathBuf,
        /// Zenoh's reason.
        reason: String,
    },
    /// A setting was refused by Zenoh (an endpoint that does not parse, say).
    #[error("Zenoh refuses {key} = {value}: {reason}")]
    Setting {
        /// Zenoh's configuration key.
        key: &'static str,
        /// The value given.
        value: String,
        /// Zenoh's reason.
        reason: String,
    },
    /// Zenoh could not open the session (a client finding no router, a port taken, ...).
    #[error("cannot open a Zenoh session ({mode}, connecting to {connect}): {reason}")]
    Open {
        /// The session's mode.
        mode: String,
        /// Where it connects to.
        connect: String,
        /// Zenoh's reason.
        reason: String,
    },
}

/// The Zenoh configuration `config` asks for: its file, or rmw_zenoh's defaults (its
/// `DEFAULT_RMW_ZENOH_SESSION_CONFIG.json5`: peer, connecting to the router on this host,
/// listening on a local port, no multicast scouting, time stamps on), with the mode and
/// endpoints given overriding either.
pub fn zenoh_config(config: &ZenohConfig) -> Result<Config, ZenohSessionError> {
    let mut zenoh = match &config.config_file {
        Some(path) => Config::from_file(path).map_err(|e| ZenohSessionError::ConfigFile {
            path: path.clone(),
            reason: e.to_string(),
        })?,
        None => {
            let mut zenoh = Config::default();
            set(&mut zenoh, "mode", json(ZenohMode::Peer.as_str()))?;
            set(
                &mut zenoh,
                "connect/endpoints",
                json_list(&[DEFAULT_ROUTER.to_string()]),
            )?;
            // As rmw_zenoh's nodes: peers are told of each other by the router (gossip)
            // rather than found by multicast, and connect to each other on a local port.
            set(
                &mut zenoh,
                "listen/endpoints",
                json_list(&["tcp/localhost:0".to_string()]),
            )?;
            set(&mut zenoh, "scouting/multicast/enabled", "false".into())?;
            set(
                &mut zenoh,
                "timestamping/enabled",
                r#"{"router": true, "peer": true, "client": true}"#.into(),
            )?;
            zenoh
        }
    };
    if let Some(mode) = config.mode {
        set(&mut zenoh, "mode", json(mode.as_str()))?;
    }
    if !config.connect.is_empty() {
        set(&mut zenoh, "connect/endpoints", json_list(&config.connect))?;
    }
    if !config.listen.is_empty() {
        set(&mut zenoh, "listen/endpoints", json_list(&config.listen))?;
    }
    Ok(zenoh)
}

/// Opens a session as `config` asks.
pub fn open_session(config: &ZenohConfig) -> Result<Session, ZenohSessionError> {
    let zenoh = zenoh_config(config)?;
    let mode = zenoh.get_json("mode").unwrap_or_default();
    let connect = zenoh.get_json("connect/endpoints").unwrap_or_default();
    zenoh::open(zenoh)
        .wait()
        .map_err(|e| ZenohSessionError::Open {
            mode: mode.trim_matches('"').to_string(),
            connect,
            reason: e.to_string(),
        })
}

fn set(zenoh: &mut Config, key: &'static str, value: String) -> Result<(), ZenohSessionError> {
    zenoh
        .insert_json5(key, &value)
        .map_err(|e| ZenohSessionError::Setting {
            key,
            value,
            reason: e.to_string(),
        })
}

fn json(text: &str) -> String {
    serde_json::to_string(text).expect("a string serializes")
}

fn json_list(items: &[String]) -> String {
    serde_json::to_string(items).expect("strings serialize")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_defaults_are_rmw_zenohs() {
        let zenoh = zenoh_config(&ZenohConfig::new(0)).unwrap();
        assert_eq!(zenoh.get_json("mode").unwrap(), "\"peer\"");
        assert!(zenoh
            .get_json("connect/endpoints")
            .unwrap()
            .contains("tcp/localhost:7447"));
        assert_eq!(
            zenoh.get_json("scouting/multicast/enabled").unwrap(),
            "false"
        );
    }

    #[test]
    fn given_settings_override_and_bad_ones_are_named() {
        let config = ZenohConfig {
            mode: Some(ZenohMode::Client),
            connect: vec!["tcp/10.0.0.1:7447".into()],
            listen: vec!["tcp/127.0.0.1:0".into()],
            ..ZenohConfig::new(0)
        };
        let zenoh = zenoh_config(&config).unwrap();
        assert_eq!(zenoh.get_json("mode").unwrap(), "\"client\"");
        assert!(zenoh
            .get_json("connect/endpoints")
            .unwrap()
            .contains("10.0.0.1"));
        let bad = ZenohConfig {
            connect: vec!["nonsense".into()],
            ..ZenohConfig::new(0)
        };
        let error = zenoh_config(&bad).unwrap_err().to_string();
        assert!(error.contains("connect/endpoints"), "{error}");
        let missing = ZenohConfig {
            config_file: Some("/nonexistent/zenoh.json5".into()),
            ..ZenohConfig::new(0)
        };
        let error = zenoh_config(&missing).unwrap_err().to_string();
        assert!(error.contains("/nonexistent/zenoh.json5"), "{error}");
    }
}
