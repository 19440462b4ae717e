//! What a recording is asked to do.

use std::path::PathBuf;
use std::time::Duration;

use recd_health::Expectation;
use recd_storage::IoMode;
use serde::{Deserialize, Serialize};

/// Everything a recording needs to start; [`RecordingConfig::new`] gives the defaults.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default)]
pub struct RecordingConfig {
    /// Which services to record.
    pub topics: TopicSelection,
    /// Directory the files go to; created if missing.
    pub output_dir: PathBuf,
    /// Files are named `<file_prefix>_<NNNN>.mcap`, numbered from 0; a recording of more
    /// than one source writes `<file_prefix>_iceoryx2_<NNNN>.mcap`,
    /// `<file_prefix>_dds_<NNNN>.mcap` and `<file_prefix>_zenoh_<NNNN>.mcap`, each family
    /// split on its own.
    pub file_prefix: String,
    /// When to start a new file.
    pub split: SplitPolicy,
    /// Compute a CRC of each file's data section.
    pub crc: bool,
    /// Payloads this large or larger are written straight from shared memory; smaller
    /// ones are copied once and batched.
    pub zero_copy_threshold: usize,
    /// How files are written. With direct I/O (`O_DIRECT`) the disk reads large payloads
    /// straight from shared memory and the page cache is left alone, which saves the
    /// kernel's copy; small messages then reach the file every 20 ms rather than whenever
    /// the writer runs out of work, as each direct write fills whole 4 KiB blocks.
    /// [`IoMode::Auto`] (the default) uses it where the output directory's file system
    /// accepts it (ext4 and XFS do; ramfs and some FUSE mounts do not) and buffered I/O
    /// elsewhere; [`RecordingStatus::io_mode`](crate::RecordingStatus) says which.
    pub io_mode: IoMode,
    /// Bounds of the handoff between the receive thread and the writer thread.
    pub ring: RingConfig,
    /// Recorder memory for large shared-memory samples that cannot stay in shared memory
    /// until written: when the writer holds every sample of a publisher that iceoryx2
    /// lends and another one waits, the newest one the writer has not started is copied
    /// here and released, so the publisher's queue never overflows while the writer is
    /// behind. When this is full, that sample is dropped and counted. Allocated, faulted
    /// in and locked (where permitted) when the recording starts, so the receive thread
    /// never waits for a page.
    pub spill_bytes: usize,
    /// How often written data is forced to the disk (`fdatasync`, on a thread of its
    /// own): a power cut loses about this much plus one sync of what reached the writer.
    /// `None` leaves it to the kernel's write-back, which the writer starts every 8 MiB
    /// (and the file system's journal commits, every 5 s on ext4).
    pub sync_period: Option<Duration>,
    /// Free bytes to leave on the output directory's file system: below this the current
    /// file is finished and later messages are dropped (and counted) until there is room
    /// again, when recording continues in a new file. `None` writes until the disk is
    /// full, which ends the recording's writing with an error.
    pub min_free_space: Option<u64>,
    /// How often the list of services is read to find new and vanished topics.
    pub discovery_interval: Duration,
    /// The shortest time between two polls of a subscriber without a same-named event
    /// service. Each subscriber is polled when its buffer would be a quarter full at the
    /// rate its samples have lately arrived, within these bounds; a sudden burst of more
    /// than four times that rate can overflow the buffer before the next poll (event
    /// services avoid that).
    pub min_poll_interval: Duration,
    /// The longest time between two polls of such a subscriber: how long a sample may
    /// wait before it is received, so how far its `log_time` may lag its publication.
    /// Subscribers due within half of `min_poll_interval` are polled together, so the
    /// receive thread wakes about this often however many topics there are. A
    /// subscriber with an event service is polled at most 16 times less often: its
    /// publishers wake the thread.
    pub max_poll_interval: Duration,
    /// The real-time priority (`SCHED_FIFO`, 1–99) of the receive threads, so that a busy
    /// machine cannot make them late and let publishers' queues overflow; 0 asks for none
    /// (a nice boost only). Needs CAP_SYS_NICE or an RLIMIT_RTPRIO of at least this;
    /// without, the threads run without it and the status says so.
    pub receive_priority: u8,
    /// The iceoryx2 file prefix (`global.prefix`), to record a separate iceoryx2 domain;
    /// `None` keeps iceoryx2's default.
    pub iceoryx2_prefix: Option<String>,
    /// Record iceoryx2 shared-memory services. DDS topics always go to files of their
    /// own, with ROS 2 channels only, as ROS 2 readers (rosbags, say) require.
    pub iceoryx2: bool,
    /// Record DDS / ROS 2 topics too (RTPS over UDP); `None` records shared memory only.
    pub dds: Option<DdsConfig>,
    /// Record ROS 2 topics over Zenoh too (rmw_zenoh); `None` leaves Zenoh alone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub zenoh: Option<ZenohConfig>,
    /// Extra entries for the `recorder` Metadata record of every file (a session's name
    /// and id, say).
    pub metadata: std::collections::BTreeMap<String, String>,
    /// Entries of the [`USER_METADATA`](recd_storage::iceoryx2::USER_METADATA) Metadata
    /// record at the start of every file (`rec start --metadata KEY=VALUE`); none, no
    /// record.
    pub user_metadata: std::collections::BTreeMap<String, String>,
    /// Start paused: messages are taken and counted as paused, nothing is written until
    /// [`crate::Recording::resume`].
    #[serde(default)]
    pub start_paused: bool,
    /// Keep the latest messages in memory and write files only around triggers
    /// ([`crate::Recording::trigger`]); `None` writes everything.
    #[serde(default)]
    pub pre_trigger: Option<PreTrigger>,
    /// What is expected of the topics, first matching rule first; topics no rule matches
    /// get an expectation learnt from their own first samples.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub expect: Vec<Expectation>,
    /// Rate limits and downsampling per topic glob, first matching rule first (see
    /// [`ThrottleRule`](crate::ThrottleRule)); samples they do not keep are counted as
    /// `filtered`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub throttles: Vec<crate::ThrottleRule>,
    /// Files put at the start of every file as MCAP Attachments (`rec start --attach`).
    /// Not serialized: the files hold them, the configuration in their `recorder`
    /// metadata need not.
    #[serde(skip)]
    pub attachments: Vec<recd_storage::Attachment>,
    /// Seal every file to the fleet's public keys: age files named `….mcap.age`, whose
    /// open chunk is padded and sealed every half `sync_period` (1 s without one), so
    /// that a power cut loses no more than unsealed recording does. Not serialized.
    #[serde(skip)]
    pub sealing: Option<recd_storage::Sealing>,
    /// Where each file's checkpoints are kept while it is written, so that a cut of it in
    /// this process (an incident's) scans it from near its window. Not serialized.
    #[serde(skip)]
    pub checkpoints: Option<recd_storage::CheckpointBook>,
    /// Hash each file's bytes as they are stored (SHA-256; the ciphertext of a sealed
    /// file), given with its close ([`ClosedFile::stored`](crate::ClosedFile)): what a hash
    /// chain enters without reading the file back. Not serialized.
    #[serde(skip)]
    pub stored_digest: bool,
    /// Aids for tests that need a slow or late recorder; never serialized, so they stay
    /// out of the files' `recorder` metadata and the daemon's configuration.
    #[serde(skip)]
    pub test_hooks: TestHooks,
}

