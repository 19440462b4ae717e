//! `[fleet]`: the fleet's cloud reaches the vehicle through an MQTT broker. Off when the
//! section is absent.

use std::path::{Path, PathBuf};
use std::time::Duration;

use recd_fleet::{Broker, BrokerError};
use serde::{Deserialize, Serialize};

use super::units;

/// The CA certificates of a `mqtts://` broker when `ca_file` is not set: Debian's bundle
/// of the system's trusted roots (package `ca-certificates`).
pub const SYSTEM_CA_FILE: &str = "/etc/ssl/certs/ca-certificates.crt";

/// How old a request may be by default: four days, a vehicle parked from a Friday
/// before a long weekend to the Tuesday morning.
pub const DEFAULT_MAX_REQUEST_AGE: Duration = Duration::from_secs(4 * 24 * 3600);

/// The `[fleet]` table of recd.toml.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct FleetConfig {
    /// The broker: `mqtts://host[:8883]` (TLS) or `mqtt://host[:1883]` (plain, for a
    /// broker on the vehicle's own network or a test bench).
    pub broker: String,
    /// The vehicle's id, one level of the topics; `[upload] vehicle_id`, else the host's
    /// name, by default.
    pub vehicle: Option<String>,
    /// The first level(s) of every topic.
    pub prefix: String,
    /// The CA certificates (PEM) the broker's certificate must chain to; the system's
    /// (`/etc/ssl/certs/ca-certificates.crt`) by default.
    pub ca_file: Option<PathBuf>,
    /// The vehicle's client certificate (PEM), for brokers that require mutual TLS (AWS
    /// IoT Core does); with `key_file`.
    pub cert_file: Option<PathBuf>,
    /// The client certificate's private key (PEM), readable by its owner only.
    pub key_file: Option<PathBuf>,
    /// A file of `username = "…"` and `password = "…"` for brokers that take them (EMQX,
    /// HiveMQ, Mosquitto), read once at start-up, refused when others may read it.
    pub credentials_file: Option<PathBuf>,
    /// How often the link is checked when idle (MQTT keep-alive).
    #[serde(with = "units::duration")]
    pub keep_alive: Duration,
    /// How long the broker keeps the vehicle's session (its subscriptions and the
    /// requests published meanwhile) while it is offline.
    #[serde(with = "units::duration")]
    pub session_expiry: Duration,
    /// The holdings are published when they change, at most this often.
    #[serde(with = "units::duration")]
    pub holdings_period: Duration,
    /// The fleet's public keys (PEM files, `openssl pkey -pubout`): a request is taken
    /// only when one of them signed it.
    pub request_keys: Vec<PathBuf>,
    /// A request issued longer ago than this is refused as stale: long enough for a
    /// vehicle parked over a long weekend to serve what was asked meanwhile.
    #[serde(with = "units::duration")]
    pub max_request_age: Duration,
    /// Take unsigned requests too: for a test bench only (a WARN at every start).
    pub allow_unsigned: bool,
}

impl Default for FleetConfig {
    fn default() -> Self {
        Self {
            broker: String::new(),
            vehicle: None,
            prefix: recd_fleet::DEFAULT_PREFIX.to_string(),
            ca_file: None,
            cert_file: None,
            key_file: None,
            credentials_file: None,
            keep_alive: Duration::from_secs(30),
            session_expiry: Duration::from_secs(7 * 24 * 3600),
            holdings_period: Duration::from_secs(60),
            request_keys: Vec::new(),
            max_request_age: DEFAULT_MAX_REQUEST_AGE,
            allow_unsigned: false,
        }
    }
}

