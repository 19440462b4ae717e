//! The per-topic table and the loss and receive-thread lines that `rec stop` and
//! `rec status` share.

use recd_control::{ReceiveThreadReport, TopicReport};

use crate::format;
use crate::table::natural_cmp;

/// A line saying which topics may have lost samples uncounted; none when no topic did.
pub(super) fn unknown_loss_line(topics: &[&TopicReport]) -> Option<String> {
    let names: Vec<&str> = topics
        .iter()
        .filter(|t| t.unknown_loss)
        .map(|t| t.name.as_str())
        .collect();
    (!names.is_empty()).then(|| {
        format!(
            "  unknown loss on {} topic{} ({}): a publisher's queue was found full and its samples carry no sequence numbers, so samples may be missing uncounted\n",
            names.len(),
            if names.len() == 1 { "" } else { "s" },
            names.join(", ")
        )
    })
}

/// One line per receive thread (how it is scheduled, how late its passes came, loans it
/// took back), and its warnings.
pub(super) fn receive_thread_lines(threads: &[ReceiveThreadReport]) -> String {
    let mut text = String::new();
    for thread in threads {
        text += &format!(
            "  receive {}: {}, {} scheduled passes, late p99.9 {} max {}, {} spilled, {} reclaimed\n",
            thread.source,
            thread.scheduling,
            thread.passes,
            format::micros(thread.lateness_p999_us),
            format::micros(thread.lateness_max_us),
            thread.spilled,
            thread.reclaimed,
        );
        for warning in thread.priority_warning.iter().chain(&thread.memory_warning) {
            text += &format!("  warning: {warning}\n");
        }
    }
    text
}

/// A count shown only when some topic has any: its column and its value.
type OptionalCount = (&'static str, fn(&TopicReport) -> u64);

/// The counts shown only when some topic has any.
const OPTIONAL_COUNTS: [OptionalCount; 2] = [
    // Samples a rate limit or downsampling let go of.
    ("filtered", |counts| counts.filtered),
    // Samples that arrived a second time (a sequence number seen already).
    ("repeated", |counts| counts.repeated),
];

/// The [`OPTIONAL_COUNTS`] some topic has.
fn optional_counts<T>(topics: &[T], report: impl Fn(&T) -> &TopicReport) -> Vec<OptionalCount> {
    OPTIONAL_COUNTS
        .into_iter()
        .filter(|(_, value)| topics.iter().any(|t| value(report(t)) > 0))
        .collect()
}

/// One row per topic, sorted by name (naturally: `topic_6` before `topic_56`): the
/// name, `middle`'s cells, dropped, lost and overflows, and `filtered` or `repeated`
/// when any topic has such samples (see [`with_optional_counts`]).
pub(super) fn rows_by_topic<T>(
    topics: &[T],
    report: impl Fn(&T) -> &TopicReport,
    middle: impl Fn(&T) -> Vec<String>,
) -> Vec<Vec<String>> {
    let optional = optional_counts(topics, &report);
    let mut topics: Vec<&T> = topics.iter().collect();
    topics.sort_by(|a, b| natural_cmp(&report(a).name, &report(b).name));
    topics
        .into_iter()
        .map(|t| {
            let counts = report(t);
            let mut row = vec![counts.name.clone()];
            row.extend(middle(t));
            let lost = if counts.unknown_loss {
                "unknown loss".to_string()
            } else {
                counts.lost.to_string()
            };
            row.extend([
                counts.dropped.to_string(),
                lost,
                counts.overflows.to_string(),
            ]);
            row.extend(optional.iter().map(|(_, value)| value(counts).to_string()));
            row
        })
        .collect()
}

/// `header` with the optional columns the rows of [`rows_by_topic`] have for `topics`.
pub(super) fn with_optional_counts<'a, T>(
    header: &[&'a str],
    topics: &[T],
    report: impl Fn(&T) -> &TopicReport,
) -> Vec<&'a str> {
    let mut header = header.to_vec();
    header.extend(
        optional_counts(topics, report)
            .iter()
            .map(|(name, _)| *name),
    );
    header
}

/// The header of a finished session's topic table (`rec stop`, `rec status` of a
/// stopped session).
pub(super) const FINISHED_TOPIC_HEADER: [&str; 7] = [
    "topic",
    "received",
    "written",
    "bytes",
    "dropped",
    "lost",
    "overflows",
];

/// The counts a finished session's table shows between a topic's name and its losses.
pub(super) fn finished_counts(report: &TopicReport) -> Vec<String> {
    vec![
        report.received.to_string(),
        report.written.to_string(),
        format::bytes(report.bytes_written),
    ]
}
