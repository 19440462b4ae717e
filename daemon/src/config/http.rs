//! `[http]`: the HTTP listener (metrics, probes, status and the web page), off by default;
//! and `[[preset]]`: named ways to start a session from the page.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use bytesize::ByteSize;
use recd_control::{FinishMode, StartRequest};
use serde::{Deserialize, Serialize};

use super::units;

/// The `[http]` table of recd.toml.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct HttpConfig {
    /// The address to listen on, e.g. "127.0.0.1:9464"; empty (the default) is off. An
    /// address other than loopback needs `token_file`.
    pub listen: String,
    /// A file holding the bearer token (at least 16 characters; not readable by others),
    /// read again when it changes. Needed for control, and for reading off loopback.
    pub token_file: Option<PathBuf>,
    /// Let the page's buttons and the control endpoints start, stop, pause, mark and
    /// trigger sessions (with the token).
    pub allow_control: bool,
    /// Host names clients may reach the listener by, besides its addresses (the `Host`
    /// header is checked against DNS rebinding).
    pub allowed_hosts: Vec<String>,
    /// Topic series per metric: topics beyond it (over all sessions, first come first
    /// served) are summed into `topic="_other"`.
    pub max_topics: usize,
}

impl Default for HttpConfig {
    fn default() -> Self {
        Self {
            listen: String::new(),
            token_file: None,
            allow_control: false,
            allowed_hosts: Vec::new(),
            max_topics: 500,
        }
    }
}

impl HttpConfig {
    /// The listener's settings; `None` when it is off.
    pub fn settings(&self) -> Result<Option<recd_http::HttpSettings>, String> {
        if self.listen.trim().is_empty() {
            return Ok(None);
        }
        let listen: SocketAddr = self.listen.trim().parse().map_err(|_| {
            format!(
                "[http] listen = {:?} is not an address and port (e.g. \"127.0.0.1:9464\")",
                self.listen
            )
        })?;
        let settings = recd_http::HttpSettings {
            listen,
            token_file: self.token_file.clone(),
            allow_control: self.allow_control,
            allowed_hosts: self.allowed_hosts.clone(),
            max_topics: self.max_topics,
        };
        settings.check().map_err(|error| error.to_string())?;
        Ok(Some(settings))
    }
}

/// A `[[preset]]`: a named way to start a session from the web page.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct PresetConfig {
    /// Its name: the button's label and the session's name.
    pub name: String,
    /// Glob patterns of topics to record; empty means all.
    pub topics: Vec<String>,
    /// Glob patterns of topics never to record.
    pub exclude: Vec<String>,
    /// What is expected of the topics, as `rec start --expect` writes it.
    pub expect: Vec<String>,
    /// Glob patterns of message types to record, as `rec start --topic-type`.
    pub topic_types: Vec<String>,
    /// Glob patterns of message types never to record.
    pub exclude_topic_types: Vec<String>,
    /// Rate limits, `GLOB=HZ`, as `rec start --max-rate`.
    pub max_rate: Vec<String>,
    /// Downsampling, `GLOB=N`, as `rec start --downsample`.
    pub downsample: Vec<String>,
    /// Glob patterns of ROS 2 services to record, as `rec start --services`.
    pub services: Vec<String>,
    /// Record every ROS 2 service, as `rec start --all-services`.
    pub all_services: bool,
    /// Glob patterns of ROS 2 services never to record.
    pub exclude_services: Vec<String>,
    /// Glob patterns of ROS 2 actions to record, as `rec start --actions`.
    pub actions: Vec<String>,
    /// Record every ROS 2 action, as `rec start --all-actions`.
    pub all_actions: bool,
    /// Glob patterns of ROS 2 actions never to record.
    pub exclude_actions: Vec<String>,
    /// Start a new file once one holds this much.
    #[serde(with = "units::option_size")]
    pub max_file_size: Option<ByteSize>,
    /// Start a new file after this long.
    #[serde(with = "units::option_duration")]
    pub max_duration: Option<Duration>,
    /// Stop the session by itself after this long.
    #[serde(with = "units::option_duration")]
    pub duration: Option<Duration>,
    /// Keep this long of messages in memory and write only around triggers.
    #[serde(with = "units::option_duration")]
    pub pre_trigger: Option<Duration>,
    /// The pre-trigger buffer's memory.
    #[serde(with = "units::option_size")]
    pub buffer_size: Option<ByteSize>,
    /// A trigger keeps this long before it; none keeps the whole buffer.
    #[serde(with = "units::option_duration")]
    pub before: Option<Duration>,
    /// A trigger writes this long after it.
    #[serde(with = "units::duration")]
    pub after: Duration,
    /// Record DDS / ROS 2 topics of this domain too.
    pub dds_domain: Option<u16>,
    /// Leave iceoryx2 shared memory out.
    pub no_iceoryx2: bool,
    /// Upload the session's files (true) or not (false); none follows `[upload]`.
    pub upload: Option<bool>,
    /// What is done to its files once closed; none follows `[recording] finish`.
    pub finish: Option<FinishMode>,
    /// Entries of the `user/<file>` Metadata record of every file.
    pub metadata: BTreeMap<String, String>,
}

