//! `rec status`'s lines on the `[[rule]]`s: what each watches, whether it runs, how often
//! it was evaluated, fired, skipped (fell behind) or failed, and why it cannot run.

use recd_control::{RuleState, RuleStatus};

/// One line per rule (and one more for its problem), empty without rules.
pub fn rules_text(rules: &[RuleStatus]) -> String {
    let mut text = String::new();
    for rule in rules {
        let state = match rule.state {
            RuleState::Waiting => "waiting for its topic",
            RuleState::Watching => "watching",
            RuleState::Refused => "REFUSED",
        };
        let last = rule
            .last_fired_ns
            .map(|ns| format!(" (last at {})", crate::format::timestamp(ns)))
            .unwrap_or_default();
        let origin = match rule.origin.as_str() {
            "" => String::new(),
            origin => format!(", from {origin}"),
        };
        text += &format!(
            "rule {} ({}{origin}): {state}; {} evaluated, {} fired{last}, {} skipped, {} errors\n",
            rule.name, rule.watches, rule.evaluated, rule.fired, rule.skipped, rule.errors
        );
        if let Some(problem) = &rule.problem {
            text += &format!("  {problem}\n");
        }
    }
    text
}
