//! The operator's MQTT 5 connection to the fleet's broker: the URL read, TLS set up (the
//! broker checked against a CA, an optional client certificate for mutual TLS), the
//! credentials file read as recd's `[fleet] credentials_file`, a random client id with a
//! clean start (the operator needs no session kept), and the few packets a command needs:
//! subscribe, publish, take what arrives.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use recd_fleet::{Broker, BrokerError};
use rumqttc::v5::mqttbytes::v5::{
    Filter, Packet, PubAckReason, Publish, PublishProperties, SubscribeReasonCode,
};
use rumqttc::v5::mqttbytes::QoS;
use rumqttc::v5::{Client, ConnectionError, Event, MqttOptions, RecvTimeoutError};
use rumqttc::{TlsConfiguration, Transport};
use serde::Deserialize;

/// The CA certificates a TLS connection checks the broker with unless `--ca` names others.
pub const SYSTEM_CA_FILE: &str = "/etc/ssl/certs/ca-certificates.crt";
/// How long connecting, subscribing and publishing may take.
const PATIENCE: Duration = Duration::from_secs(15);
/// How long one wait for the connection's next event lasts.
const TICK: Duration = Duration::from_millis(100);

/// Reads `--broker URL`: `mqtts://host[:8883]` or `mqtt://host[:1883]`, nothing more (a
/// user or password in the URL is refused, unechoed: they go in `--credentials`).
pub fn parse_broker(text: &str) -> Result<Broker, String> {
    Broker::parse(text).map_err(|error| match error {
        BrokerError::Credentials => format!("--broker: {error}; put them in --credentials FILE"),
        BrokerError::Shape(why) => format!("--broker {text:?}: {why}"),
    })
}

/// How to reach and authenticate to the broker, as the options gave it.
#[derive(Debug, Clone)]
pub struct Settings {
    /// The broker.
    pub broker: Broker,
    /// The CA file (TLS only; default [`SYSTEM_CA_FILE`]).
    pub ca: Option<PathBuf>,
    /// The client certificate and its key, for mutual TLS.
    pub client_cert: Option<(PathBuf, PathBuf)>,
    /// The credentials file.
    pub credentials: Option<PathBuf>,
}

/// The credentials file's content, as recd's `credentials_file`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Credentials {
    username: String,
    password: String,
}

/// A random lowercase hex token of 16 digits.
pub fn token() -> String {
    format!("{:016x}", fastrand::u64(..))
}

/// The connection options for `settings`; the error names the option or file at fault,
/// never a secret's content.
pub fn options(settings: &Settings) -> Result<MqttOptions, String> {
    let broker = &settings.broker;
    let mut options = MqttOptions::new(format!("rec-{}", token()), &broker.host, broker.port);
    options
        .set_keep_alive(Duration::from_secs(30))
        .set_clean_start(true)
        .set_connection_timeout(PATIENCE.as_secs());
    if broker.tls {
        // ring is recd's crypto provider for rustls (as in recd's own fleet link).
        let _ = rustls::crypto::ring::default_provider().install_default();
        let ca_file = settings.ca.as_deref().unwrap_or(Path::new(SYSTEM_CA_FILE));
        let ca = std::fs::read(ca_file).map_err(|e| format!("--ca {}: {e}", ca_file.display()))?;
        let client_auth = match &settings.client_cert {
            Some((cert, key)) => {
                let cert_pem =
                    std::fs::read(cert).map_err(|e| format!("--cert {}: {e}", cert.display()))?;
                let (_, key_pem) = recd_secret::SecretFile::new(key, "MQTT client key")
                    .read()
                    .map_err(|e| format!("--cert-key: {e}"))?;
                Some((cert_pem, key_pem.into_bytes()))
            }
            None => None,
        };
        options.set_transport(Transport::tls_with_config(TlsConfiguration::Simple {
            ca,
            alpn: None,
            client_auth,
        }));
    }
    if let Some(path) = &settings.credentials {
        let (_, text) = recd_secret::SecretFile::new(path, "MQTT credentials")
            .read()
            .map_err(|e| format!("--credentials: {e}"))?;
        let credentials: Credentials = toml::from_str(&text).map_err(|_| {
            format!(
                "--credentials {}: it must hold username = \"…\" and password = \"…\" and nothing else",
                path.display()
            )
        })?;
        options.set_credentials(credentials.username, credentials.password);
    }
    Ok(options)
}

/// A connection to the broker, driven by whoever waits on it.
pub struct Link {
    client: Client,
    connection: rumqttc::v5::Connection,
    broker: String,
    /// Messages that arrived while waiting for something else.
    early: Vec<Publish>,
}

impl Link {
    /// Connects with `settings`, waiting (at most 15 s) for the broker to accept.
    pub fn connect(settings: &Settings) -> Result<Self, String> {
        let options = options(settings)?;
        let (client, connection) = Client::new(options, 64);
        let scheme = if settings.broker.tls { "mqtts" } else { "mqtt" };
        let mut link = Self {
            client,
            connection,
            broker: format!(
                "{scheme}://{}:{}",
                settings.broker.host, settings.broker.port
            ),
            early: Vec::new(),
        };
        link.until("connect", |packet| matches!(packet, Packet::ConnAck(_)))?;
        Ok(link)
    }

