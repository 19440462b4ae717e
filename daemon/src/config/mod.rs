//! recd's configuration: a TOML file whose every key has a built-in default, overridden by
//! command-line flags. `recording` maps a session's start request onto these settings.

mod encryption;
mod fleet;
mod http;
mod incidents;
mod recording;
mod remote;
mod signing;
mod units;
mod upload;
mod zenoh;

pub use encryption::EncryptionConfig;
pub use fleet::FleetConfig;
pub use http::{HttpConfig, PresetConfig};
pub use incidents::IncidentsConfig;
pub use remote::RemoteControlConfig;
pub use signing::SigningConfig;
pub use upload::{UploadConfig, DEFAULT_MAX_DELAY};
pub use zenoh::ZenohSection;

use std::path::{Path, PathBuf};
use std::time::Duration;

use bytesize::ByteSize;
use recd_control::FinishMode;
use recd_engine::{IoMode, ThrottleRule};
use recd_health::Expectation;
use serde::{Deserialize, Serialize};

/// Where the configuration file is looked for when `--config` is not given.
pub const DEFAULT_CONFIG: &str = "/etc/recd/recd.toml";

/// The daemon's settings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct DaemonConfig {
    /// The control socket `rec` connects to.
    pub socket: PathBuf,
    /// Recordings go to `<data_dir>/<session name>/`.
    pub data_dir: PathBuf,
    /// The catalog database lives here.
    pub state_dir: PathBuf,
    /// How long a stop (of one session, or of all at SIGTERM) may take before recd gives
    /// up waiting for it.
    #[serde(with = "units::duration")]
    pub stop_timeout: Duration,
    /// At start-up, reindex in the background the files a crashed run left open.
    pub reindex_after_crash: bool,
    /// Sessions that may record at once.
    pub max_sessions: usize,
    /// Free space to leave on a session's file system (e.g. "1GiB"; "0" turns the guard
    /// off): below it the session finishes its file, drops (and counts) what arrives, and
    /// continues in a new file once there is an eighth more than this free again.
    #[serde(with = "units::size")]
    pub min_free_space: ByteSize,
    /// The most the recordings may take on each file system under the data directory
    /// (e.g. "200GiB"); beyond it the oldest finished files are deleted. None by default.
    #[serde(with = "units::option_size")]
    pub max_total_size: Option<ByteSize>,
    /// Defaults for every session; `rec start` flags override some of them.
    pub recording: SessionDefaults,
    /// What incidents (`rec trigger`, the fleet, the page) keep and for how long.
    pub incidents: IncidentsConfig,
    /// Upload finished files to an S3-compatible bucket; off when absent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub upload: Option<UploadConfig>,
    /// Seal every file to the fleet's public keys (`….mcap.age`); off when absent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub encryption: Option<EncryptionConfig>,
    /// The fleet's cloud reaches the vehicle through an MQTT broker; off when absent.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fleet: Option<FleetConfig>,
    /// Commands and status over DDS; off by default.
    pub remote_control: RemoteControlConfig,
    /// What is expected of the topics (`[[expect]]`, matched in order by topic glob, after
    /// a session's own `rec start --expect` rules); topics no rule matches learn their
    /// expectation from their own first samples.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub expect: Vec<Expectation>,
    /// Rate limits and downsampling per topic glob (`[[topic]]` with `topic`,
    /// `max_rate`, `downsample`), matched in order after a session's own `rec start
    /// --max-rate` / `--downsample` rules.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub topic: Vec<ThrottleRule>,
    /// The HTTP listener (metrics, probes, status, the web page); off by default.
    pub http: HttpConfig,
    /// Named ways to start a session from the web page.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub preset: Vec<PresetConfig>,
    /// Incidents that fire by themselves (`[[rule]]`): on a message's content (a CEL
    /// expression over a topic's messages) or on a topic's health.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub rule: Vec<recd_rules::RuleConfig>,
    /// Tamper evidence: each closed file enters its session's hash chain, signed with
    /// this key; off while `key_file` is not set.
    pub signing: SigningConfig,
    /// ROS 2 over Zenoh (rmw_zenoh): the domain every session records, and how recd
    /// joins the Zenoh network.
    pub zenoh: ZenohSection,
}

