//! A session's health at its end: the worst verdict of its files, and the required topics
//! that failed (missing, or stalled in a file), which make `rec stop` exit 5.

use recd_control::{FailedRequirement, SessionHealth};
use recd_engine::RecordingSummary;
use recd_health::{HealthState, Verdict};

/// The health of the session `summary` reports.
pub fn session_health(summary: &RecordingSummary) -> SessionHealth {
    let mut failed_required: Vec<FailedRequirement> = summary
        .required
        .iter()
        .filter(|r| r.was_missing || r.state == HealthState::Missing)
        .map(|r| FailedRequirement {
            topic: r.pattern.clone(),
            state: HealthState::Missing,
        })
        .collect();
    // A stall counts where a file shows it: a silence every topic shares at the end (the
    // publishers stopped before the session) is none.
    failed_required.extend(
        summary
            .topics
            .iter()
            .filter(|t| t.health.expected.required)
            .filter(|t| {
                summary
                    .health
                    .gaps
                    .get(&t.name)
                    .is_some_and(|&gaps| gaps > 0)
            })
            .map(|t| FailedRequirement {
                topic: t.name.clone(),
                state: HealthState::Stalled,
            }),
    );
    let missing_now = summary
        .required
        .iter()
        .any(|r| r.state == HealthState::Missing);
    let verdict = if missing_now {
        Verdict::Missing
    } else if failed_required.is_empty() {
        summary.health.worst.unwrap_or(Verdict::Ok)
    } else {
        summary
            .health
            .worst
            .unwrap_or(Verdict::Ok)
            .max(Verdict::Degraded)
    };
    SessionHealth {
        verdict,
        failed_required,
    }
}