/// Ways for a test to make the recorder slow on purpose; all off by default.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TestHooks {
    /// The writer thread sleeps this long before each message, to make the handoff
    /// overflow.
    pub writer_delay: Option<Duration>,
    /// Each receive thread sleeps this long before each receive pass, as a stalled
    /// thread would: the shared-memory publishers' queues overflow, the DDS readers'
    /// histories fill.
    pub receive_delay: Option<Duration>,
    /// The shared-memory receive thread's copying time per pass, in place of
    /// `COPY_SLICE`: zero copies one step (256 KiB) of a taken-back sample per pass.
    pub copy_slice: Option<Duration>,
    /// The writer keeps no health watch: the reference the benchmark of its cost
    /// (`recd-e2e run --no-health`) measures against.
    pub no_health: bool,
}

impl RecordingConfig {
    /// A configuration recording every topic into `output_dir` with the defaults.
    pub fn new(output_dir: impl Into<PathBuf>) -> Self {
        Self {
            output_dir: output_dir.into(),
            ..Self::default()
        }
    }
}

impl Default for RecordingConfig {
    fn default() -> Self {
        Self {
            topics: TopicSelection::default(),
            output_dir: PathBuf::from("."),
            file_prefix: "recording".to_string(),
            split: SplitPolicy::default(),
            crc: false,
            zero_copy_threshold: 64 * 1024,
            io_mode: IoMode::Auto,
            ring: RingConfig::default(),
            spill_bytes: 256 * 1024 * 1024,
            sync_period: Some(Duration::from_millis(500)),
            min_free_space: None,
            discovery_interval: Duration::from_millis(500),
            min_poll_interval: Duration::from_micros(500),
            max_poll_interval: Duration::from_millis(4),
            receive_priority: DEFAULT_RECEIVE_PRIORITY,
            iceoryx2_prefix: None,
            iceoryx2: true,
            dds: None,
            zenoh: None,
            metadata: Default::default(),
            user_metadata: Default::default(),
            start_paused: false,
            pre_trigger: None,
            attachments: Vec::new(),
            sealing: None,
            checkpoints: None,
            stored_digest: false,
            test_hooks: TestHooks::default(),
            expect: Vec::new(),
            throttles: Vec::new(),
        }
    }
}

