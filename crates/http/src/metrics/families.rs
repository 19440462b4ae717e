//! The metric families of a snapshot, as plain data: names, help, labels and values.
//! Names follow Prometheus' conventions: the `recd_` prefix (added by the registry), base
//! units, `_total` on counters (added by the encoder), `_info` on info metrics.

use prometheus_client::registry::Unit;
use recd_control::{SessionStatus, UploadState};
use recd_health::HealthState;

mod fleet;
mod incidents;
mod rules;

use super::budget::{TopicBudget, OTHER};
use crate::snapshot::Snapshot;

/// A sample's labels.
pub type Labels = Vec<(&'static str, String)>;

/// What kind of metric a family is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Only grows (until its session ends).
    Counter,
    /// Goes up and down.
    Gauge,
    /// Always 1; the labels are the value.
    Info,
}

/// One metric family and its samples.
#[derive(Debug, Clone)]
pub struct Family {
    /// Its name without the prefix, unit and `_total`.
    pub name: &'static str,
    /// What it measures.
    pub help: &'static str,
    /// Its base unit, which ends its name.
    pub unit: Option<Unit>,
    /// Counter, gauge or info.
    pub kind: Kind,
    /// Labels and value of each sample.
    pub samples: Vec<(Labels, f64)>,
}

impl Family {
    pub(super) fn new(
        name: &'static str,
        help: &'static str,
        unit: Option<Unit>,
        kind: Kind,
    ) -> Self {
        Self {
            name,
            help,
            unit,
            kind,
            samples: Vec::new(),
        }
    }

    pub(super) fn with(mut self, labels: Labels, value: f64) -> Self {
        self.samples.push((labels, value));
        self
    }
}

/// A topic's health as a number: 0 ok, 1 slow, 2 stalled, 3 missing; `None` while
/// unchecked (no rule, or its rate still being learnt), where no number would be true.
pub fn health_value(state: HealthState) -> Option<f64> {
    match state {
        HealthState::Unchecked => None,
        HealthState::Ok => Some(0.0),
        HealthState::Slow => Some(1.0),
        HealthState::Stalled => Some(2.0),
        HealthState::Missing => Some(3.0),
    }
}

/// Every family of the snapshot; topics beyond the budget are summed into
/// `topic="_other"` per session.
pub fn families(snapshot: &Snapshot, budget: &mut TopicBudget, version: &str) -> Vec<Family> {
    let now_ns = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    let mut all = vec![
        Family::new("build", "recd's version (always 1).", None, Kind::Info)
            .with(vec![("version", version.to_string())], 1.0),
    ];
    all.extend(topic_families(&snapshot.sessions, budget, now_ns));
    all.extend(session_families(&snapshot.sessions));
    all.extend(disk_families(snapshot));
    all.extend(backlog_families(snapshot));
    all.extend(upload_families(snapshot));
    all.extend(incidents::families(snapshot));
    all.extend(fleet::families(&snapshot.facts));
    all.extend(rules::families(&snapshot.rules));
    all
}

/// The per-topic counters: name, help and the unit of the last one.
const COUNTERS: [(&str, &str); 9] = [
    ("messages_received", "Samples taken from the source."),
    (
        "messages_written",
        "Messages written to the session's files.",
    ),
    (
        "messages_dropped",
        "Messages received but not written (full handoff, failed write, full disk).",
    ),
    (
        "messages_lost",
        "Messages never received: gaps in the publishers' sequence numbers.",
    ),
    (
        "messages_evicted",
        "Messages a pre-trigger buffer let go of without a trigger.",
    ),
    (
        "messages_paused",
        "Messages received while the session was paused, so not written.",
    ),
    (
        "messages_filtered",
        "Messages a rate limit or downsampling let go of unwritten.",
    ),
    (
        "messages_repeated",
        "Messages that arrived again (a sequence number seen already), let go of.",
    ),
    ("written", "Payload bytes written (user header included)."),
];

/// A topic's values of [`COUNTERS`], in their order.
fn counter_values(counts: &recd_control::TopicReport) -> [u64; COUNTERS.len()] {
    [
        counts.received,
        counts.written,
        counts.dropped,
        counts.lost,
        counts.evicted,
        counts.paused,
        counts.filtered,
        counts.repeated,
        counts.bytes_written,
    ]
}