/// Recording settings every session starts from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SessionDefaults {
    /// Start a new file once one holds this much (e.g. "4GiB"); none by default.
    #[serde(with = "units::option_size")]
    pub max_file_size: Option<ByteSize>,
    /// Start a new file after this long (e.g. "10min"); none by default.
    #[serde(with = "units::option_duration")]
    pub max_duration: Option<Duration>,
    /// Delete a session's files whose newest message is older than this (e.g. "1h"),
    /// unless an incident pins them, so that "the last hour" is kept whatever its size;
    /// none by default (`rec start --max-age` sets it per session).
    #[serde(with = "units::option_duration")]
    pub max_age: Option<Duration>,
    /// Keep a CRC-32 of each file's data section.
    pub crc: bool,
    /// How files are written: "auto" (direct I/O where the data directory's file system
    /// accepts O_DIRECT, buffered otherwise), "direct" (O_DIRECT or fail) or "buffered"
    /// (through the page cache).
    pub io_mode: IoMode,
    /// Payloads this large or larger are written straight from shared memory.
    #[serde(with = "units::size")]
    pub zero_copy_threshold: ByteSize,
    /// fdatasync at most this long after the last one; none leaves it to file close.
    #[serde(with = "units::option_duration")]
    pub sync_period: Option<Duration>,
    /// How often the list of iceoryx2 services is checked for new and vanished topics.
    #[serde(with = "units::duration")]
    pub discovery_interval: Duration,
    /// Shortest time between two polls of a subscriber without an event service.
    #[serde(with = "units::duration")]
    pub min_poll_interval: Duration,
    /// Longest time between two polls of such a subscriber: bounds how far a sample's
    /// log_time lags its publication.
    #[serde(with = "units::duration")]
    pub max_poll_interval: Duration,
    /// Real-time priority (SCHED_FIFO, 1-99) of the receive threads, so that a busy
    /// machine cannot make them late; 0 for none (a nice boost only). Needs CAP_SYS_NICE
    /// or LimitRTPRIO (the systemd unit grants both); without, recd warns once and
    /// `rec status` says so.
    pub receive_priority: u8,
    /// The iceoryx2 file prefix (`global.prefix`) of the domain to record; none is
    /// iceoryx2's default.
    pub iceoryx2_prefix: Option<String>,
    /// Messages in flight between a session's receive and writer threads.
    pub ring_items: usize,
    /// Bytes of small (copied) messages in flight.
    #[serde(with = "units::size")]
    pub ring_copy_bytes: ByteSize,
    /// Bytes of large messages in flight, held as shared-memory samples.
    #[serde(with = "units::size")]
    pub ring_loaned_bytes: ByteSize,
    /// Recorder memory, per session, for large samples the writer has not reached when
    /// their iceoryx2 loan is needed for the next sample: they are copied here and
    /// released, so the publisher's queue never overflows while the writer is behind;
    /// when full, such samples are dropped and counted. Allocated, faulted in and locked
    /// in memory (LimitMEMLOCK) when a session starts.
    #[serde(with = "units::size")]
    pub spill_bytes: ByteSize,
    /// Record iceoryx2 shared-memory services (`rec start --no-iceoryx2` turns it off
    /// for a DDS-only session).
    pub iceoryx2: bool,
    /// Record DDS / ROS 2 topics of this domain in every session (`rec start
    /// --dds-domain` sets it per session); none records shared memory only.
    pub dds_domain: Option<u16>,
    /// Addresses of the network interfaces DDS uses; empty means every interface.
    pub dds_interfaces: Vec<std::net::IpAddr>,
    /// Directories with ROS 2 `.msg` files, searched before `AMENT_PREFIX_PATH` (for
    /// DDS and Zenoh topics alike).
    pub dds_message_dirs: Vec<PathBuf>,
    /// Ask a publishing node for a ROS 2 type's definition (`~/get_type_description`,
    /// over DDS or Zenoh) when no `.msg` file has it; kept in `<state_dir>/types` by type
    /// hash.
    pub dds_fetch_types: bool,
    /// Put every ROS 2 node's parameters (`~/list_parameters`, `~/get_parameters`) into
    /// each file as it starts, one Metadata record per node, and record
    /// `/parameter_events` (DDS sessions; `rec start --parameters` for one session).
    pub parameters: bool,
    /// Bytes of samples each DDS topic's reader holds until the receive thread takes
    /// them (64 to 16,384 of the topic's largest samples).
    #[serde(with = "units::size")]
    pub dds_reader_memory: ByteSize,
    /// UDP receive buffer of the DDS sockets (capped by net.core.rmem_max).
    #[serde(with = "units::size")]
    pub dds_receive_buffer: ByteSize,
    /// What recd does to each file once closed, in the background at idle CPU and I/O
    /// priority: "index" chunks and indexes it in place, so that every viewer opens it
    /// (Foxglove opens unindexed files only up to 1 GiB); "zstd" and "lz4" compress it
    /// too; "none" leaves it as recorded. `rec start --finish` overrides it.
    pub finish: FinishMode,
    /// Finish files while sessions record too (pausing while one drops messages or its
    /// writer falls behind); by default finishing waits until no session writes (a
    /// paused session, or a pre-trigger one between windows, does not count).
    pub finish_while_recording: bool,
    /// Record only topics whose message type matches one of these globs (ROS 2 names
    /// for DDS, iceoryx2 payload type names for shared memory), unless a session names
    /// its own (`rec start --topic-type`); empty means all.
    pub topic_types: Vec<String>,
    /// Never record topics whose message type matches one of these globs (added to a
    /// session's own `--exclude-topic-type`).
    pub exclude_topic_types: Vec<String>,
    /// The `[zenoh]` table, which sessions record Zenoh with (copied from it when the
    /// configuration is read; not a key of `[recording]`).
    #[serde(skip)]
    pub zenoh: ZenohSection,
}