/// The default [`RecordingConfig::receive_priority`]: a low real-time priority, above
/// every ordinary thread and below the kernel's own (threaded interrupts run at 50).
pub const DEFAULT_RECEIVE_PRIORITY: u8 = 10;

/// A pre-trigger session's buffer: what it keeps in memory until a trigger writes it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PreTrigger {
    /// Messages older than this (by log time, against the newest) are let go.
    pub duration: Duration,
    /// The buffer's memory: when full, the oldest messages are let go however young.
    /// A session recording iceoryx2 and DDS gives each its half.
    pub buffer_bytes: u64,
}

/// The default [`PreTrigger::buffer_bytes`]: 1 GiB.
pub const DEFAULT_BUFFER_BYTES: u64 = 1 << 30;

/// The smallest [`PreTrigger::buffer_bytes`]: room for a few camera frames.
pub const MIN_BUFFER_BYTES: u64 = 1 << 20;

/// Topic selection by glob patterns over service names (`*` matches `/` too).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct TopicSelection {
    /// Patterns of services to record; empty means all (unless types, ROS 2 services or
    /// actions are asked for: then only those).
    pub include: Vec<String>,
    /// Patterns of services never to record, even when included.
    pub exclude: Vec<String>,
    /// Patterns of message types to record (ROS 2 names such as `sensor_msgs/msg/Image`
    /// for DDS, iceoryx2's payload type name for shared memory); empty means all.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub types: Vec<String>,
    /// Patterns of message types never to record.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub exclude_types: Vec<String>,
    /// ROS 2 services whose introspection events (`<service>/_service_event`) to record.
    #[serde(default, skip_serializing_if = "NameSelection::is_empty")]
    pub services: NameSelection,
    /// ROS 2 actions whose topics and services' events (`<action>/_action/…`) to record.
    #[serde(default, skip_serializing_if = "NameSelection::is_empty")]
    pub actions: NameSelection,
    /// Record `/parameter_events` whatever the patterns say (`rec start --parameters`):
    /// the parameters' changes belong with the values each file starts with.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub parameter_events: bool,
}

impl TopicSelection {
    /// Whether nothing was asked for by name or type: then every topic, service and
    /// action is recorded (but `exclude` patterns), as `ros2 bag record --all` does.
    pub fn selects_everything(&self) -> bool {
        self.include.is_empty()
            && self.types.is_empty()
            && !self.services.is_asked()
            && !self.actions.is_asked()
    }

    /// This selection with topic patterns added and removed (`rec topics-set`). A removed
    /// pattern joins the exclude patterns (the include patterns stay: taking the last one
    /// away would select everything). An added pattern leaves the exclude patterns and
    /// joins the include patterns, unless every topic is included already.
    pub fn changed(&self, add: &[String], remove: &[String]) -> Self {
        let mut changed = self.clone();
        for pattern in add {
            changed.exclude.retain(|p| p != pattern);
            if !self.selects_everything() && !changed.include.contains(pattern) {
                changed.include.push(pattern.clone());
            }
        }
        for pattern in remove {
            if !changed.exclude.contains(pattern) {
                changed.exclude.push(pattern.clone());
            }
        }
        changed
    }
}

/// ROS 2 services or actions to record, by glob patterns over their names
/// (`/add_two_ints`, `/fibonacci`).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct NameSelection {
    /// Patterns of names to record.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub include: Vec<String>,
    /// Record all (but `exclude`).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub all: bool,
    /// Patterns of names never to record.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub exclude: Vec<String>,
}

impl NameSelection {
    /// Whether any of these were asked for: by name or all.
    pub fn is_asked(&self) -> bool {
        self.all || !self.include.is_empty()
    }

    /// Whether nothing is set.
    pub fn is_empty(&self) -> bool {
        self == &Self::default()
    }
}

/// When a recording continues in a new file. Both limits may be set; the first reached
/// splits.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct SplitPolicy {
    /// Split once a file holds this many bytes.
    pub max_bytes: Option<u64>,
    /// Split once a file has been written to for this long.
    pub max_duration: Option<Duration>,
}

/// Bounds of the lock-free handoff from the receive thread to the writer thread. When
/// any bound is reached, the newest message is dropped and counted.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(default)]
pub struct RingConfig {
    /// Messages in flight between the threads.
    pub items: usize,
    /// Bytes of small (copied) messages in flight.
    pub copy_bytes: usize,
    /// Bytes of large messages in flight, held as shared-memory samples.
    pub loaned_bytes: usize,
}

