//! The recorder engine of recd: the path from a publisher's sample to bytes in an MCAP
//! file.
//!
//! ```text
//! source/shm (iceoryx2)   source/dds (RTPS)      one thread each, never blocked
//!         │ handoff ring        │ handoff ring     small: copied, large: lent
//!   writer thread         writer thread           MCAP via recd-storage
//!   …_iceoryx2_NNNN.mcap  …_dds_NNNN.mcap        (…_NNNN.mcap with one source)
//! ```
//!
//! [`Recording::start`] opens the sources [`RecordingConfig`] asks for, each with a
//! bounded lock-free handoff of its own and a writer thread that writes its files (so
//! that DDS files hold ROS 2 channels only, as ROS 2 readers require):
//!
//! - the **shared-memory source** finds the iceoryx2 services selected by glob patterns
//!   (and keeps looking, so topics that appear later are recorded from their first
//!   sample), opens them whatever their payload type, copies small samples once into a
//!   byte ring and passes large ones on as the shared-memory sample itself;
//! - the **DDS source** ([`RecordingConfig::dds`]) joins a DDS domain with one rustdds
//!   participant, creates a reader for each selected topic as its writers are discovered
//!   and hands the serialized CDR of each sample over the same way (ROS 2 names, QoS and
//!   message definitions as rosbag2 writes them);
//! - when a handoff is full, a source drops the newest message and counts it, so a
//!   publisher is never held up by the recorder; gaps in publishers' sequence numbers
//!   count as lost;
//! - a **writer thread** streams from its source's handoff into unchunked MCAP with the
//!   storage crate, releases each sample as soon as its bytes reached the kernel, splits
//!   files by size or duration (finishing the old file on a thread of its own), and
//!   repeats the last message of latched topics at the start of every file.
//!
//! [`Recording::status`] shows live per-topic counts; [`Recording::stop`] drains,
//! finishes the files with a `recorder/<file name>` Metadata record of the counts, and
//! reports. [`survey`] opens the same sources for a moment and reports what they find
//! (`rec topics`), writing nothing. The
//! file encoding of shared-memory topics is documented in [`recd_storage::iceoryx2`];
//! DDS topics follow the MCAP `ros2` profile.

#![warn(missing_docs)]
#![warn(clippy::undocumented_unsafe_blocks)]

mod allocator;
mod config;
mod handoff;
mod health;
mod lateness;
mod live_selection;
mod parameters;
mod recording;
mod registry;
mod select;
mod source;
mod survey;
mod throttle;
mod topic;
mod trigger;
mod writer;

pub use allocator::give_back_freed_memory;
pub use config::{
    DdsConfig, NameSelection, PreTrigger, RecordingConfig, RingConfig, SplitPolicy, TestHooks,
    TopicSelection, ZenohConfig, ZenohMode, DEFAULT_BUFFER_BYTES, DEFAULT_RECEIVE_PRIORITY,
    MIN_BUFFER_BYTES,
};
pub use lateness::LatenessHistogram;
pub use recd_health;
pub use recd_storage::IoMode;
pub use recording::{
    BufferStatus, Recording, RecordingStatus, RecordingSummary, SetTopicsError, StartError,
    StopError, TopicStatus,
};
pub use select::{PatternError, TopicFilter};
pub use source::dds::{dds_participant, BareCounts, BareDdsReader, DdsError};
pub use source::priority::nice_this_thread;
pub use source::shm::service_types::channel_name;
pub use source::shm::{iceoryx2_node, Flavor as ShmFlavor, ShmError};
pub use source::stats::{BehindProbe, ReceiveThreadStatus};
#[cfg(feature = "zenoh")]
pub use source::zenoh::{wire as zenoh_wire, BareZenohCounts, BareZenohSubscriber, ZenohError};
pub use survey::{survey, Survey, SurveyedTopic};
pub use throttle::{ThrottleError, ThrottleRule};
pub use topic::{ChannelSpec, TopicCounts};
pub use trigger::{TriggerError, TriggerWindow, Triggered, TriggeredFile};
pub use writer::{ClosedFile, DiskFull, RecordingObserver, RECEIVE_THREAD};
