//! How `rec info` and `rec status` show whether a recording is usable: a file's health
//! record as a table per topic (and its gaps), a topic's live state as one cell.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use recd_control::SessionStatus;

use recd_health::{
    worst_state, Expected, ExpectedFrom, FileHealthSummary, HealthState, TopicFileHealth,
    TopicHealth,
};

use crate::format;
use crate::table::table;

/// The file's verdict and a row per topic: expectation, samples, rate over 1 s windows,
/// gaps and the longest silence.
pub fn file_health(health: &FileHealthSummary) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "health:      {}", health.verdict);
    for pattern in &health.missing {
        let _ = writeln!(
            out,
            "  missing: {pattern} (required; no sample in the session)"
        );
    }
    let rows: Vec<Vec<String>> = health
        .topics
        .iter()
        .map(|(name, topic)| topic_row(name, topic))
        .collect();
    if !rows.is_empty() {
        let header = [
            "  topic",
            "state",
            "expected",
            "samples",
            "rate/s min/med/max",
            "gaps",
            "longest",
        ];
        out += &table(&header, &rows);
    }
    out
}

fn topic_row(name: &str, topic: &TopicFileHealth) -> Vec<String> {
    let rate = topic.rate.map_or("-".to_string(), |r| {
        format!("{:.0}/{:.0}/{:.0}", r.min, r.median, r.max)
    });
    let mut gaps = topic.gaps.to_string();
    if topic.silent_at_end_ns.is_some() {
        gaps += " (silent at the end)";
    }
    vec![
        format!("  {name}"),
        worst_state(topic).to_string(),
        expectation(&topic.expected),
        topic.samples.to_string(),
        rate,
        gaps,
        millis(topic.longest_gap_ns),
    ]
}

/// Each topic's gaps: [last sample before, first after] and their length.
pub fn gap_lines(health: &FileHealthSummary) -> String {
    let mut out = String::new();
    for (name, topic) in &health.topics {
        if topic.gap_map.is_empty() {
            continue;
        }
        let _ = writeln!(out, "gaps of {name}:");
        for [start, end] in &topic.gap_map {
            let _ = writeln!(
                out,
                "  {} to {}  {}",
                format::timestamp(*start),
                format::timestamp(*end),
                millis(end - start)
            );
        }
        if topic.more_gaps > 0 {
            let _ = writeln!(out, "  ... and {} more", topic.more_gaps);
        }
    }
    out
}

/// What is expected of a topic, in a few characters: `25 Hz, 200 ms` (learnt ones marked
/// `~`), `off`, or `-` while it is learnt.
pub fn expectation(expected: &Expected) -> String {
    if expected.from == ExpectedFrom::Off {
        return "off".into();
    }
    let learnt = if expected.from == ExpectedFrom::Learnt {
        "~"
    } else {
        ""
    };
    let mut parts = Vec::new();
    if let Some(rate) = expected.min_rate {
        parts.push(format!("{learnt}≥{rate:.0} Hz"));
    }
    if let Some(gap) = expected.max_gap_ns {
        parts.push(format!("{learnt}≤{}", millis(gap)));
    }
    if expected.required {
        parts.push("required".into());
    }
    if parts.is_empty() {
        "-".into()
    } else {
        parts.join(", ")
    }
}

/// A topic's live state as a status cell: `ok`, `slow`, `stalled 1.2 s`, `-` unchecked.
pub fn state_cell(health: &TopicHealth, now_ns: u64) -> String {
    match (health.state, health.since_ns) {
        (HealthState::Unchecked, _) => "-".into(),
        (HealthState::Stalled, Some(since)) => {
            format!("stalled {:.1} s", now_ns.saturating_sub(since) as f64 / 1e9)
        }
        (state, _) => state.to_string(),
    }
}

/// Now, in ns since the epoch (the status's times are recd's wall clock, on this host).
pub fn now_ns() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64)
}

/// A session's health in one line: how many topics stand where, the ones in trouble by
/// name, and the required topics missing; empty while nothing is checked.
pub fn summary_line(session: &SessionStatus) -> String {
    let mut by_state: BTreeMap<HealthState, Vec<&str>> = BTreeMap::new();
    for topic in &session.topics {
        if let Some(health) = &topic.health {
            by_state
                .entry(health.state)
                .or_default()
                .push(&topic.report.name);
        }
    }
    let missing: Vec<&str> = (session.required.iter())
        .filter(|r| r.state == HealthState::Missing)
        .map(|r| r.pattern.as_str())
        .collect();
    if by_state.keys().all(|s| *s == HealthState::Unchecked) && missing.is_empty() {
        return String::new();
    }
    let mut parts = Vec::new();
    for (state, names) in &by_state {
        match state {
            HealthState::Ok => parts.push(format!("{} ok", names.len())),
            HealthState::Unchecked => parts.push(format!("{} learning or unchecked", names.len())),
            _ => parts.push(format!("{} {state} ({})", names.len(), names.join(", "))),
        }
    }
    let mut line = format!("  health: {}", parts.join(", "));
    if !missing.is_empty() {
        line += &format!("; missing: {} (required)", missing.join(", "));
    }
    line + "\n"
}

fn millis(ns: u64) -> String {
    if ns >= 10_000_000_000 {
        format!("{:.0} s", ns as f64 / 1e9)
    } else if ns >= 1_000_000_000 {
        format!("{:.1} s", ns as f64 / 1e9)
    } else {
        format!("{} ms", ns / 1_000_000)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_degraded_file_shows_its_stalled_topic_and_gaps() {
        let mut file = recd_health::FileHealth::default();
        let ms = 1_000_000;
        for t in (0..2000).step_by(20).chain((2700..5000).step_by(20)) {
            file.add(t * ms, Some(200 * ms));
        }
        let expected = Expected {
            from: ExpectedFrom::Rule("h/*".into()),
            max_gap_ns: Some(200 * ms),
            min_rate: Some(25.0),
            ..Expected::default()
        };
        let topics = [("h/b".to_string(), file.summary(&expected, 4980 * ms))].into();
        let health = FileHealthSummary::new(topics, vec!["/imu".into()]);
        let text = file_health(&health);
        assert!(text.starts_with("health:      missing\n"), "{text}");
        assert!(text.contains("missing: /imu"), "{text}");
        assert!(
            text.contains("h/b") && text.contains("stalled") && text.contains("≥25 Hz, ≤200 ms"),
            "{text}"
        );
        assert!(text.contains("720 ms"), "{text}");
        let gaps = gap_lines(&health);
        assert!(
            gaps.contains("gaps of h/b:") && gaps.contains("720 ms"),
            "{gaps}"
        );
    }

    #[test]
    fn live_cells_say_how_long_a_stall_lasts() {
        let health = TopicHealth {
            state: HealthState::Stalled,
            since_ns: Some(1_000_000_000),
            ..TopicHealth::default()
        };
        assert_eq!(state_cell(&health, 2_500_000_000), "stalled 1.5 s");
        assert_eq!(state_cell(&TopicHealth::default(), 0), "-");
    }
}
