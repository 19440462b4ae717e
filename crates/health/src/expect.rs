//! Expectations: rules, matched in order by topic glob, saying what rate, longest silence
//! and presence a topic must keep (`[[expect]]` in recd.toml, `rec start --expect`).

use std::time::Duration;

use globset::{Glob, GlobMatcher};
use serde::{Deserialize, Serialize};

/// One rule, as recd.toml's `[[expect]]` and `rec start --expect` give it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Expectation {
    /// The topics it applies to: a glob over the topic's name (an iceoryx2 service name or
    /// a ROS 2 topic name), as in `--topic`.
    pub topic: String,
    /// Samples per second at least, over the 1 s rate window; below it the topic is slow.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_rate: Option<f64>,
    /// The longest silence; a longer one is a stall.
    #[serde(
        default,
        with = "humantime_serde",
        skip_serializing_if = "Option::is_none"
    )]
    pub max_gap: Option<Duration>,
    /// A session that records no sample of it within the start-up grace (or `max_gap`, if
    /// longer) reports it missing, and `rec stop` fails.
    #[serde(default)]
    pub required: bool,
    /// `false` turns every check of these topics off.
    #[serde(default = "checked")]
    pub expect: bool,
}

fn checked() -> bool {
    true
}

/// A rule that cannot be used, and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ExpectError {
    /// The topic pattern is not a glob.
    #[error("expectation for {pattern:?}: the topic pattern is not a valid glob: {reason}")]
    Pattern {
        /// The pattern as given.
        pattern: String,
        /// Why it is invalid.
        reason: String,
    },
    /// A compact rule (`--expect`) that does not parse.
    #[error("--expect {text:?}: {reason} (e.g. 'camera/*:25hz', '/imu:max_gap=20ms,required', 'debug/*:off')")]
    Syntax {
        /// The rule as given.
        text: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A value out of range.
    #[error("expectation for {pattern:?}: {reason}")]
    Value {
        /// The rule's pattern.
        pattern: String,
        /// What is wrong.
        reason: String,
    },
}

impl Expectation {
    /// Parses the compact form of `rec start --expect`: `PATTERN[:ITEM[,ITEM...]]`, each
    /// item `25hz` (or `min_rate=25`), `max_gap=200ms`, `required`, or `off`.
    pub fn parse(text: &str) -> Result<Self, ExpectError> {
        let syntax = |reason: String| ExpectError::Syntax {
            text: text.to_string(),
            reason,
        };
        let (pattern, items) = match text.rsplit_once(':') {
            Some((pattern, items)) => (pattern, items),
            None => (text, ""),
        };
        if pattern.is_empty() {
            return Err(syntax("no topic pattern before ':'".into()));
        }
        let mut rule = Expectation {
            topic: pattern.to_string(),
            min_rate: None,
            max_gap: None,
            required: false,
            expect: true,
        };
        for item in items.split(',').map(str::trim).filter(|i| !i.is_empty()) {
            let lower = item.to_ascii_lowercase();
            if lower == "required" {
                rule.required = true;
            } else if lower == "off" || lower == "expect=false" {
                rule.expect = false;
            } else if let Some(value) = lower.strip_prefix("max_gap=") {
                let gap = humantime::parse_duration(value)
                    .map_err(|e| syntax(format!("max_gap {value:?} is not a duration: {e}")))?;
                rule.max_gap = Some(gap);
            } else if let Some(value) = lower
                .strip_prefix("min_rate=")
                .or_else(|| lower.strip_suffix("hz"))
            {
                let value = value.trim_end_matches("hz");
                let rate = value
                    .parse::<f64>()
                    .map_err(|_| syntax(format!("{value:?} is not a rate in Hz")))?;
                rule.min_rate = Some(rate);
            } else {
                return Err(syntax(format!(
                    "unknown item {item:?} (items: 25hz, min_rate=25, max_gap=200ms, required, off)"
                )));
            }
        }
        rule.validate()?;
        Ok(rule)
    }

    /// Checks the values: a rate above 0, a gap above 0.
    pub fn validate(&self) -> Result<(), ExpectError> {
        let value = |reason: &str| ExpectError::Value {
            pattern: self.topic.clone(),
            reason: reason.to_string(),
        };
        if self
            .min_rate
            .is_some_and(|rate| !(rate.is_finite() && rate > 0.0))
        {
            return Err(value("min_rate must be a number of Hz above 0"));
        }
        if self.max_gap.is_some_and(|gap| gap.is_zero()) {
            return Err(value("max_gap must be longer than 0"));
        }
        Glob::new(&self.topic).map_err(|e| ExpectError::Pattern {
            pattern: self.topic.clone(),
            reason: e.kind().to_string(),
        })?;
        Ok(())
    }
}

/// What a rule asks of one topic.
#[derive(Debug, Clone, PartialEq)]
pub struct Rule {
    /// The pattern of the rule.
    pub pattern: String,
    /// Samples per second at least; `None`: learnt (when checked) or not checked.
    pub min_rate: Option<f64>,
    /// The longest silence in ns; `None`: learnt (when checked).
    pub max_gap_ns: Option<u64>,
    /// Whether the topic is required.
    pub required: bool,
    /// False when the rule turns the checks off.
    pub checked: bool,
}

impl Rule {
    /// No checks, where no rule names a topic that cannot be expected to be regular.
    pub fn off() -> Self {
        Self {
            pattern: String::new(),
            min_rate: None,
            max_gap_ns: None,
            required: false,
            checked: false,
        }
    }
}

