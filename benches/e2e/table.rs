//! The results table, in the style of performance_test.

use std::collections::BTreeMap;

use recd_engine::{ReceiveThreadStatus, TopicCounts};
use recd_workload::report::LoadReport;
use recd_workload::verify::TopicCheck;

use crate::measure::Usage;

/// Everything one run measured.
pub struct Results<'a> {
    pub scenario: &'a str,
    pub report: &'a LoadReport,
    pub publish_seconds: f64,
    pub checks: &'a BTreeMap<String, TopicCheck>,
    /// The recorder's own counts, by service.
    pub recorder_counts: &'a BTreeMap<String, TopicCounts>,
    pub recorded_bytes: u64,
    pub recording_seconds: f64,
    pub recorder: Usage,
    pub load: Usage,
    pub plain: Usage,
    pub plain_seconds: f64,
    /// `iox2 service record`'s usage and the bytes it wrote, when it ran.
    pub peer: Option<(Usage, u64)>,
    /// The recorder's receive threads at its stop.
    pub receive_threads: &'a [ReceiveThreadStatus],
}

fn line(widths: &[usize]) -> String {
    let cells: Vec<String> = widths.iter().map(|w| "-".repeat(w + 2)).collect();
    format!("+{}+", cells.join("+"))
}

fn row(widths: &[usize], cells: &[String]) -> String {
    let cells: Vec<String> = cells
        .iter()
        .zip(widths)
        .map(|(c, w)| format!(" {c:>w$} "))
        .collect();
    format!("|{}|", cells.join("|"))
}

fn table(header: &[&str], rows: &[Vec<String>]) {
    let mut widths: Vec<usize> = header.iter().map(|h| h.len()).collect();
    for r in rows {
        for (w, c) in widths.iter_mut().zip(r) {
            *w = (*w).max(c.len());
        }
    }
    println!("{}", line(&widths));
    println!(
        "{}",
        row(
            &widths,
            &header.iter().map(|s| s.to_string()).collect::<Vec<_>>()
        )
    );
    println!("{}", line(&widths));
    for r in rows {
        println!("{}", row(&widths, r));
    }
    println!("{}", line(&widths));
}

fn usage_row(name: &str, usage: &Usage, gb: f64, seconds: f64) -> Vec<String> {
    vec![
        name.to_string(),
        format!("{:.2}", usage.utime),
        format!("{:.2}", usage.stime),
        format!(
            "{:.1} %",
            100.0 * usage.cpu() / seconds.max(1e-9) / cores() as f64
        ),
        format!("{:.2}", usage.cpu() / seconds.max(1e-9)),
        format!("{:.3}", usage.cpu() / gb.max(1e-9)),
        format!("{:.1}", usage.max_rss_kib as f64 / 1024.0),
        usage.minflt.to_string(),
        usage.majflt.to_string(),
        usage.nvcsw.to_string(),
        usage.nivcsw.to_string(),
    ]
}

fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// Percentiles of `log_time - publish_time` over every recorded message.
fn print_receive_lag(checks: &BTreeMap<String, TopicCheck>) {
    let mut lags: Vec<i64> = checks
        .values()
        .flat_map(|c| c.receive_lags_ns.iter().copied())
        .collect();
    if lags.is_empty() {
        return;
    }
    lags.sort_unstable();
    let at = |q: f64| lags[((lags.len() - 1) as f64 * q).round() as usize] as f64 / 1e6;
    table(
        &["receive lag ms", "p50", "p90", "p99", "p99.9", "max"],
        &[vec![
            format!("{} messages", lags.len()),
            format!("{:.3}", at(0.5)),
            format!("{:.3}", at(0.9)),
            format!("{:.3}", at(0.99)),
            format!("{:.3}", at(0.999)),
            format!("{:.3}", at(1.0)),
        ]],
    );
}

/// Whether every sample the recorder took is written, dropped, filtered, evicted or
/// paused.
fn accounted(c: &TopicCounts) -> bool {
    c.received == c.written + c.dropped + c.filtered + c.evicted + c.paused
}

/// One row of the topic table: the file's view, then the recorder's counts.
fn topic_row(name: &str, sent: u64, in_file: u64, bad: usize, c: &TopicCounts) -> Vec<String> {
    [
        name.to_string(),
        sent.to_string(),
        in_file.to_string(),
        sent.saturating_sub(in_file + c.evicted + c.filtered)
            .to_string(),
        bad.to_string(),
        c.received.to_string(),
        c.dropped.to_string(),
        c.evicted.to_string(),
        c.filtered.to_string(),
        c.lost.to_string(),
        c.overflows.to_string(),
    ]
    .into()
}

