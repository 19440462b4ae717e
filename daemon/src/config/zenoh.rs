//! `[zenoh]`: how sessions record ROS 2 over Zenoh (rmw_zenoh): the domain every session
//! records, and how recd's Zenoh session joins the network.

use std::path::PathBuf;

use recd_engine::{ZenohConfig, ZenohMode};
use serde::{Deserialize, Serialize};

/// The `[zenoh]` table of recd.toml.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ZenohSection {
    /// Record ROS 2 topics over Zenoh of this domain (ROS_DOMAIN_ID) in every session
    /// (`rec start --zenoh-domain` sets it per session); none records no Zenoh.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub domain: Option<u16>,
    /// "peer" (the default, as rmw_zenoh's nodes) or "client" (to record from outside
    /// the vehicle through a router).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mode: Option<ZenohMode>,
    /// Zenoh endpoints to connect to, e.g. ["tcp/127.0.0.1:7447"]; empty connects to
    /// rmw_zenoh's router on this host (tcp/localhost:7447).
    pub connect: Vec<String>,
    /// Zenoh endpoints to listen on; empty listens on a local port, as rmw_zenoh's
    /// nodes do.
    pub listen: Vec<String>,
    /// A Zenoh configuration file (JSON5), as rmw_zenoh's ZENOH_SESSION_CONFIG_URI names
    /// one; mode, connect and listen given here override its values.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub config_file: Option<PathBuf>,
}

impl ZenohSection {
    /// The Zenoh source of a session recording `domain`, its message definitions
    /// searched in `message_dirs` first.
    pub fn source(&self, domain: u16, message_dirs: &[PathBuf]) -> ZenohConfig {
        ZenohConfig {
            domain,
            mode: self.mode,
            connect: self.connect.clone(),
            listen: self.listen.clone(),
            config_file: self.config_file.clone(),
            message_dirs: message_dirs.to_vec(),
            ..ZenohConfig::default()
        }
    }

    /// Checks what can be checked before a session starts: the configuration file is
    /// Zenoh's, the endpoints parse, the domain is ROS 2's.
    pub fn validate(&self) -> Result<(), String> {
        if let Some(domain) = self.domain.filter(|d| *d > 232) {
            return Err(format!(
                "[zenoh] domain {domain} is out of range (0 to 232)"
            ));
        }
        #[cfg(feature = "zenoh")]
        recd_engine::zenoh_wire::zenoh_config(&self.source(0, &[]))
            .map_err(|e| format!("[zenoh] {e}"))?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoints_and_files_are_checked_at_start_up() {
        let section = ZenohSection {
            connect: vec!["tcp/127.0.0.1:7447".into()],
            mode: Some(ZenohMode::Client),
            ..ZenohSection::default()
        };
        section.validate().unwrap();
        let source = section.source(3, &[PathBuf::from("/msgs")]);
        assert_eq!(source.domain, 3);
        assert_eq!(source.mode, Some(ZenohMode::Client));
        let bad = ZenohSection {
            connect: vec!["nonsense".into()],
            ..ZenohSection::default()
        };
        assert!(bad.validate().unwrap_err().contains("connect/endpoints"));
        let missing = ZenohSection {
            config_file: Some("/nonexistent/zenoh.json5".into()),
            ..ZenohSection::default()
        };
        assert!(missing
            .validate()
            .unwrap_err()
            .contains("/nonexistent/zenoh.json5"));
        let domain = ZenohSection {
            domain: Some(300),
            ..ZenohSection::default()
        };
        assert!(domain.validate().unwrap_err().contains("300"));
    }
}
