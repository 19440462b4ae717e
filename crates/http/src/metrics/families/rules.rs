//! The rules' families: per `[[rule]]`, its evaluations, firings, samples skipped because
//! it fell behind, evaluation errors, and whether it is refused on its topic.

use recd_control::{RuleState, RuleStatus};

use super::{Family, Kind};

/// The rules' families; none without rules.
pub fn families(rules: &[RuleStatus]) -> Vec<Family> {
    if rules.is_empty() {
        return Vec::new();
    }
    let per_rule = |name, help, kind, value: fn(&RuleStatus) -> f64| {
        rules
            .iter()
            .fold(Family::new(name, help, None, kind), |family, rule| {
                family.with(vec![("rule", rule.name.clone())], value(rule))
            })
    };
    vec![
        per_rule(
            "rule_evaluations",
            "Samples (or health changes) each [[rule]] was evaluated on.",
            Kind::Counter,
            |r| r.evaluated as f64,
        ),
        per_rule(
            "rule_firings",
            "Times each [[rule]] fired; each firing is an incident (origin rule) of every session it names.",
            Kind::Counter,
            |r| r.fired as f64,
        ),
        per_rule(
            "rule_skipped",
            "Samples each [[rule]] did not evaluate because the rules fell behind (skipped rather than delay the recording).",
            Kind::Counter,
            |r| r.skipped as f64,
        ),
        per_rule(
            "rule_errors",
            "Samples each [[rule]] could not evaluate (undecodable, or its expression failed on them).",
            Kind::Counter,
            |r| r.errors as f64,
        ),
        per_rule(
            "rule_refused",
            "1 while a [[rule]] cannot run on its topic (rec rules says why).",
            Kind::Gauge,
            |r| f64::from(u8::from(r.state == RuleState::Refused)),
        ),
    ]
}