/// Prints the tables.
pub fn print(r: &Results) {
    println!("scenario {} on {} cores", r.scenario, cores());
    let mut rows = Vec::new();
    let (mut sent, mut received) = (0, 0);
    let mut counted = TopicCounts::default();
    let mut unaccounted = Vec::new();
    for topic in &r.report.topics {
        let check = r.checks.get(&topic.service);
        let got = check.map_or(0, |c| c.messages);
        let bad = check.map_or(0, |c| c.bad.len());
        let counts = r
            .recorder_counts
            .get(&topic.service)
            .copied()
            .unwrap_or_default();
        sent += topic.sent;
        received += got;
        counted.received += counts.received;
        counted.written += counts.written;
        counted.dropped += counts.dropped;
        counted.paused += counts.paused;
        counted.evicted += counts.evicted;
        counted.filtered += counts.filtered;
        counted.lost += counts.lost;
        counted.overflows += counts.overflows;
        if !accounted(&counts) {
            unaccounted.push(topic.service.as_str());
        }
        if r.report.topics.len() <= 16 {
            rows.push(topic_row(&topic.service, topic.sent, got, bad, &counts));
        }
    }
    let bad = r.checks.values().map(|c| c.bad.len()).sum();
    rows.push(topic_row("all", sent, received, bad, &counted));
    // The file's view (received = in the file; lost = neither in the file nor let go by a
    // pre-trigger buffer or a rate limit), then the recorder's own counters: samples it
    // took from iceoryx2, dropped from a full handoff, evicted from a pre-trigger buffer,
    // filtered by a rate limit, and sequence gaps it saw.
    table(
        &[
            "topic",
            "sent",
            "received",
            "lost",
            "corrupt",
            "recd took",
            "recd dropped",
            "recd evicted",
            "recd filtered",
            "recd gaps",
            "recd overflows",
        ],
        &rows,
    );
    if unaccounted.is_empty() {
        println!("recd took = written + dropped + filtered + evicted + paused on every topic");
    } else {
        println!(
            "recd took ≠ written + dropped + filtered + evicted + paused on {} topic(s): {}",
            unaccounted.len(),
            unaccounted.join(", ")
        );
    }
    print_receive_lag(r.checks);
    for thread in r.receive_threads {
        println!(
            "receive thread {}: {}{}, {} scheduled passes, late p99.9 {:.2} ms, max {:.2} ms; {} loans taken back ({} spilled, {:.1}/s)",
            thread.source,
            thread.scheduling,
            thread
                .priority_warning
                .as_ref()
                .map_or(String::new(), |w| format!(" ({w})")),
            thread.passes,
            thread.lateness_p999.as_secs_f64() * 1e3,
            thread.lateness_max.as_secs_f64() * 1e3,
            thread.reclaimed,
            thread.spilled,
            thread.spilled as f64 / r.recording_seconds.max(1e-9),
        );
    }

    let gb = r.report.bytes() as f64 / 1e9;
    let publish_rate = r.report.bytes() as f64 / r.publish_seconds.max(1e-9) / 1e6;
    let plain_rate = r.report.bytes() as f64 / r.plain_seconds.max(1e-9) / 1e6;
    table(
        &[
            "published MB/s",
            "recorded MB",
            "plain write MB/s",
            "published / plain",
        ],
        &[vec![
            format!("{publish_rate:.1}"),
            format!("{:.1}", r.recorded_bytes as f64 / 1e6),
            format!("{plain_rate:.1}"),
            format!("{:.2}", publish_rate / plain_rate.max(1e-9)),
        ]],
    );
    let mut usage_rows = vec![
        usage_row("recd (engine)", &r.recorder, gb, r.recording_seconds),
        usage_row("plain write", &r.plain, gb, r.plain_seconds),
        usage_row("load generator", &r.load, gb, r.publish_seconds),
    ];
    if let Some((peer, _)) = &r.peer {
        usage_rows.push(usage_row(
            "iox2 service record",
            peer,
            gb,
            r.recording_seconds,
        ));
    }
    table(
        &[
            "process",
            "utime s",
            "stime s",
            "CPU/core",
            "cores",
            "CPU s/GB",
            "max RSS MiB",
            "minflt",
            "majflt",
            "nvcsw",
            "nivcsw",
        ],
        &usage_rows,
    );
    println!(
        "recorder CPU per GB / plain write CPU per GB = {:.2}",
        r.recorder.cpu() / r.plain.cpu().max(1e-9)
    );
    if let Some((peer, bytes)) = &r.peer {
        println!(
            "iox2 service record wrote {:.1} MB; its CPU per GB / plain write CPU per GB = {:.2}",
            *bytes as f64 / 1e6,
            peer.cpu() / r.plain.cpu().max(1e-9)
        );
    }
}
