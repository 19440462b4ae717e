//! Where the broker is: `mqtts://host[:8883]` (TLS) or `mqtt://host[:1883]`, read the same
//! way by recd's `[fleet] broker` and the operator's `rec fleet --broker`.

/// The plain MQTT port, for `mqtt://host`.
pub const MQTT_PORT: u16 = 1883;
/// The MQTT over TLS port, for `mqtts://host`.
pub const MQTTS_PORT: u16 = 8883;

/// A broker's address.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Broker {
    /// Its host name or address (an IPv6 address without brackets).
    pub host: String,
    /// Its port.
    pub port: u16,
    /// Over TLS (`mqtts://`).
    pub tls: bool,
}

/// Why a URL names no broker; the caller names the setting and, for credentials, where
/// they go instead.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BrokerError {
    /// Not a URL, another scheme, no host, port 0, or more than a host and a port.
    #[error("{0}")]
    Shape(String),
    /// A user or password in the URL (never echoed: it holds a secret).
    #[error("a user or password in the URL is refused")]
    Credentials,
}

impl Broker {
    /// The broker `url` names.
    pub fn parse(url: &str) -> Result<Self, BrokerError> {
        let url = url::Url::parse(url).map_err(|e| BrokerError::Shape(e.to_string()))?;
        let tls = match url.scheme() {
            "mqtts" => true,
            "mqtt" => false,
            _ => {
                return Err(BrokerError::Shape(
                    "give mqtts://host:8883 (TLS) or mqtt://host:1883 (plain)".into(),
                ))
            }
        };
        if !url.username().is_empty() || url.password().is_some() {
            return Err(BrokerError::Credentials);
        }
        let host = url.host_str().unwrap_or_default();
        let port = url
            .port()
            .unwrap_or(if tls { MQTTS_PORT } else { MQTT_PORT });
        let extra =
            !matches!(url.path(), "" | "/") || url.query().is_some() || url.fragment().is_some();
        if host.is_empty() || port == 0 || extra {
            return Err(BrokerError::Shape(
                "no host, port 0, or more than a host and a port".into(),
            ));
        }
        Ok(Self {
            host: host
                .trim_start_matches('[')
                .trim_end_matches(']')
                .to_string(),
            port,
            tls,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn brokers_take_their_scheme_s_port_unless_given_one() {
        let broker = |url: &str| Broker::parse(url).unwrap();
        assert_eq!(
            broker("mqtts://iot.example.com"),
            Broker {
                host: "iot.example.com".into(),
                port: MQTTS_PORT,
                tls: true
            }
        );
        assert_eq!(broker("mqtt://10.0.0.5").port, MQTT_PORT);
        assert_eq!(broker("mqtt://127.0.0.1:18830/").port, 18830);
        assert_eq!(broker("mqtts://[::1]:8884").host, "::1");
        assert_eq!(broker("mqtt://[::1]").port, MQTT_PORT);
    }

    #[test]
    fn credentials_and_anything_but_a_host_and_a_port_are_refused() {
        assert_eq!(
            Broker::parse("mqtt://user:secret@x"),
            Err(BrokerError::Credentials)
        );
        for bad in [
            "http://x",
            "mqtt://",
            "mqtt://x:0",
            "mqtt://x:99999",
            "mqtts://x/topic",
            "x:1883",
        ] {
            assert!(
                matches!(Broker::parse(bad), Err(BrokerError::Shape(_))),
                "{bad}"
            );
        }
    }
}