/// Per-topic counts, health and silence.
fn topic_families(
    sessions: &[SessionStatus],
    budget: &mut TopicBudget,
    now_ns: u64,
) -> Vec<Family> {
    let mut counters = COUNTERS.map(|(name, help)| {
        let unit = (name == "written").then_some(Unit::Bytes);
        Family::new(name, help, unit, Kind::Counter)
    });
    let mut push_counts = |labels: &dyn Fn() -> Labels, values: [u64; COUNTERS.len()]| {
        for (family, value) in counters.iter_mut().zip(values) {
            family.samples.push((labels(), value as f64));
        }
    };
    let mut unknown = Family::new(
        "unknown_loss",
        "1 when samples may have been overwritten in a queue that no sequence number shows (how many is unknown).",
        None,
        Kind::Gauge,
    );
    let mut health = Family::new(
        "topic_health",
        "The topic's health: 0 ok, 1 slow, 2 stalled, 3 missing (absent while unchecked).",
        None,
        Kind::Gauge,
    );
    let mut age = Family::new(
        "last_sample_age",
        "Seconds since the topic's last sample (to within 20 ms; absent before its first).",
        Some(Unit::Seconds),
        Kind::Gauge,
    );
    let mut folded = 0;
    for session in sessions {
        budget.keep_session(&session.name);
        let mut other: Option<([u64; COUNTERS.len()], bool)> = None;
        for topic in &session.topics {
            let counts = &topic.report;
            let values = counter_values(counts);
            if !budget.admits(&session.name, &counts.name) {
                folded += 1;
                let (sums, unknown_loss) = other.get_or_insert(([0; COUNTERS.len()], false));
                for (sum, value) in sums.iter_mut().zip(values) {
                    *sum += value;
                }
                *unknown_loss |= counts.unknown_loss;
                continue;
            }
            let labels = || topic_labels(&session.name, &counts.name);
            push_counts(&labels, values);
            unknown
                .samples
                .push((labels(), f64::from(u8::from(counts.unknown_loss))));
            if let Some(value) = topic.health.as_ref().and_then(|h| health_value(h.state)) {
                health.samples.push((labels(), value));
            }
            if let Some(last) = topic.last_sample_ns {
                age.samples
                    .push((labels(), now_ns.saturating_sub(last) as f64 / 1e9));
            }
        }
        if let Some((sums, unknown_loss)) = other {
            let labels = || topic_labels(&session.name, OTHER);
            push_counts(&labels, sums);
            unknown
                .samples
                .push((labels(), f64::from(u8::from(unknown_loss))));
        }
    }
    budget.forget_ended();
    let folded_family = Family::new(
        "metrics_topics_folded",
        "Topics beyond [http] max_topics, summed into topic=\"_other\".",
        None,
        Kind::Gauge,
    )
    .with(vec![], folded as f64);
    let mut families = counters.to_vec();
    families.extend([unknown, health, age, folded_family]);
    families
}

fn topic_labels(session: &str, topic: &str) -> Labels {
    vec![
        ("session", session.to_string()),
        ("topic", topic.to_string()),
    ]
}

/// Sessions by state, and their receive threads' lateness and take-backs.
fn session_families(sessions: &[SessionStatus]) -> Vec<Family> {
    const STATES: [&str; 5] = [
        "recording",
        "paused",
        "buffering",
        "disk_full",
        "write_error",
    ];
    let mut by_state = [0u32; 5];
    let gauge = |name, help, unit| Family::new(name, help, unit, Kind::Gauge);
    let mut p999 = gauge(
        "receive_lateness_p999",
        "How late a receive thread's scheduled passes started, 99.9th percentile.",
        Some(Unit::Seconds),
    );
    let mut max = gauge(
        "receive_lateness_max",
        "How late a receive thread's latest scheduled pass started.",
        Some(Unit::Seconds),
    );
    let mut takebacks = Family::new(
        "receive_takebacks",
        "Loans taken back from the writer: spilled to recorder memory, or dropped with it full.",
        None,
        Kind::Counter,
    );
    for session in sessions {
        by_state[STATES
            .iter()
            .position(|state| *state == session_state(session))
            .expect("a known state")] += 1;
        for thread in &session.receive_threads {
            let labels = || {
                vec![
                    ("session", session.name.clone()),
                    ("source", thread.source.clone()),
                ]
            };
            p999.samples.push((labels(), thread.lateness_p999_us / 1e6));
            max.samples.push((labels(), thread.lateness_max_us / 1e6));
            takebacks.samples.push((labels(), thread.reclaimed as f64));
        }
    }
    let mut states = gauge("sessions", "Running sessions by state.", None);
    for (state, count) in STATES.iter().zip(by_state) {
        states
            .samples
            .push((vec![("state", state.to_string())], f64::from(count)));
    }
    vec![states, p999, max, takebacks]
}

/// `write_error`, `disk_full`, `paused`, `buffering` (a pre-trigger session between
/// windows) or `recording`.
pub fn session_state(session: &SessionStatus) -> &'static str {
    if session.write_error.is_some() {
        "write_error"
    } else if session.disk_full.is_some() {
        "disk_full"
    } else if session.paused {
        "paused"
    } else if session.buffer.is_some() && session.current_files.is_empty() {
        "buffering"
    } else {
        "recording"
    }
}

