//! The `[[rule]]` tables of recd.toml, and their checking into [`Rule`]s.

use std::collections::{BTreeMap, HashSet};
use std::time::Duration;

use recd_health::HealthState;
use recd_storage::window;
use serde::{Deserialize, Serialize};

use crate::condition::{Condition, Layout};
use crate::error::RuleError;
use crate::expression::Expression;
use crate::fields::Fields;
use crate::glob::glob_match;

/// One `[[rule]]` table as written.
#[derive(Serialize, Deserialize, Debug, Clone, Default, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RuleConfig {
    /// The rule's unique name.
    #[serde(default)]
    pub name: String,
    /// The topic whose messages the condition reads (content rules).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub topic: Option<String>,
    /// A topic name glob whose health the rule watches (health rules).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub health: Option<String>,
    /// The CEL condition over `msg` and `prev` (content rules).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub when: Option<String>,
    /// How long the condition must hold before the rule fires (default 0).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hold: Option<String>,
    /// How much before the firing the incident keeps (default 30s, at most 7 days).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub before: Option<String>,
    /// How much after the firing the incident keeps (default 10s, at most 7 days).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub after: Option<String>,
    /// No second incident of this rule within this long (default 0).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub holdoff: Option<String>,
    /// Globs of the session names it triggers (default: all).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sessions: Vec<String>,
    /// Whether the incident is a fleet one.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub fleet: bool,
    /// Declared fields of an iceoryx2 payload, name → `kind@offset`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fields: Option<BTreeMap<String, String>>,
    /// The health states that fire a health rule (default slow, stalled, missing).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub states: Option<Vec<String>>,
}

/// What a rule watches.
#[derive(Debug, Clone)]
pub enum RuleKind {
    /// A condition on a topic's messages.
    Content {
        /// The topic.
        topic: String,
        /// The condition.
        expression: Expression,
        /// The declared fields, for a topic without a schema (iceoryx2).
        fields: Option<Fields>,
    },
    /// The health of the topics matching a glob.
    Health {
        /// The topic name glob.
        pattern: String,
        /// The states that fire it.
        states: Vec<HealthState>,
    },
}

/// A checked rule.
#[derive(Debug, Clone)]
pub struct Rule {
    /// Its unique name.
    pub name: String,
    /// What it watches.
    pub kind: RuleKind,
    /// How long the condition must hold before it fires.
    pub hold: Duration,
    /// How much before the firing its incident keeps.
    pub before: Duration,
    /// How much after the firing its incident keeps.
    pub after: Duration,
    /// No second incident within this long of the previous one.
    pub holdoff: Duration,
    /// Globs of the session names it triggers; empty: all.
    pub sessions: Vec<String>,
    /// Whether its incidents are fleet ones.
    pub fleet: bool,
}

impl Rule {
    /// Whether it triggers the session `name`: one of its globs (`*`, `?`) matches, or it
    /// has none.
    pub fn triggers_session(&self, name: &str) -> bool {
        self.sessions.is_empty() || self.sessions.iter().any(|g| glob_match(g, name))
    }
}

/// The health states a health rule may name.
const STATES: [HealthState; 3] = [
    HealthState::Slow,
    HealthState::Stalled,
    HealthState::Missing,
];

fn duration(
    rule: &str,
    key: &str,
    value: &Option<String>,
    default: &str,
) -> Result<Duration, RuleError> {
    let text = value.as_deref().unwrap_or(default);
    humantime::parse_duration(text.trim()).map_err(|e| {
        RuleError::invalid(
            rule,
            key,
            format!("{text:?} is not a duration ({e}); write e.g. \"200ms\", \"30s\", \"2m\""),
        )
    })
}

/// A side of a rule's window: `value` or `default`, at most what recd accepts on either
/// side of a moment.
fn side(
    rule: &str,
    key: &'static str,
    value: &Option<String>,
    default: Duration,
) -> Result<Duration, RuleError> {
    let side = match value {
        Some(_) => duration(rule, key, value, "0s")?,
        None => default,
    };
    window::checked_side(key, side)
        .map_err(|refused| RuleError::invalid(rule, key, refused.to_string()))
}

