//! The load generator (`recd-load`) as the tests run it: its arguments built by name.

use std::process::{Child, Command, Stdio};
use std::time::Duration;

use iceoryx2::prelude::*;
use recd_storage::iceoryx2::RMW_MESSAGE_INFO_HEADER;

use crate::{binary, wait_until, Domain};

/// One run of `recd-load`, its options given by name and passed on in the order given;
/// what is not given keeps recd-load's default. Start it in an iceoryx2 domain with
/// [`crate::Domain::load`], or over DDS with [`Self::dds`] and [`Self::spawn`].
///
/// ```no_run
/// use std::time::Duration;
/// use recd_testkit::{finish_load, Domain, RecdLoad};
///
/// let domain = Domain::new();
/// let load = RecdLoad::new("t/")
///     .cameras(2)
///     .frame_size(300_000)
///     .fps(100)
///     .count(60)
///     .duration(Duration::from_secs(20))
///     .wait_subscribers(1);
/// let report = finish_load(domain.load(&load));
/// # let _ = report;
/// ```
#[derive(Debug, Clone)]
pub struct RecdLoad {
    args: Vec<String>,
}

impl RecdLoad {
    /// A load whose topic names start with `prefix` (`--name-prefix`).
    pub fn new(prefix: &str) -> Self {
        Self {
            args: vec!["--name-prefix".into(), prefix.into()],
        }
    }

    /// One camera `<prefix>camera/0` publishing `frames` frames of `frame_size` bytes at
    /// 30 fps (for at most a minute) once one subscriber is there.
    pub fn one_camera(prefix: &str, frame_size: usize, frames: u64) -> Self {
        Self::new(prefix)
            .cameras(1)
            .frame_size(frame_size)
            .fps(30)
            .count(frames)
            .duration(Duration::from_secs(60))
            .wait_subscribers(1)
    }

    /// Camera topics, one publisher process each (`--cameras`).
    pub fn cameras(self, cameras: usize) -> Self {
        self.option("--cameras", cameras)
    }

    /// Bytes per camera frame (`--frame-size`).
    pub fn frame_size(self, bytes: usize) -> Self {
        self.option("--frame-size", bytes)
    }

    /// Camera frames per second (`--fps`).
    pub fn fps(self, fps: u32) -> Self {
        self.option("--fps", fps)
    }

    /// Small-message topics, all from one publisher process (`--small-topics`).
    pub fn small_topics(self, topics: usize) -> Self {
        self.option("--small-topics", topics)
    }

    /// Bytes per small message (`--small-size`).
    pub fn small_size(self, bytes: usize) -> Self {
        self.option("--small-size", bytes)
    }

    /// Messages per second on each small topic (`--small-rate`).
    pub fn small_rate(self, hz: u32) -> Self {
        self.option("--small-rate", hz)
    }

    /// Messages per topic, after which it stops (`--count`).
    pub fn count(self, messages: u64) -> Self {
        self.option("--count", messages)
    }

    /// How long to publish at most (`--duration`).
    pub fn duration(self, duration: Duration) -> Self {
        self.option("--duration", human(duration))
    }

    /// How long the publishers stay up after their last sample (`--linger`).
    pub fn linger(self, linger: Duration) -> Self {
        self.option("--linger", human(linger))
    }

    /// Samples a subscriber may hold at once, per publisher (`--borrowed`).
    pub fn borrowed(self, samples: usize) -> Self {
        self.option("--borrowed", samples)
    }

    /// Samples queued per subscriber before the oldest is overwritten (`--buffer`).
    pub fn buffer(self, samples: usize) -> Self {
        self.option("--buffer", samples)
    }

    /// History kept for late subscribers, which makes the topics latched (`--history`).
    pub fn history(self, samples: usize) -> Self {
        self.option("--history", samples)
    }

    /// Notify a same-named event service after each sample (`--notify`).
    pub fn notify(mut self) -> Self {
        self.args.push("--notify".into());
        self
    }

    /// Wait until this many subscribers are connected before publishing
    /// (`--wait-subscribers`).
    pub fn wait_subscribers(self, subscribers: usize) -> Self {
        self.option("--wait-subscribers", subscribers)
    }

    /// Publish over DDS in `domain`, on the network interface with address `interface`
    /// only (`dds --domain … --interface …`), instead of over iceoryx2.
    pub fn dds(mut self, domain: u16, interface: &str) -> Self {
        self.args.push("dds".into());
        self.option("--domain", domain)
            .option("--interface", interface)
    }

    /// The arguments as given so far.
    pub fn args(&self) -> &[String] {
        &self.args
    }

    /// Starts recd-load with no iceoryx2 prefix (over DDS, say), its JSON report piped
    /// for [`crate::finish_load`].
    pub fn spawn(&self) -> Child {
        self.command(&[])
            .stdout(Stdio::piped())
            .spawn()
            .expect("recd-load starts")
    }

    /// recd-load with `first` and then these arguments, asked for its report as JSON.
    pub(crate) fn command(&self, first: &[&str]) -> Command {
        let mut command = Command::new(binary("recd-load"));
        command.args(first).arg("--json").args(&self.args);
        command
    }

    fn option(mut self, name: &str, value: impl ToString) -> Self {
        self.args.push(name.into());
        self.args.push(value.to_string());
        self
    }
}

/// `duration` as recd-load reads it: `30s`, or `250ms`.
fn human(duration: Duration) -> String {
    if duration.subsec_nanos() == 0 {
        format!("{}s", duration.as_secs())
    } else {
        format!("{}ms", duration.as_millis())
    }
}

/// rmw_iceoryx2's user header, which recd-load sends and recd reads its time stamp and
/// sequence number from.
#[repr(C)]
#[derive(Debug, Default, Clone, Copy)]
pub struct MessageInfoHeader {
    /// When the sample was published, ns since the Unix epoch.
    pub source_timestamp: i64,
    /// The publisher's sequence number, from 0.
    pub publication_sequence_number: u64,
}

// SAFETY: plain old data without pointers; the type name is rmw_iceoryx2's.
unsafe impl ZeroCopySend for MessageInfoHeader {
    unsafe fn type_name() -> &'static str {
        RMW_MESSAGE_INFO_HEADER
    }
}

impl Domain {
    /// Waits up to `timeout` until recd-load's `service` in this domain has a publisher;
    /// false if it has none by then. A recorder that subscribes after this finds the
    /// publisher there from the start, rather than joining after it (iceoryx2 creates a
    /// service before its publisher, and a recorder may subscribe in between).
    pub fn wait_for_load_publisher(&self, service: &str, timeout: Duration) -> bool {
        let node = recd_engine::iceoryx2_node(Some(&self.prefix)).expect("an iceoryx2 node");
        let name = ServiceName::new(service).expect("a valid service name");
        wait_until(timeout, || {
            node.service_builder(&name)
                .publish_subscribe::<[u8]>()
                .user_header::<MessageInfoHeader>()
                .open()
                .is_ok_and(|service| service.dynamic_config().number_of_publishers() > 0)
        })
    }
}