/// The data directory's free space, and the seal keys held.
fn disk_families(snapshot: &Snapshot) -> Vec<Family> {
    let facts = &snapshot.facts;
    let mut families = vec![Family::new(
        "data_min_free",
        "min_free_space: below it sessions pause writing.",
        Some(Unit::Bytes),
        Kind::Gauge,
    )
    .with(vec![], facts.min_free_space as f64)];
    if let Some(free) = facts.free_bytes {
        families.push(
            Family::new(
                "data_free",
                "Free space of the data directory's file system.",
                Some(Unit::Bytes),
                Kind::Gauge,
            )
            .with(vec![], free as f64),
        );
    }
    if let Some(keys) = facts.seal_keys {
        families.push(
            Family::new(
                "seal_keys",
                "File keys of sealed files recd holds in memory, to cut those files; each is \
                 forgotten once its file is deleted.",
                None,
                Kind::Gauge,
            )
            .with(vec![], keys as f64),
        );
    }
    families
}

/// How long the oldest files have waited for background work, what retention deleted
/// before it, and how much of the time background work gets.
fn backlog_families(snapshot: &Snapshot) -> Vec<Family> {
    let Some(backlog) = &snapshot.backlog else {
        return Vec::new();
    };
    let mut families = vec![
        Family::new(
            "files_waiting_to_finish",
            "Closed files waiting to be indexed or compressed.",
            None,
            Kind::Gauge,
        )
        .with(vec![], backlog.finish_waiting as f64),
        Family::new(
            "finish_oldest_waiting",
            "How long the oldest file waiting to be finished has waited (0 when none waits).",
            Some(Unit::Seconds),
            Kind::Gauge,
        )
        .with(vec![], backlog.finish_oldest_s.unwrap_or(0.0)),
        Family::new(
            "files_deleted_unfinished",
            "Files retention deleted before they were finished.",
            None,
            Kind::Counter,
        )
        .with(vec![], backlog.deleted_unfinished as f64),
    ];
    if snapshot.uploads.is_some() {
        families.push(
            Family::new(
                "upload_oldest_waiting",
                "How long the oldest file waiting to be uploaded has waited (0 when none waits).",
                Some(Unit::Seconds),
                Kind::Gauge,
            )
            .with(vec![], backlog.upload_oldest_s.unwrap_or(0.0)),
        );
        families.push(
            Family::new(
                "files_deleted_unuploaded",
                "Files retention deleted before they were uploaded: their data never left the vehicle.",
                None,
                Kind::Counter,
            )
            .with(vec![], backlog.deleted_unuploaded as f64),
        );
    }
    if !backlog.background_mode.is_empty() {
        families.push(
            Family::new(
                "background",
                "How much of the time finishing and uploads get: running (no recording loses samples), throttled (they lose as much without) or backed off (they lose more with it).",
                None,
                Kind::Info,
            )
            .with(vec![("mode", backlog.background_mode.clone())], 1.0),
        );
    }
    families
}

/// The upload queue, what was uploaded and what stops uploads; none when uploads are off.
fn upload_families(snapshot: &Snapshot) -> Vec<Family> {
    let Some(uploads) = &snapshot.uploads else {
        return Vec::new();
    };
    let waiting = (uploads.files.iter())
        .filter(|file| matches!(file.state, UploadState::Queued | UploadState::Uploading));
    let (files, bytes) = waiting.fold((0u64, 0u64), |(files, bytes), file| {
        (files + 1, bytes + file.bytes.saturating_sub(file.sent))
    });
    let mut families = vec![
        Family::new(
            "upload_queue_files",
            "Files waiting to be uploaded.",
            None,
            Kind::Gauge,
        )
        .with(vec![], files as f64),
        Family::new(
            "upload_queue",
            "Bytes waiting to be uploaded.",
            Some(Unit::Bytes),
            Kind::Gauge,
        )
        .with(vec![], bytes as f64),
        Family::new(
            "uploaded",
            "Bytes uploaded and verified.",
            Some(Unit::Bytes),
            Kind::Counter,
        )
        .with(vec![], uploads.uploaded_bytes as f64),
        Family::new(
            "uploaded_files",
            "Files uploaded and verified.",
            None,
            Kind::Counter,
        )
        .with(vec![], uploads.uploaded_files as f64),
    ];
    if let Some(error) = &uploads.error {
        families.push(
            Family::new(
                "upload_last_error",
                "What stops uploads now (retried until it clears); absent while they flow.",
                None,
                Kind::Info,
            )
            .with(vec![("error", error.clone())], 1.0),
        );
    }
    families
}
