//! `rec fleet --broker URL …`: the operator's side of the fleet over MQTT 5 (the contract
//! of `recd_fleet`): the vehicles and what they hold, read from what the broker retains
//! (`vehicles`, `find`), and requests to them with their replies (`pull`, `uploads`,
//! `campaign push`).

pub mod campaign;
pub mod connect;
pub mod find;
pub mod pull;
pub mod replies;
pub mod retained;
pub mod uploads;
pub mod vehicles;

use std::path::PathBuf;

use clap::Args;
use recd_chain::SigningKey;

use connect::{parse_broker, Settings};

/// Where the fleet's broker is and how to talk to it; `--broker` switches `rec fleet`
/// from DDS to MQTT.
#[derive(Debug, Args)]
pub struct BrokerArgs {
    /// The fleet's MQTT 5 broker, mqtts://host[:8883] (TLS) or mqtt://host[:1883]: with it,
    /// rec fleet speaks to the vehicles over MQTT (vehicles, find, pull, uploads,
    /// campaign) instead
    /// of to recorders over DDS (status, trigger).
    #[arg(long, value_name = "URL", global = true)]
    pub broker: Option<String>,
    /// The prefix of the fleet's topics, as the vehicles' [fleet] prefix [default: recd].
    #[arg(long, value_name = "PREFIX", global = true)]
    pub prefix: Option<String>,
    /// The fleet's Ed25519 private key (PKCS#8 PEM, mode 0600) to sign requests with; the
    /// vehicles check them with its public key ([fleet] request_keys). Without it,
    /// requests go unsigned, which vehicles take only with allow_unsigned.
    #[arg(long, value_name = "FILE", global = true)]
    pub key: Option<PathBuf>,
    /// The CA certificates (PEM) to check the broker's certificate with (mqtts:// only)
    /// [default: /etc/ssl/certs/ca-certificates.crt].
    #[arg(long, value_name = "FILE", global = true)]
    pub ca: Option<PathBuf>,
    /// A client certificate (PEM) for brokers that require one (mutual TLS); with
    /// --cert-key.
    #[arg(long, value_name = "FILE", global = true)]
    pub cert: Option<PathBuf>,
    /// The client certificate's private key (PEM; others must not read it).
    #[arg(long, value_name = "FILE", global = true)]
    pub cert_key: Option<PathBuf>,
    /// A TOML file with username = "…" and password = "…" for the broker (as recd's
    /// [fleet] credentials_file; others must not read it).
    #[arg(long, value_name = "FILE", global = true)]
    pub credentials: Option<PathBuf>,
}

impl BrokerArgs {
    /// Whether `--broker` was given.
    pub fn given(&self) -> bool {
        self.broker.is_some()
    }