/// Rules compiled, in order: the first whose pattern matches a topic applies to it.
#[derive(Debug, Clone, Default)]
pub struct Expectations {
    rules: Vec<(GlobMatcher, Expectation)>,
}

impl Expectations {
    /// Compiles `rules` (validated), keeping their order.
    pub fn new(rules: &[Expectation]) -> Result<Self, ExpectError> {
        let mut compiled = Vec::with_capacity(rules.len());
        for rule in rules {
            rule.validate()?;
            let glob = Glob::new(&rule.topic).map_err(|e| ExpectError::Pattern {
                pattern: rule.topic.clone(),
                reason: e.kind().to_string(),
            })?;
            compiled.push((glob.compile_matcher(), rule.clone()));
        }
        Ok(Self { rules: compiled })
    }

    /// The rule of the first expectation that matches the topic `name` (its channel name)
    /// or `service` (where it is recorded from), if any.
    pub fn rule_for(&self, name: &str, service: &str) -> Option<Rule> {
        self.rules
            .iter()
            .find(|(glob, _)| glob.is_match(name) || glob.is_match(service))
            .map(|(_, rule)| Rule {
                pattern: rule.topic.clone(),
                min_rate: rule.min_rate,
                max_gap_ns: (rule.max_gap)
                    .map(|gap| u64::try_from(gap.as_nanos()).unwrap_or(u64::MAX)),
                required: rule.required,
                checked: rule.expect,
            })
    }

    /// The required rules (checked ones), in order.
    pub fn required(&self) -> impl Iterator<Item = &Expectation> {
        self.rules
            .iter()
            .map(|(_, rule)| rule)
            .filter(|rule| rule.required && rule.expect)
    }

    /// Whether `pattern` (a required rule's) matches the topic `name` or `service`.
    pub fn pattern_matches(&self, pattern: &str, name: &str, service: &str) -> bool {
        self.rules
            .iter()
            .find(|(_, rule)| rule.topic == pattern)
            .is_some_and(|(glob, _)| glob.is_match(name) || glob.is_match(service))
    }

    /// Whether there is no rule at all.
    pub fn is_empty(&self) -> bool {
        self.rules.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_compact_form_reads_rate_gap_required_and_off() {
        let rule = Expectation::parse("camera/*:25hz").unwrap();
        assert_eq!(rule.topic, "camera/*");
        assert_eq!(rule.min_rate, Some(25.0));
        assert!(!rule.required && rule.expect);
        let rule = Expectation::parse("/imu:max_gap=20ms,required").unwrap();
        assert_eq!(rule.max_gap, Some(Duration::from_millis(20)));
        assert!(rule.required);
        let rule = Expectation::parse("/odom:min_rate=10.5,max_gap=1s").unwrap();
        assert_eq!(rule.min_rate, Some(10.5));
        assert_eq!(rule.max_gap, Some(Duration::from_secs(1)));
        assert!(!Expectation::parse("debug/*:off").unwrap().expect);
        assert_eq!(Expectation::parse("lidar").unwrap().topic, "lidar");
    }

    #[test]
    fn a_bad_compact_rule_is_named_with_what_is_wrong() {
        let error = Expectation::parse("camera/*:fast").unwrap_err().to_string();
        assert!(error.contains("unknown item \"fast\""), "{error}");
        let error = Expectation::parse("camera/*:max_gap=soon")
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("max_gap \"soon\" is not a duration"),
            "{error}"
        );
        let error = Expectation::parse("camera/*:0hz").unwrap_err().to_string();
        assert!(
            error.contains("min_rate must be a number of Hz above 0"),
            "{error}"
        );
        let error = Expectation::parse(":25hz").unwrap_err().to_string();
        assert!(error.contains("no topic pattern"), "{error}");
        let error = Expectation::parse("a[:25hz").unwrap_err().to_string();
        assert!(error.contains("not a valid glob"), "{error}");
    }

    #[test]
    fn the_first_matching_rule_applies_by_name_or_service() {
        let rules = Expectations::new(&[
            Expectation::parse("camera/rear:off").unwrap(),
            Expectation::parse("camera/*:25hz").unwrap(),
            Expectation::parse("/imu:max_gap=20ms,required").unwrap(),
        ])
        .unwrap();
        assert!(
            !rules
                .rule_for("camera/rear", "camera/rear")
                .unwrap()
                .checked
        );
        let front = rules.rule_for("camera/front", "camera/front").unwrap();
        assert_eq!((front.min_rate, front.checked), (Some(25.0), true));
        let imu = rules.rule_for("/imu", "dds:rt/imu").unwrap();
        assert_eq!(imu.max_gap_ns, Some(20_000_000));
        assert!(rules.rule_for("lidar", "lidar").is_none());
        let required: Vec<_> = rules.required().map(|r| r.topic.as_str()).collect();
        assert_eq!(required, ["/imu"]);
    }

    #[test]
    fn the_toml_form_reads_durations_and_defaults_to_checked() {
        let rule: Expectation =
            serde_json::from_str(r#"{"topic": "camera/*", "min_rate": 25, "max_gap": "200ms"}"#)
                .unwrap();
        assert_eq!(rule.max_gap, Some(Duration::from_millis(200)));
        assert!(rule.expect && !rule.required);
    }
}