impl Default for DaemonConfig {
    fn default() -> Self {
        Self {
            socket: PathBuf::from("/run/recd/recd.sock"),
            data_dir: PathBuf::from("/var/lib/recd/recordings"),
            state_dir: PathBuf::from("/var/lib/recd"),
            stop_timeout: Duration::from_secs(30),
            reindex_after_crash: false,
            max_sessions: 16,
            min_free_space: ByteSize::gib(1),
            max_total_size: None,
            recording: SessionDefaults::default(),
            incidents: IncidentsConfig::default(),
            upload: None,
            encryption: None,
            fleet: None,
            remote_control: RemoteControlConfig::default(),
            expect: Vec::new(),
            topic: Vec::new(),
            http: HttpConfig::default(),
            preset: Vec::new(),
            rule: Vec::new(),
            signing: SigningConfig::default(),
            zenoh: ZenohSection::default(),
        }
    }
}

impl Default for SessionDefaults {
    fn default() -> Self {
        let engine = recd_engine::RecordingConfig::default();
        let dds = recd_engine::DdsConfig::default();
        Self {
            max_file_size: None,
            max_duration: None,
            max_age: None,
            crc: false,
            io_mode: engine.io_mode,
            zero_copy_threshold: ByteSize::b(engine.zero_copy_threshold as u64),
            sync_period: engine.sync_period,
            discovery_interval: engine.discovery_interval,
            min_poll_interval: engine.min_poll_interval,
            max_poll_interval: engine.max_poll_interval,
            receive_priority: engine.receive_priority,
            iceoryx2_prefix: None,
            ring_items: engine.ring.items,
            ring_copy_bytes: ByteSize::b(engine.ring.copy_bytes as u64),
            ring_loaned_bytes: ByteSize::b(engine.ring.loaned_bytes as u64),
            spill_bytes: ByteSize::b(engine.spill_bytes as u64),
            iceoryx2: true,
            dds_domain: None,
            dds_interfaces: dds.interfaces,
            dds_message_dirs: dds.message_dirs,
            dds_fetch_types: dds.fetch_types,
            parameters: dds.parameters,
            dds_reader_memory: ByteSize::b(dds.reader_memory),
            dds_receive_buffer: ByteSize::b(dds.receive_buffer_bytes as u64),
            finish: FinishMode::Index,
            finish_while_recording: false,
            topic_types: Vec::new(),
            exclude_topic_types: Vec::new(),
            zenoh: ZenohSection::default(),
        }
    }
}

