//! The MQTT 5 connection's settings, from `[fleet]`: the broker, TLS (the broker checked
//! against `ca_file`, the vehicle's client certificate for mutual TLS), the credentials, a
//! persistent session (clean start off, kept for `session_expiry`) so that requests
//! published while the vehicle is offline reach it when it is back, and the last will
//! that says it is offline.

use rumqttc::v5::mqttbytes::v5::LastWill;
use rumqttc::v5::mqttbytes::QoS;
use rumqttc::v5::MqttOptions;
use rumqttc::{TlsConfiguration, Transport};
use serde::Deserialize;

use crate::config::FleetConfig;

/// How many requests (publishes, acknowledgements) may wait for the connection: a few
/// holdings and presences, so a dead broker holds little memory.
pub const REQUEST_CAPACITY: usize = 16;

/// The `credentials_file`'s content.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Credentials {
    username: String,
    password: String,
}

/// The connection's settings for `config`, with the vehicle's `topics`; the error names
/// the key or file at fault (never a secret's content).
pub fn options(config: &FleetConfig, topics: &recd_fleet::Topics) -> Result<MqttOptions, String> {
    let broker = config.broker()?;
    let mut options = MqttOptions::new(
        format!("recd-{}", topics.vehicle()),
        broker.host.clone(),
        broker.port,
    );
    options
        .set_keep_alive(config.keep_alive)
        .set_clean_start(false)
        .set_session_expiry_interval(Some(config.session_expiry.as_secs() as u32))
        .set_request_channel_capacity(REQUEST_CAPACITY)
        // A request is acknowledged once the catalog holds its id (or it was refused):
        // one that reached a recd that died first is delivered again.
        .set_manual_acks(true)
        .set_last_will(LastWill::new(
            topics.online(),
            super::presence(topics, false),
            QoS::AtLeastOnce,
            true,
            None,
        ));
    if broker.tls {
        // ring is recd's crypto provider for rustls, chosen for the process (the uploader
        // chooses it too). Already chosen (a second start) is as good.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let ca_file = config.ca_file();
        let ca = std::fs::read(ca_file)
            .map_err(|e| format!("[fleet] ca_file {}: {e}", ca_file.display()))?;
        let client_auth = match (&config.cert_file, &config.key_file) {
            (Some(cert), Some(key)) => {
                let cert_pem = std::fs::read(cert)
                    .map_err(|e| format!("[fleet] cert_file {}: {e}", cert.display()))?;
                let (_, key_pem) = recd_secret::SecretFile::new(key, "MQTT client key")
                    .read()
                    .map_err(|e| format!("[fleet] key_file: {e}"))?;
                Some((cert_pem, key_pem.into_bytes()))
            }
            _ => None,
        };
        options.set_transport(Transport::tls_with_config(TlsConfiguration::Simple {
            ca,
            alpn: None,
            client_auth,
        }));
    }
    if let Some(path) = &config.credentials_file {
        let (_, text) = recd_secret::SecretFile::new(path, "MQTT credentials")
            .read()
            .map_err(|e| format!("[fleet] credentials_file: {e}"))?;
        let credentials: Credentials = toml::from_str(&text).map_err(|_| {
            format!(
                "[fleet] credentials_file {}: it must hold username = \"…\" and password = \"…\" and nothing else",
                path.display()
            )
        })?;
        options.set_credentials(credentials.username, credentials.password);
    }
    Ok(options)
}
