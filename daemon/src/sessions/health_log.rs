//! How a topic's health change reads in the log: once per change, WARN on the way down,
//! INFO on the way back, with the topic, the session, since when and the gap.

use std::time::{Duration, UNIX_EPOCH};

use recd_health::{HealthEvent, HealthState};

/// Logs `event` of session `session`.
pub fn log_change(session: &str, event: &HealthEvent) {
    let since = humantime::format_rfc3339_millis(UNIX_EPOCH + Duration::from_nanos(event.since_ns));
    let gap_ms = event.gap_ns.map(|gap| gap / 1_000_000);
    let text = describe(event);
    if event.is_worse() {
        tracing::warn!(session, topic = %event.topic, from = %event.from, to = %event.to, %since, "{text}");
    } else {
        tracing::info!(session, topic = %event.topic, from = %event.from, to = %event.to, %since, gap_ms, "{text}");
    }
}

/// The change in words.
pub fn describe(event: &HealthEvent) -> String {
    let topic = &event.topic;
    let ms = |ns: u64| humantime::format_duration(Duration::from_millis(ns / 1_000_000));
    match event.to {
        HealthState::Stalled => format!(
            "topic {topic} stalled: no sample for longer than {}",
            event
                .max_gap_ns
                .map_or_else(|| "its max_gap".to_string(), |gap| ms(gap).to_string())
        ),
        HealthState::Slow => format!(
            "topic {topic} slow: fewer than {} samples in the last second",
            event
                .min_rate
                .map_or_else(|| "min_rate".to_string(), |rate| format!("{rate:.1}"))
        ),
        HealthState::Missing => {
            format!("required topic {topic} missing: no sample since the session started")
        }
        HealthState::Ok | HealthState::Unchecked => match (event.from, event.gap_ns) {
            (HealthState::Stalled, Some(gap)) => {
                format!("topic {topic} back after a gap of {}", ms(gap))
            }
            (HealthState::Missing, _) => format!("required topic {topic} came"),
            (from, _) => format!("topic {topic} ok again (was {from})"),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(from: HealthState, to: HealthState, gap_ns: Option<u64>) -> HealthEvent {
        HealthEvent {
            topic: "camera/front".into(),
            from,
            to,
            since_ns: 0,
            gap_ns,
            min_rate: Some(25.0),
            max_gap_ns: Some(200_000_000),
            required: true,
        }
    }

    #[test]
    fn each_change_reads_as_what_happened() {
        use HealthState::*;
        assert_eq!(
            describe(&event(Ok, Stalled, None)),
            "topic camera/front stalled: no sample for longer than 200ms"
        );
        assert_eq!(
            describe(&event(Stalled, Ok, Some(712_400_000))),
            "topic camera/front back after a gap of 712ms"
        );
        assert_eq!(
            describe(&event(Ok, Slow, None)),
            "topic camera/front slow: fewer than 25.0 samples in the last second"
        );
        assert_eq!(
            describe(&event(Slow, Ok, None)),
            "topic camera/front ok again (was slow)"
        );
        assert_eq!(
            describe(&event(Ok, Missing, None)),
            "required topic camera/front missing: no sample since the session started"
        );
    }
}
