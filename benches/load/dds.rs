//! `recd-load dds`: one publisher process over DDS / RTPS (rustdds), publishing ROS 2
//! topics of type `recd_load/msg/Blob` (see `recd_workload::blob`).
//!
//! Each topic has a RELIABLE, VOLATILE, KEEP_LAST no-key DataWriter whose serializer
//! adapter hands rustdds the message bytes as they are ([`PassThrough`]): every message is
//! built once (one copy of a prepared body, then its proof, sequence number and time
//! stamp) and never serialized. The process waits (bounded) until a reader matched every
//! writer, publishes on a fixed schedule computed from the sequence number (so the counts
//! over a duration are exact and a late wake-up is caught up at once), then waits until
//! the readers acknowledged everything before it reports.

use std::net::IpAddr;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use clap::Args;
use recd_workload::report::TopicSent;
use recd_workload::{blob, proof};
use rustdds::bytes::Bytes;
use rustdds::no_key::{DataWriter, SerializerAdapter};
use rustdds::policy::{Durability, History, Reliability, ResourceLimits};
use rustdds::{
    DataWriterStatus, DomainParticipantBuilder, QosPolicies, QosPolicyBuilder,
    RepresentationIdentifier, StatusEvented, Timestamp, TopicKind,
};

use crate::{Worker, Workload};

/// DDS options of `recd-load dds` (the workload options are shared with iceoryx2).
#[derive(Args, Debug, Clone)]
pub struct DdsLoad {
    /// The DDS domain id (ROS_DOMAIN_ID).
    #[arg(long, default_value_t = 0)]
    domain: u16,
    /// Address of a network interface to use (repeatable), e.g. 127.0.0.1 to stay on
    /// loopback; none: every interface.
    #[arg(long = "interface")]
    interfaces: Vec<IpAddr>,
    /// KEEP_LAST depth and RESOURCE_LIMITS of each writer, which is also rustdds'
    /// reliable window (samples not yet acknowledged); default: one second of messages,
    /// 16 to 4096.
    #[arg(long)]
    depth: Option<i32>,
    /// Readers each writer must have matched before publishing starts.
    #[arg(long, default_value_t = 1)]
    wait_readers: usize,
    /// How long to wait for them; it is an error when they do not come.
    #[arg(long, default_value = "20s", value_parser = humantime::parse_duration)]
    wait_timeout: Duration,
    /// How long a write may wait for room in the reliable window before the sample is
    /// counted as an error (not sent).
    #[arg(long, default_value = "100ms", value_parser = humantime::parse_duration)]
    max_blocking: Duration,
    /// After the last sample, how long to wait for the readers to acknowledge everything.
    #[arg(long, default_value = "10s", value_parser = humantime::parse_duration)]
    drain_timeout: Duration,
    /// (internal) the worker process's share of the load.
    #[command(subcommand)]
    pub worker: Option<Worker>,
}

/// A message ready to go: its serialized payload after the 4-byte encapsulation header.
pub struct RawCdr(Bytes);

/// Serializer adapter that hands rustdds the prepared bytes (a reference count, no copy).
pub struct PassThrough;

impl SerializerAdapter<RawCdr> for PassThrough {
    type Error = std::convert::Infallible;

    fn output_encoding() -> RepresentationIdentifier {
        RepresentationIdentifier::CDR_LE
    }

    fn to_bytes(value: &RawCdr) -> Result<Bytes, Self::Error> {
        Ok(value.0.clone())
    }
}

struct DdsTopic {
    name: String,
    writer: DataWriter<RawCdr, PassThrough>,
    /// Prepared messages (encapsulation, length and data filled in) and the checksum of
    /// each one's payload body.
    templates: Vec<(Vec<u8>, u32)>,
    matched: usize,
    sent: u64,
    errors: u64,
}