impl Default for RingConfig {
    fn default() -> Self {
        Self {
            items: 16 * 1024,
            copy_bytes: 16 * 1024 * 1024,
            loaned_bytes: 1024 * 1024 * 1024,
        }
    }
}

/// The DDS source: which domain, which networks, how deep to buffer.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
#[serde(default)]
pub struct DdsConfig {
    /// The DDS domain id (ROS_DOMAIN_ID), 0 to 232.
    pub domain: u16,
    /// Addresses of the network interfaces to use; empty means every interface.
    pub interfaces: Vec<std::net::IpAddr>,
    /// Directories searched for ROS 2 `.msg` files (`<dir>/<pkg>/msg/<Type>.msg` or
    /// `<dir>/share/<pkg>/msg/<Type>.msg`), before the `AMENT_PREFIX_PATH` of the
    /// recorder's environment.
    pub message_dirs: Vec<PathBuf>,
    /// Bytes of samples each topic's reader holds until the receive thread takes them
    /// (a reliable writer's samples beyond it are lost when that thread stalls): its
    /// history holds this many bytes of the topic's largest samples, 64 to 16,384
    /// samples, so memory per topic stays near this bound (64 samples when they are
    /// larger than a 64th of it).
    pub reader_memory: u64,
    /// The UDP sockets' receive buffer, so that fragmented multi-MB samples and bursts
    /// survive (the kernel caps it at `net.core.rmem_max`, doubled).
    pub receive_buffer_bytes: usize,
    /// Ask a publishing node for a ROS 2 type's definition (its `~/get_type_description`
    /// service, ROS 2 Iron and later) when no `.msg` file has it; the topic waits (its
    /// reader gathering samples) until the node answers or a bound passes.
    pub fetch_types: bool,
    /// Where definitions learnt from the network are kept by type hash, read before
    /// asking; none keeps them for the session only.
    pub type_cache: Option<PathBuf>,
    /// Read every node's parameters (`~/list_parameters`, `~/get_parameters`) into each
    /// file as it starts (`rec start --parameters`); `/parameter_events` is recorded
    /// too, through [`TopicSelection::parameter_events`].
    pub parameters: bool,
}

impl DdsConfig {
    /// Records `domain` on every interface with the defaults.
    pub fn new(domain: u16) -> Self {
        Self {
            domain,
            ..Self::default()
        }
    }
}

impl Default for DdsConfig {
    fn default() -> Self {
        Self {
            domain: 0,
            interfaces: Vec::new(),
            message_dirs: Vec::new(),
            reader_memory: 32 << 20,
            receive_buffer_bytes: 16 * 1024 * 1024,
            fetch_types: true,
            type_cache: None,
            parameters: false,
        }
    }
}

/// The Zenoh source: which ROS 2 domain, and how the Zenoh session joins the network.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq, Eq)]
#[serde(default)]
pub struct ZenohConfig {
    /// The ROS 2 domain (ROS_DOMAIN_ID), the first chunk of rmw_zenoh's key expressions.
    pub domain: u16,
    /// `peer` (as rmw_zenoh's nodes are) or `client` (to record from outside the vehicle
    /// through a router); `None` is peer, or what `config_file` says.
    pub mode: Option<ZenohMode>,
    /// Zenoh endpoints to connect to (`tcp/127.0.0.1:7447`); empty connects to
    /// rmw_zenoh's router on this host.
    pub connect: Vec<String>,
    /// Zenoh endpoints to listen on; empty listens where Zenoh's default does.
    pub listen: Vec<String>,
    /// A Zenoh configuration file, as rmw_zenoh's `ZENOH_SESSION_CONFIG_URI` names one;
    /// `mode`, `connect` and `listen` given here override its values.
    pub config_file: Option<PathBuf>,
    /// Directories searched for ROS 2 `.msg` files, before `AMENT_PREFIX_PATH`.
    pub message_dirs: Vec<PathBuf>,
    /// Ask a publishing node for a ROS 2 type's definition (`~/get_type_description`)
    /// when no `.msg` file or kept definition has it.
    pub fetch_types: bool,
    /// Where definitions from the network are kept by type hash (and read before asking).
    pub type_cache: Option<PathBuf>,
}

impl ZenohConfig {
    /// Records `domain` in peer mode, connecting to a router on this host.
    pub fn new(domain: u16) -> Self {
        Self {
            domain,
            ..Self::default()
        }
    }
}

/// How a Zenoh session takes part in the network.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ZenohMode {
    /// A peer among peers, as rmw_zenoh's nodes are.
    Peer,
    /// A client of a router.
    Client,
}

impl ZenohMode {
    /// Its name in Zenoh's configuration.
    pub fn as_str(self) -> &'static str {
        match self {
            ZenohMode::Peer => "peer",
            ZenohMode::Client => "client",
        }
    }
}