    /// The options that only the MQTT side takes, by name, when given.
    fn mqtt_only(&self) -> Vec<&'static str> {
        [
            ("--prefix", self.prefix.is_some()),
            ("--key", self.key.is_some()),
            ("--ca", self.ca.is_some()),
            ("--cert", self.cert.is_some()),
            ("--cert-key", self.cert_key.is_some()),
            ("--credentials", self.credentials.is_some()),
        ]
        .into_iter()
        .filter_map(|(name, given)| given.then_some(name))
        .collect()
    }

    /// Checks the options together: the MQTT ones only with `--broker`, a URL that reads,
    /// a usable prefix, TLS files only for `mqtts://`, a certificate only with its key.
    pub fn check(&self) -> Result<(), String> {
        let Some(url) = &self.broker else {
            let given = self.mqtt_only();
            if given.is_empty() {
                return Ok(());
            }
            let need = if given.len() == 1 { "needs" } else { "need" };
            return Err(format!(
                "{} {need} --broker URL (the fleet's MQTT broker)",
                given.join(", ")
            ));
        };
        let broker = parse_broker(url)?;
        recd_fleet::Topics::new(self.prefix(), "any").map_err(|e| format!("--prefix: {e}"))?;
        if self.cert.is_some() != self.cert_key.is_some() {
            return Err(
                "--cert and --cert-key go together (a client certificate and its key)".into(),
            );
        }
        if !broker.tls && (self.ca.is_some() || self.cert.is_some()) {
            return Err(format!(
                "--ca, --cert and --cert-key are for TLS: --broker {url} is plain MQTT (mqtts:// is TLS)"
            ));
        }
        Ok(())
    }

    /// The topic prefix.
    pub fn prefix(&self) -> &str {
        self.prefix.as_deref().unwrap_or(recd_fleet::DEFAULT_PREFIX)
    }

    /// How to connect (after [`BrokerArgs::check`]).
    pub fn settings(&self) -> Result<Settings, String> {
        let url = self.broker.as_deref().ok_or("no --broker")?;
        Ok(Settings {
            broker: parse_broker(url)?,
            ca: self.ca.clone(),
            client_cert: self.cert.clone().zip(self.cert_key.clone()),
            credentials: self.credentials.clone(),
        })
    }

    /// The fleet's signing key from `--key`; without one, says once on stderr that
    /// requests go unsigned.
    pub fn signing_key(&self) -> Result<Option<SigningKey>, String> {
        match &self.key {
            Some(path) => SigningKey::load(path)
                .map(Some)
                .map_err(|e| format!("--key: {e}")),
            None => {
                eprintln!("rec: no --key: the request goes unsigned (vehicles take it only with [fleet] allow_unsigned)");
                Ok(None)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;

    #[derive(Debug, Parser)]
    struct Cli {
        #[command(flatten)]
        broker: BrokerArgs,
    }

    fn check(args: &[&str]) -> Result<(), String> {
        Cli::try_parse_from(std::iter::once("fleet").chain(args.iter().copied()))
            .map_err(|e| e.to_string())?
            .broker
            .check()
    }

    #[test]
    fn mqtt_options_need_a_broker_and_tls_files_need_tls() {
        assert_eq!(check(&[]), Ok(()));
        assert_eq!(check(&["--broker", "mqtt://localhost"]), Ok(()));
        let tls = [
            "--broker",
            "mqtts://broker.example.com",
            "--ca",
            "ca.pem",
            "--cert",
            "c.pem",
            "--cert-key",
            "c.key",
            "--prefix",
            "fleet/recd",
        ];
        assert_eq!(check(&tls), Ok(()));
        let refused = check(&["--ca", "ca.pem", "--key", "k.pem"]).unwrap_err();
        assert_eq!(
            refused,
            "--key, --ca need --broker URL (the fleet's MQTT broker)"
        );
        assert!(check(&["--broker", "mqtts://x", "--cert", "c.pem"])
            .unwrap_err()
            .contains("go together"));
        assert!(check(&["--broker", "mqtt://x", "--ca", "ca.pem"])
            .unwrap_err()
            .contains("are for TLS"));
        assert!(check(&["--broker", "mqtt://x", "--prefix", "a/+"])
            .unwrap_err()
            .starts_with("--prefix: "));
        assert!(check(&["--broker", "tcp://x"])
            .unwrap_err()
            .contains("mqtts://"));
    }

    #[test]
    fn settings_carry_the_broker_and_its_files() {
        let cli = Cli::try_parse_from([
            "fleet",
            "--broker",
            "mqtts://127.0.0.1:8884",
            "--cert",
            "c.pem",
            "--cert-key",
            "c.key",
        ])
        .unwrap();
        let settings = cli.broker.settings().unwrap();
        assert_eq!(settings.broker.port, 8884);
        assert!(settings.broker.tls && settings.ca.is_none());
        assert_eq!(
            settings.client_cert,
            Some((PathBuf::from("c.pem"), PathBuf::from("c.key")))
        );
        assert_eq!(cli.broker.prefix(), "recd");
    }
}