    /// Subscribes to `filters` at QoS 1 and waits until the broker confirms; a filter it
    /// refuses (its access control, say) is an error naming it.
    pub fn subscribe(&mut self, filters: &[String]) -> Result<(), String> {
        let asked: Vec<Filter> = (filters.iter())
            .map(|filter| Filter::new(filter.clone(), QoS::AtLeastOnce))
            .collect();
        self.client
            .subscribe_many(asked)
            .map_err(|e| format!("cannot subscribe: {e}"))?;
        let Packet::SubAck(ack) =
            self.until("subscribe", |packet| matches!(packet, Packet::SubAck(_)))?
        else {
            unreachable!("until returns the packet asked for")
        };
        for (filter, code) in filters.iter().zip(&ack.return_codes) {
            if !matches!(code, SubscribeReasonCode::Success(_)) {
                return Err(format!(
                    "the broker {} refused the subscription to {filter}: {code:?}",
                    self.broker
                ));
            }
        }
        Ok(())
    }

    /// Publishes `payload` on `topic` at QoS 1 with `properties`, not retained, and waits
    /// until the broker has it; `false` when the broker says no one subscribes to it.
    pub fn publish(
        &mut self,
        topic: &str,
        payload: Vec<u8>,
        properties: PublishProperties,
    ) -> Result<bool, String> {
        self.client
            .publish_with_properties(topic, QoS::AtLeastOnce, false, payload, properties)
            .map_err(|e| format!("cannot publish on {topic}: {e}"))?;
        let Packet::PubAck(ack) =
            self.until("publish", |packet| matches!(packet, Packet::PubAck(_)))?
        else {
            unreachable!("until returns the packet asked for")
        };
        match ack.reason {
            PubAckReason::Success => Ok(true),
            PubAckReason::NoMatchingSubscribers => Ok(false),
            refused => Err(format!(
                "the broker {} refused the request on {topic}: {refused:?}",
                self.broker
            )),
        }
    }

    /// The next message that arrives before `deadline`; `None` once it has passed.
    pub fn next_message(&mut self, deadline: Instant) -> Result<Option<Publish>, String> {
        if !self.early.is_empty() {
            return Ok(Some(self.early.remove(0)));
        }
        while Instant::now() < deadline {
            let wait = deadline.saturating_duration_since(Instant::now()).min(TICK);
            if let Some(Packet::Publish(publish)) = self.next_packet(wait)? {
                return Ok(Some(publish));
            }
        }
        Ok(None)
    }

    /// Disconnects cleanly (best effort: the command is done either way).
    pub fn close(mut self) {
        if self.client.disconnect().is_ok() {
            let deadline = Instant::now() + Duration::from_secs(1);
            while Instant::now() < deadline {
                match self.connection.recv_timeout(TICK) {
                    Ok(Ok(Event::Outgoing(rumqttc::Outgoing::Disconnect))) | Ok(Err(_)) => break,
                    Err(RecvTimeoutError::Disconnected) => break,
                    _ => {}
                }
            }
        }
    }

    /// Drives the connection until `done` takes an incoming packet (returned), within
    /// 15 s; messages that arrive meanwhile are kept for [`Link::next_message`].
    fn until(&mut self, what: &str, done: impl Fn(&Packet) -> bool) -> Result<Packet, String> {
        let deadline = Instant::now() + PATIENCE;
        while Instant::now() < deadline {
            match self.next_packet(TICK)? {
                Some(Packet::Publish(publish)) => self.early.push(publish),
                Some(packet) if done(&packet) => return Ok(packet),
                _ => {}
            }
        }
        Err(format!(
            "the broker {} did not answer ({what}) within {}",
            self.broker,
            humantime::format_duration(PATIENCE)
        ))
    }

    /// The next incoming packet within `wait`, if any; an error ends the command.
    fn next_packet(&mut self, wait: Duration) -> Result<Option<Packet>, String> {
        match self.connection.recv_timeout(wait) {
            Ok(Ok(Event::Incoming(packet))) => Ok(Some(packet)),
            Ok(Ok(Event::Outgoing(_))) | Err(RecvTimeoutError::Timeout) => Ok(None),
            Ok(Err(error)) => Err(self.failed(&error)),
            Err(RecvTimeoutError::Disconnected) => {
                Err(format!("the connection to {} closed", self.broker))
            }
        }
    }

    /// What went wrong with the connection, for the operator.
    fn failed(&self, error: &ConnectionError) -> String {
        let hint = match error {
            ConnectionError::ConnectionRefused(_) => {
                " (check --credentials or the client certificate)"
            }
            ConnectionError::Tls(_) => " (check --ca, --cert and --cert-key)",
            _ => "",
        };
        format!("the broker {}: {error}{hint}", self.broker)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_refused_broker_is_named_and_credentials_point_to_the_option() {
        assert_eq!(parse_broker("mqtt://10.0.0.5").unwrap().port, 1883);
        let error = parse_broker("mqtt://user:secret@x").unwrap_err();
        assert!(
            !error.contains("secret") && error.contains("--credentials"),
            "{error}"
        );
        for bad in ["http://x", "mqtt://x:0", "x:1883"] {
            let error = parse_broker(bad).unwrap_err();
            assert!(error.contains(&format!("{bad:?}")), "{error}");
        }
    }

    #[test]
    fn tokens_are_16_hex_digits_and_differ() {
        let (a, b) = (token(), token());
        assert_eq!(a.len(), 16);
        assert!(a.chars().all(|c| c.is_ascii_hexdigit()));
        assert_ne!(a, b);
    }
}