impl FleetConfig {
    /// Checks what can be checked without the network; the error names the key.
    pub fn validate(&self) -> Result<(), String> {
        let broker = self.broker()?;
        recd_fleet::Topics::new(&self.prefix, self.vehicle.as_deref().unwrap_or("vehicle"))
            .map_err(|e| format!("[fleet]: {e}"))?;
        if self.cert_file.is_some() != self.key_file.is_some() {
            return Err(
                "[fleet] cert_file and key_file go together: a client certificate needs its key"
                    .to_string(),
            );
        }
        if !broker.tls && (self.cert_file.is_some() || self.ca_file.is_some()) {
            return Err(format!(
                "[fleet] broker {:?} is plain MQTT: ca_file, cert_file and key_file need mqtts://",
                self.broker
            ));
        }
        let session = self.session_expiry.as_secs();
        if session == 0 || session > u64::from(u32::MAX) {
            return Err(format!(
                "[fleet] session_expiry {} must be at least 1s and at most {}s (MQTT's limit)",
                humantime::format_duration(self.session_expiry),
                u32::MAX
            ));
        }
        if self.keep_alive.as_secs() == 0 || self.keep_alive.as_secs() > u64::from(u16::MAX) {
            return Err(format!(
                "[fleet] keep_alive {} must be 1s to {}s",
                humantime::format_duration(self.keep_alive),
                u16::MAX
            ));
        }
        if self.holdings_period < Duration::from_secs(1) {
            return Err("[fleet] holdings_period must be at least 1s".to_string());
        }
        if self.max_request_age < Duration::from_secs(1) {
            return Err("[fleet] max_request_age must be at least 1s".to_string());
        }
        self.request_keys()?;
        Ok(())
    }

    /// The keys of `request_keys`, read; the error names the file and what it should hold.
    pub fn request_keys(&self) -> Result<Vec<recd_chain::PublicKey>, String> {
        (self.request_keys.iter())
            .map(|path| {
                recd_chain::PublicKey::load(path).map_err(|e| format!("[fleet] request_keys: {e}"))
            })
            .collect()
    }

    /// The broker `broker` names: `mqtts://host[:port]` or `mqtt://host[:port]`.
    pub fn broker(&self) -> Result<Broker, String> {
        Broker::parse(&self.broker).map_err(|error| match error {
            BrokerError::Credentials => format!(
                "[fleet] broker: {error} (it would reach the log); put them in credentials_file"
            ),
            BrokerError::Shape(why) => format!("[fleet] broker {:?}: {why}", self.broker),
        })
    }

    /// The CA file a TLS link checks the broker with.
    pub fn ca_file(&self) -> &Path {
        self.ca_file.as_deref().unwrap_or(Path::new(SYSTEM_CA_FILE))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(broker: &str) -> FleetConfig {
        FleetConfig {
            broker: broker.to_string(),
            ..FleetConfig::default()
        }
    }

    #[test]
    fn a_refused_broker_is_named_and_credentials_point_to_the_key() {
        assert_eq!(
            config("mqtts://iot.example.com").broker().unwrap().port,
            8883
        );
        let error = config("mqtt://user:secret@x").broker().unwrap_err();
        assert!(
            !error.contains("secret") && error.contains("credentials_file"),
            "{error}"
        );
        for bad in ["http://x", "mqtt://x:99999", "mqtts://x/topic"] {
            let error = config(bad).broker().unwrap_err();
            assert!(error.contains(&format!("{bad:?}")), "{error}");
        }
    }

    #[test]
    fn a_lone_certificate_or_tls_files_on_plain_mqtt_are_refused() {
        let mut lone = config("mqtts://x");
        lone.cert_file = Some("/etc/recd/fleet.crt".into());
        assert!(lone
            .validate()
            .unwrap_err()
            .contains("cert_file and key_file"));
        let mut plain = config("mqtt://x");
        plain.ca_file = Some("/etc/recd/ca.pem".into());
        assert!(plain.validate().unwrap_err().contains("need mqtts://"));
        let mut vehicle = config("mqtt://x");
        vehicle.vehicle = Some("car/3".into());
        assert!(vehicle.validate().unwrap_err().contains("\"car/3\""));
        let mut expiry = config("mqtt://x");
        expiry.session_expiry = Duration::ZERO;
        assert!(expiry.validate().unwrap_err().contains("session_expiry"));
        assert!(config("mqtt://x").validate().is_ok());
    }

    #[test]
    fn a_request_key_that_is_no_public_key_stops_start_up_naming_its_file() {
        let dir = tempfile::tempdir().unwrap();
        let not_a_key = dir.path().join("fleet.pub");
        std::fs::write(&not_a_key, "hello").unwrap();
        let mut fleet = config("mqtts://x");
        fleet.request_keys = vec![not_a_key.clone()];
        let error = fleet.validate().unwrap_err();
        assert!(
            error.contains("[fleet] request_keys")
                && error.contains(&not_a_key.display().to_string()),
            "{error}"
        );
        fleet.request_keys.clear();
        fleet.max_request_age = Duration::ZERO;
        assert!(fleet.validate().unwrap_err().contains("max_request_age"));
    }
}