impl PresetConfig {
    /// Checks what TOML cannot: a name, and expectations that parse.
    pub fn validate(&self) -> Result<(), String> {
        let name = &self.name;
        if name.trim().is_empty() || name.contains('/') || name.starts_with('.') {
            return Err(format!(
                "[[preset]] name {name:?} cannot name a session (empty, a '/', or a leading '.')"
            ));
        }
        for rule in &self.expect {
            recd_health::Expectation::parse(rule)
                .map_err(|error| format!("[[preset]] {name}: expect {rule:?}: {error}"))?;
        }
        for rule in &self.max_rate {
            recd_engine::ThrottleRule::max_rate(rule)
                .map_err(|error| format!("[[preset]] {name}: max_rate {rule:?}: {error}"))?;
        }
        for rule in &self.downsample {
            recd_engine::ThrottleRule::downsample(rule)
                .map_err(|error| format!("[[preset]] {name}: downsample {rule:?}: {error}"))?;
        }
        if self.pre_trigger.is_none() && self.buffer_size.is_some() {
            return Err(format!("[[preset]] {name}: buffer_size needs pre_trigger"));
        }
        for (side, value) in [("before", self.before), ("after", Some(self.after))] {
            if let Some(value) = value {
                recd_storage::window::checked_side(side, value)
                    .map_err(|refused| format!("[[preset]] {name}: {refused}"))?;
            }
        }
        Ok(())
    }

    /// The preset as the listener uses it.
    pub fn preset(&self) -> recd_http::Preset {
        let millis = recd_storage::window::millis;
        recd_http::Preset {
            name: self.name.clone(),
            start: StartRequest {
                name: Some(self.name.clone()),
                topics: self.topics.clone(),
                exclude: self.exclude.clone(),
                expect: self.expect.clone(),
                topic_types: self.topic_types.clone(),
                exclude_topic_types: self.exclude_topic_types.clone(),
                max_rate: self.max_rate.clone(),
                downsample: self.downsample.clone(),
                services: self.services.clone(),
                all_services: self.all_services,
                exclude_services: self.exclude_services.clone(),
                actions: self.actions.clone(),
                all_actions: self.all_actions,
                exclude_actions: self.exclude_actions.clone(),
                max_file_size: self.max_file_size.map(|size| size.as_u64()),
                max_duration_ms: self.max_duration.map(millis),
                duration_ms: self.duration.map(millis),
                pre_trigger_ms: self.pre_trigger.map(millis),
                buffer_size: self.buffer_size.map(|size| size.as_u64()),
                dds_domain: self.dds_domain,
                no_iceoryx2: self.no_iceoryx2,
                upload: self.upload,
                finish: self.finish,
                metadata: self.metadata.clone(),
                ..StartRequest::default()
            },
            trigger_before_ms: self.before.map(millis),
            trigger_after_ms: millis(self.after),
        }
    }
}

/// Checks the presets together: each valid, and no name twice.
pub fn validate_presets(presets: &[PresetConfig]) -> Result<(), String> {
    let mut seen = std::collections::HashSet::new();
    for preset in presets {
        preset.validate()?;
        if !seen.insert(preset.name.as_str()) {
            return Err(format!("[[preset]] {:?} is named twice", preset.name));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::DaemonConfig;

    #[test]
    fn off_by_default_and_an_open_address_needs_a_token() {
        let config = DaemonConfig::default();
        assert_eq!(config.http.settings(), Ok(None));
        let config = DaemonConfig::parse("[http]\nlisten = \"0.0.0.0:9464\"\n").unwrap_err();
        assert!(config.contains("token_file"), "{config}");
        let error = DaemonConfig::parse("[http]\nlisten = \"localhost\"\n").unwrap_err();
        assert!(error.contains("not an address and port"), "{error}");
        let error = DaemonConfig::parse("[http]\nlisten = \"127.0.0.1:1\"\nallow_control = true\n")
            .unwrap_err();
        assert!(error.contains("needs token_file"), "{error}");
        let config = DaemonConfig::parse(
            "[http]\nlisten = \"0.0.0.0:9464\"\ntoken_file = \"/etc/recd/http-token\"\n",
        )
        .unwrap();
        assert!(config.http.settings().unwrap().unwrap().reads_need_token());
    }

    #[test]
    fn presets_become_start_requests_and_trigger_windows() {
        let config = DaemonConfig::parse(
            "[[preset]]\nname = \"drive\"\ntopics = [\"camera/*\"]\nexpect = [\"camera/*:25hz\"]\npre_trigger = \"30s\"\nbefore = \"10s\"\nafter = \"5s\"\n",
        )
        .unwrap();
        let preset = config.preset[0].preset();
        assert_eq!(preset.start.name.as_deref(), Some("drive"));
        assert_eq!(preset.start.topics, ["camera/*"]);
        assert_eq!(preset.start.pre_trigger_ms, Some(30_000));
        assert_eq!(preset.trigger_before_ms, Some(10_000));
        assert_eq!(preset.trigger_after_ms, 5_000);
        assert_eq!(DaemonConfig::parse(&config.to_toml()).unwrap(), config);
        let error = DaemonConfig::parse("[[preset]]\nname = \"a\"\n[[preset]]\nname = \"a\"\n")
            .unwrap_err();
        assert!(error.contains("named twice"), "{error}");
        let error =
            DaemonConfig::parse("[[preset]]\nname = \"a\"\nexpect = [\"x:fast\"]\n").unwrap_err();
        assert!(error.contains("expect \"x:fast\""), "{error}");
        assert!(DaemonConfig::parse("[[preset]]\ntopics = [\"a\"]\n").is_err());
    }
}