/// Publishes the topics of one worker over DDS; returns what each sent.
pub fn run(workload: &Workload, dds: &DdsLoad, worker: Worker) -> Result<Vec<TopicSent>, String> {
    let prefix = workload.name_prefix.trim_start_matches('/');
    let (names, size, rate) = match worker {
        Worker::Camera { index } => (
            vec![blob::dds_topic(&format!("{prefix}camera_{index}"))],
            workload.frame_size,
            workload.fps,
        ),
        Worker::Small => (
            (0..workload.small_topics)
                .map(|i| blob::dds_topic(&format!("{prefix}small_{i}")))
                .collect(),
            workload.small_size,
            workload.small_rate,
        ),
    };
    let size = size.max(blob::HEADER_LEN + proof::PROOF_LEN);
    let depth = dds
        .depth
        .unwrap_or_else(|| rate.ceil().clamp(16.0, 4096.0) as i32)
        .max(1);

    let mut builder = DomainParticipantBuilder::new(dds.domain).same_host_loopback(true);
    if !dds.interfaces.is_empty() {
        builder = builder.with_only_networks(dds.interfaces.iter().copied());
    }
    let participant = builder.build().map_err(|e| {
        format!(
            "cannot create a DDS participant in domain {}: {e}",
            dds.domain
        )
    })?;
    let qos = writer_qos(depth, dds.max_blocking);
    let publisher = participant
        .create_publisher(&qos)
        .map_err(|e| format!("cannot create a DDS publisher: {e}"))?;
    let mut topics = names
        .iter()
        .enumerate()
        .map(|(i, name)| {
            let topic = participant
                .create_topic(
                    name.clone(),
                    blob::DDS_TYPE_NAME.to_string(),
                    &qos,
                    TopicKind::NoKey,
                )
                .map_err(|e| format!("cannot create topic {name}: {e}"))?;
            let writer = publisher
                .create_datawriter_no_key::<RawCdr, PassThrough>(&topic, Some(qos.clone()))
                .map_err(|e| format!("cannot create a writer on {name}: {e}"))?;
            Ok(DdsTopic {
                name: name.clone(),
                writer,
                templates: templates(size, i as u64),
                matched: 0,
                sent: 0,
                errors: 0,
            })
        })
        .collect::<Result<Vec<_>, String>>()?;
    wait_for_readers(&mut topics, dds.wait_readers, dds.wait_timeout)?;

    let duration_ns = workload.duration.as_nanos() as u64;
    let due_ns = |sequence: u64| (sequence as f64 * 1e9 / rate.max(0.001)).round() as u64;
    let started = Instant::now();
    let mut sequence = 0u64;
    let period = Duration::from_secs_f64(1.0 / rate.max(0.001));
    let (mut late_max, mut late_ticks) = (Duration::ZERO, 0u64);
    while due_ns(sequence) < duration_ns && workload.count.is_none_or(|count| sequence < count) {
        let due = started + Duration::from_nanos(due_ns(sequence));
        let now = Instant::now();
        if due > now {
            std::thread::sleep(due - now);
        } else {
            late_max = late_max.max(now - due);
            // Woken after the next message was due: two go out back to back.
            late_ticks += u64::from(now - due > period);
        }
        for topic in &mut topics {
            topic.publish(sequence);
        }
        sequence += 1;
    }
    let published = started.elapsed();
    // Reliable delivery: the readers have every sample once they acknowledged it.
    let drain_started = Instant::now();
    let mut unacknowledged = Vec::new();
    for topic in &topics {
        let left = dds.drain_timeout.saturating_sub(drain_started.elapsed());
        if !matches!(topic.writer.wait_for_acknowledgments(left), Ok(true)) {
            unacknowledged.push(topic.name.as_str());
        }
    }
    if !unacknowledged.is_empty() {
        eprintln!(
            "recd-load: not acknowledged within {:?}: {}",
            dds.drain_timeout,
            unacknowledged.join(", ")
        );
    }
    eprintln!(
        "recd-load dds: {} topic(s) × {sequence} messages of {size} B at {rate} Hz in {:.3} s \
         (schedule {:.3} s), {late_ticks} wake-up(s) over a period late, the latest {:.2} ms, \
         acknowledged after {:.3} s",
        topics.len(),
        published.as_secs_f64(),
        due_ns(sequence.saturating_sub(1)) as f64 / 1e9,
        late_max.as_secs_f64() * 1e3,
        drain_started.elapsed().as_secs_f64(),
    );
    std::thread::sleep(workload.linger);
    let report = topics
        .iter()
        .map(|t| TopicSent {
            service: t.name.clone(),
            sent: t.sent,
            payload_len: size,
            errors: t.errors,
        })
        .collect();
    Ok(report)
}