/// Why the configuration could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file could not be read.
    #[error("cannot read the configuration {}: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The file is not valid TOML or has a bad key or value; the message names the line.
    #[error("bad configuration {}: {message}", path.display())]
    Invalid {
        /// The file.
        path: PathBuf,
        /// The parser's account, naming the key and the line.
        message: String,
    },
}

impl DaemonConfig {
    /// Where ROS 2 message definitions learnt from the network are kept, by type hash
    /// (`RIHS01_<hex>.msg`).
    pub fn type_cache_dir(&self) -> PathBuf {
        self.state_dir.join("types")
    }

    /// Reads `path`; a missing file at the default location means the built-in defaults,
    /// a missing file named explicitly is an error.
    pub fn load(path: &Path, explicit: bool) -> Result<Self, ConfigError> {
        let text = match std::fs::read_to_string(path) {
            Ok(text) => text,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound && !explicit => {
                return Ok(Self::default())
            }
            Err(source) => {
                return Err(ConfigError::Read {
                    path: path.to_path_buf(),
                    source,
                })
            }
        };
        Self::parse(&text).map_err(|message| ConfigError::Invalid {
            path: path.to_path_buf(),
            message,
        })
    }

    /// Parses TOML text; the error names the offending key and line.
    pub fn parse(text: &str) -> Result<Self, String> {
        let mut config: Self = toml::from_str(text).map_err(|error| {
            let message = error.to_string().trim_end().to_string();
            if message.contains("unknown field `direct_io`") {
                format!("{message}\n`direct_io` was replaced by `io_mode = \"auto\"` (the default), \"direct\" or \"buffered\"")
            } else {
                message
            }
        })?;
        if let Some(upload) = &config.upload {
            upload.validate()?;
        }
        if let Some(encryption) = &config.encryption {
            encryption
                .recipients()
                .map_err(|e| format!("[encryption] recipients: {e}"))?;
        }
        if let Some(fleet) = &config.fleet {
            fleet.validate()?;
        }
        config.remote_control.validate()?;
        config.zenoh.validate()?;
        // Sessions take their Zenoh settings with the rest of their defaults.
        config.recording.zenoh = config.zenoh.clone();
        recd_health::Expectations::new(&config.expect).map_err(|e| format!("[[expect]]: {e}"))?;
        for rule in &config.topic {
            rule.check().map_err(|e| format!("[[topic]]: {e}"))?;
        }
        config.http.settings()?;
        http::validate_presets(&config.preset)?;
        config.rules()?;
        if let Some(encryption) = &config.encryption {
            let preset_befores = (config.preset.iter()).filter_map(|preset| {
                Some((format!("[[preset]] {:?}", preset.name), preset.before?))
            });
            encryption.check_reach(preset_befores)?;
        }
        Ok(config)
    }

    /// The `[[rule]]`s, checked as far as they can be without their topics' schemas.
    pub fn rules(&self) -> Result<Vec<recd_rules::Rule>, String> {
        self.check_rules(&self.rule)
    }