/// Checks every rule, as far as it can be without a schema, and builds them.
pub fn check_rules(configs: &[RuleConfig]) -> Result<Vec<Rule>, RuleError> {
    let mut names = HashSet::new();
    let mut rules = Vec::with_capacity(configs.len());
    for (i, config) in configs.iter().enumerate() {
        if config.name.trim().is_empty() {
            return Err(RuleError::EmptyName { index: i + 1 });
        }
        if !names.insert(config.name.as_str()) {
            return Err(RuleError::DuplicateName {
                name: config.name.clone(),
            });
        }
        rules.push(check_rule(config)?);
    }
    Ok(rules)
}

fn check_rule(config: &RuleConfig) -> Result<Rule, RuleError> {
    let name = config.name.as_str();
    let invalid = |key: &str, problem: &str| RuleError::invalid(name, key, problem);
    let kind = match (&config.topic, &config.health) {
        (Some(_), Some(_)) => {
            return Err(invalid(
                "topic",
                "a rule has either topic (a condition on its messages) or health (a topic's health), not both",
            ))
        }
        (None, None) => {
            return Err(invalid(
                "topic",
                "missing: give topic (with when) for a condition on a topic's messages, or health for a topic's health",
            ))
        }
        (Some(topic), None) => content(config, topic)?,
        (None, Some(pattern)) => health(config, pattern)?,
    };
    Ok(Rule {
        name: name.to_owned(),
        kind,
        hold: duration(name, "hold", &config.hold, "0s")?,
        before: side(name, "before", &config.before, window::RULE_BEFORE)?,
        after: side(name, "after", &config.after, window::RULE_AFTER)?,
        holdoff: duration(name, "holdoff", &config.holdoff, "0s")?,
        sessions: config.sessions.clone(),
        fleet: config.fleet,
    })
}

fn content(config: &RuleConfig, topic: &str) -> Result<RuleKind, RuleError> {
    let name = config.name.as_str();
    if topic.trim().is_empty() {
        return Err(RuleError::invalid(name, "topic", "is empty"));
    }
    if config.states.is_some() {
        return Err(RuleError::invalid(
            name,
            "states",
            "only a health rule has states",
        ));
    }
    let Some(when) = &config.when else {
        return Err(RuleError::invalid(
            name,
            "when",
            "missing: a topic rule needs a condition, e.g. when = \"msg.speed > 30.0\"",
        ));
    };
    let condition = |error| RuleError::Condition {
        rule: name.to_owned(),
        error,
    };
    let expression = Expression::parse(when).map_err(condition)?;
    let fields = match &config.fields {
        None => None,
        Some(specs) => {
            let fields = Fields::parse(specs).map_err(|(field, problem)| {
                RuleError::invalid(name, &format!("fields.{field}"), problem)
            })?;
            let layout = Layout::Fields {
                fields: &fields,
                user_header_size: 0,
            };
            Condition::compile(&expression, layout).map_err(condition)?;
            Some(fields)
        }
    };
    Ok(RuleKind::Content {
        topic: topic.to_owned(),
        expression,
        fields,
    })
}

fn health(config: &RuleConfig, pattern: &str) -> Result<RuleKind, RuleError> {
    let name = config.name.as_str();
    if pattern.trim().is_empty() {
        return Err(RuleError::invalid(name, "health", "is empty"));
    }
    if config.when.is_some() {
        return Err(RuleError::invalid(
            name,
            "when",
            "a health rule has no condition; it fires when a matching topic's health enters one of its states",
        ));
    }
    if config.fields.is_some() {
        return Err(RuleError::invalid(
            name,
            "fields",
            "only a topic rule has fields",
        ));
    }
    let allowed = || {
        STATES
            .iter()
            .map(|s| s.name())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let states = match &config.states {
        None => STATES.to_vec(),
        Some(list) if list.is_empty() => {
            return Err(RuleError::invalid(
                name,
                "states",
                format!("is empty; name one or more of {}", allowed()),
            ))
        }
        Some(list) => list
            .iter()
            .map(|s| {
                STATES
                    .into_iter()
                    .find(|st| st.name() == s.trim())
                    .ok_or_else(|| {
                        RuleError::invalid(
                            name,
                            "states",
                            format!(
                                "{s:?} is not a state a rule can fire on; allowed: {}",
                                allowed()
                            ),
                        )
                    })
            })
            .collect::<Result<Vec<_>, _>>()?,
    };
    Ok(RuleKind::Health {
        pattern: pattern.to_owned(),
        states,
    })
}