/// RELIABLE (ROS 2's default), VOLATILE, KEEP_LAST `depth`, with the resource limits that
/// make `depth` rustdds' reliable window too.
fn writer_qos(depth: i32, max_blocking: Duration) -> QosPolicies {
    QosPolicyBuilder::new()
        .reliability(Reliability::Reliable {
            max_blocking_time: rustdds::Duration::from_std(max_blocking),
        })
        .durability(Durability::Volatile)
        .history(History::KeepLast { depth })
        .resource_limits(ResourceLimits {
            max_samples: depth,
            max_instances: 1,
            max_samples_per_instance: depth,
        })
        .build()
}

/// Four prepared messages of `size` bytes per topic, as the iceoryx2 publisher has four
/// bodies, so consecutive messages differ.
fn templates(size: usize, seed: u64) -> Vec<(Vec<u8>, u32)> {
    (0..4)
        .map(|variant| {
            let mut message = blob::empty_message(size);
            let data = blob::data_mut(&mut message);
            data.copy_from_slice(&recd_workload::mixed_bytes(data.len(), seed * 16 + variant));
            let crc = proof::body_checksum(&data[proof::PROOF_LEN..]);
            data[..proof::PROOF_LEN].fill(0);
            (message, crc)
        })
        .collect()
}

/// Waits until every writer has matched `wanted` readers, at most `timeout`.
fn wait_for_readers(
    topics: &mut [DdsTopic],
    wanted: usize,
    timeout: Duration,
) -> Result<(), String> {
    if wanted == 0 {
        return Ok(());
    }
    let deadline = Instant::now() + timeout;
    let mut incompatible = Vec::new();
    loop {
        for topic in topics.iter_mut() {
            while let Some(status) = topic.writer.try_recv_status() {
                match status {
                    DataWriterStatus::PublicationMatched { current, .. } => {
                        topic.matched = current.count().max(0) as usize;
                    }
                    DataWriterStatus::OfferedIncompatibleQos { last_policy_id, .. } => {
                        incompatible.push(format!("{}: {last_policy_id:?}", topic.name));
                    }
                    _ => {}
                }
            }
        }
        let waiting: Vec<&str> = topics
            .iter()
            .filter(|t| t.matched < wanted)
            .map(|t| t.name.as_str())
            .collect();
        if waiting.is_empty() {
            return Ok(());
        }
        if Instant::now() >= deadline {
            let mut error = format!(
                "no reader matched {} within {timeout:?} (wanted {wanted} each)",
                waiting.join(", ")
            );
            if !incompatible.is_empty() {
                error += &format!("; incompatible QoS: {}", incompatible.join(", "));
            }
            return Err(error);
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// A DDS time stamp of `ns` since the Unix epoch (seconds and 2^-32 fractions).
fn timestamp(ns: u64) -> Timestamp {
    let seconds = ns / 1_000_000_000;
    let fraction = ((ns % 1_000_000_000) << 32) / 1_000_000_000;
    Timestamp::from_ticks((seconds << 32) | fraction)
}

impl DdsTopic {
    fn publish(&mut self, sequence: u64) {
        let (template, crc) = &self.templates[(sequence % 4) as usize];
        let mut message = template.clone();
        proof::stamp(blob::data_mut(&mut message), sequence, *crc);
        let now_ns = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64);
        blob::stamp(&mut message, sequence, now_ns);
        // rustdds writes the encapsulation header itself (from `output_encoding`).
        let payload = Bytes::from(message).slice(blob::ENCAPSULATION.len()..);
        match self.writer.write(RawCdr(payload), Some(timestamp(now_ns))) {
            Ok(()) => self.sent += 1,
            Err(_) => self.errors += 1,
        }
    }
}