    /// Checks `rules` (recd.toml's, or a campaign's) as recd.toml's `[[rule]]`s are
    /// checked: each rule as far as it can be without its topic's schema, how far back its
    /// window reaches under `[encryption]`, and whether `fleet = true` has remote control.
    pub fn check_rules(
        &self,
        rules: &[recd_rules::RuleConfig],
    ) -> Result<Vec<recd_rules::Rule>, String> {
        let rules = recd_rules::check_rules(rules).map_err(|e| format!("[[rule]]: {e}"))?;
        if let Some(encryption) = &self.encryption {
            let befores =
                (rules.iter()).map(|rule| (format!("[[rule]] {:?}", rule.name), rule.before));
            encryption.check_reach(befores)?;
        }
        if let Some(rule) = rules.iter().find(|rule| rule.fleet) {
            if !self.remote_control.enabled {
                return Err(format!(
                    "[[rule]] {:?}: fleet = true sends its incidents to the fleet over DDS, which needs [remote_control] enabled = true",
                    rule.name
                ));
            }
        }
        Ok(rules)
    }

    /// The configuration as TOML, every key included.
    pub fn to_toml(&self) -> String {
        toml::to_string_pretty(self).expect("the configuration serializes")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_empty_file_is_all_defaults_and_printing_round_trips() {
        let config = DaemonConfig::parse("").unwrap();
        assert_eq!(config, DaemonConfig::default());
        let printed = config.to_toml();
        assert_eq!(DaemonConfig::parse(&printed).unwrap(), config);
    }

    #[test]
    fn expectations_are_read_in_order_and_a_bad_one_is_named() {
        let config = DaemonConfig::parse(
            "[[expect]]\ntopic = \"camera/*\"\nmin_rate = 25\nmax_gap = \"200ms\"\nrequired = true\n\n[[expect]]\ntopic = \"debug/*\"\nexpect = false\n",
        )
        .unwrap();
        assert_eq!(config.expect.len(), 2);
        assert_eq!(config.expect[0].max_gap, Some(Duration::from_millis(200)));
        assert!(config.expect[0].required && !config.expect[1].expect);
        assert_eq!(DaemonConfig::parse(&config.to_toml()).unwrap(), config);
        let error = DaemonConfig::parse("[[expect]]\ntopic = \"a\"\nmin_rate = -1\n").unwrap_err();
        assert!(
            error.contains("min_rate must be a number of Hz above 0"),
            "{error}"
        );
        let error =
            DaemonConfig::parse("[[expect]]\ntopic = \"a\"\nmax_gapp = \"1s\"\n").unwrap_err();
        assert!(error.contains("max_gapp"), "{error}");
    }

    #[test]
    fn values_are_read_with_units() {
        let config = DaemonConfig::parse(
            "socket = \"/tmp/x.sock\"\nstop_timeout = \"5s\"\n[recording]\nmax_file_size = \"2GiB\"\nmax_duration = \"10min\"\nmin_poll_interval = \"1ms\"\n",
        )
        .unwrap();
        assert_eq!(config.socket, PathBuf::from("/tmp/x.sock"));
        assert_eq!(config.stop_timeout, Duration::from_secs(5));
        assert_eq!(config.recording.max_file_size, Some(ByteSize::gib(2)));
        assert_eq!(
            config.recording.max_duration,
            Some(Duration::from_secs(600))
        );
        assert_eq!(config.recording.min_poll_interval, Duration::from_millis(1));
    }

    #[test]
    fn a_bad_key_or_value_is_named_with_its_line() {
        let error = DaemonConfig::parse("socket = \"/a\"\n\nsokcet = \"/b\"\n").unwrap_err();
        assert!(error.contains("sokcet"), "{error}");
        assert!(error.contains("line 3"), "{error}");
        let error = DaemonConfig::parse("[recording]\nmax_duration = \"soon\"\n").unwrap_err();
        assert!(error.contains("line 2"), "{error}");
        let error = DaemonConfig::parse("[recording]\nio_mode = \"fast\"\n").unwrap_err();
        assert!(
            error.contains("io_mode") && error.contains("fast"),
            "{error}"
        );
    }

    #[test]
    fn sizes_and_durations_say_how_to_write_them() {
        let error = DaemonConfig::parse("min_free_space = \"abc\"\n").unwrap_err();
        assert!(
            error.contains("`abc` is not a size (try 4MiB") && error.contains("line 1"),
            "{error}"
        );
        let error = DaemonConfig::parse("[recording]\nsync_period = \"soon\"\n").unwrap_err();
        assert!(error.contains("`soon` is not a duration (try"), "{error}");
        let config =
            DaemonConfig::parse("min_free_space = 1048576\nmax_total_size = \"2 GiB\"\n").unwrap();
        assert_eq!(config.min_free_space, ByteSize::mib(1));
        assert_eq!(config.max_total_size, Some(ByteSize::gib(2)));
        assert_eq!(DaemonConfig::default().min_free_space, ByteSize::gib(1));
        assert_eq!(DaemonConfig::default().max_total_size, None);
    }

    #[test]
    fn remote_control_is_off_by_default_and_checked_when_configured() {
        let default = DaemonConfig::default().remote_control;
        assert!(!default.enabled && !default.active());
        let config = DaemonConfig::parse(
            "[remote_control]\nstatus = true\ndomain = 7\nallow = [\"event\"]\n",
        )
        .unwrap()
        .remote_control;
        assert!(!config.enabled && config.publishes_status());
        assert!(config.allows("event") && !config.allows("stop"));
        let error = DaemonConfig::parse("[remote_control]\nallow = [\"explode\"]\n").unwrap_err();
        assert!(error.contains("\"explode\" is not a command"), "{error}");
        let error = DaemonConfig::parse("[remote_control]\nros2_node = \"a-b\"\n").unwrap_err();
        assert!(error.contains("not a ROS 2 node name"), "{error}");
    }

    #[test]
    fn upload_is_off_without_its_section_and_checked_with_it() {
        assert_eq!(DaemonConfig::default().upload, None);
        let config = DaemonConfig::parse(
            "[upload]\nendpoint = \"http://127.0.0.1:8333\"\nbucket = \"rec\"\nmax_rate = \"20MiB\"\nvehicle_id = \"car-3\"\n",
        )
        .unwrap();
        let upload = config.upload.clone().unwrap();
        assert_eq!(upload.max_rate, Some(ByteSize::mib(20)));
        assert_eq!(upload.prefix, "{vehicle}/{date}/{session}");
        let settings = upload.settings("host").unwrap();
        assert_eq!(settings.vehicle_id, "car-3");
        assert_eq!(settings.vehicle_name, "car-3");
        assert_eq!(DaemonConfig::parse(&config.to_toml()).unwrap(), config);
        let error = DaemonConfig::parse("[upload]\nendpoint = \"http://x\"\n").unwrap_err();
        assert!(error.contains("needs a bucket"), "{error}");
        let error =
            DaemonConfig::parse("[upload]\nbucket = \"b\"\nprefix = \"{car}\"\n").unwrap_err();
        assert!(error.contains("{car}"), "{error}");
        let error =
            DaemonConfig::parse("[upload]\nbucket = \"b\"\npart_size = \"1MiB\"\n").unwrap_err();
        assert!(error.contains("5 MiB"), "{error}");
        assert_eq!(settings.parallel_parts, 4);
        for refused in [0, 33] {
            let toml = format!("[upload]\nbucket = \"b\"\nparallel_parts = {refused}\n");
            let error = DaemonConfig::parse(&toml).unwrap_err();
            assert!(error.contains("parallel_parts"), "{error}");
        }
        let error = DaemonConfig::parse("[upload]\nbucket = \"b\"\nsecret = \"x\"\n").unwrap_err();
        assert!(error.contains("secret"), "{error}");
    }

    #[test]
    fn io_mode_replaces_direct_io_and_the_old_key_says_so() {
        let config = DaemonConfig::parse("[recording]\nio_mode = \"buffered\"\n").unwrap();
        assert_eq!(config.recording.io_mode, IoMode::Buffered);
        assert_eq!(DaemonConfig::default().recording.io_mode, IoMode::Auto);
        let error = DaemonConfig::parse("[recording]\ndirect_io = true\n").unwrap_err();
        assert!(error.contains("replaced by `io_mode"), "{error}");
    }
}
