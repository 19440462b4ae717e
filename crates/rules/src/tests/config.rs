//! `[[rule]]` tables and their checks.

use std::time::Duration;

use recd_health::HealthState;

use crate::{check_rules, RuleConfig, RuleKind};

fn rule(name: &str) -> RuleConfig {
    RuleConfig {
        name: name.to_owned(),
        topic: Some("/vehicle/status".to_owned()),
        when: Some("msg.accel.x < -6.0".to_owned()),
        ..RuleConfig::default()
    }
}

fn error(config: RuleConfig) -> String {
    check_rules(&[config]).unwrap_err().to_string()
}

#[test]
fn defaults_and_a_full_table() {
    let toml = r#"
        name = "hard_brake"
        topic = "/vehicle/status"
        when = "msg.accel.x < -6.0"
        hold = "200ms"
        holdoff = "60s"
        sessions = ["drive*"]
    "#;
    let config: RuleConfig = serde_json::from_value(toml_like(toml)).unwrap();
    let rules = check_rules(&[config]).unwrap();
    let r = &rules[0];
    assert_eq!(r.hold, Duration::from_millis(200));
    assert_eq!(r.before, Duration::from_secs(30));
    assert_eq!(r.after, Duration::from_secs(10));
    assert_eq!(r.holdoff, Duration::from_secs(60));
    assert!(r.triggers_session("drive-7"));
    assert!(!r.triggers_session("park"));
    let RuleKind::Content {
        topic,
        expression,
        fields,
    } = &r.kind
    else {
        panic!("content");
    };
    assert_eq!(topic, "/vehicle/status");
    assert_eq!(expression.source(), "msg.accel.x < -6.0");
    assert!(fields.is_none());
    let all = check_rules(&[rule("a")]).unwrap();
    assert!(all[0].triggers_session("anything"));
    assert_eq!(all[0].hold, Duration::ZERO);
}

/// The few `key = value` lines of the test as JSON (no toml dependency in this crate).
fn toml_like(text: &str) -> serde_json::Value {
    let mut map = serde_json::Map::new();
    for line in text.lines().filter(|l| l.contains('=')) {
        let (k, v) = line.split_once('=').unwrap();
        map.insert(k.trim().to_owned(), serde_json::from_str(v.trim()).unwrap());
    }
    serde_json::Value::Object(map)
}

#[test]
fn health_rules() {
    let config = RuleConfig {
        name: "lidar_lost".to_owned(),
        health: Some("lidar/*".to_owned()),
        states: Some(vec!["stalled".to_owned(), "missing".to_owned()]),
        ..RuleConfig::default()
    };
    let rules = check_rules(std::slice::from_ref(&config)).unwrap();
    let RuleKind::Health { pattern, states } = &rules[0].kind else {
        panic!("health");
    };
    assert_eq!(pattern, "lidar/*");
    assert_eq!(states, &[HealthState::Stalled, HealthState::Missing]);
    let rules = check_rules(&[RuleConfig {
        states: None,
        ..config.clone()
    }])
    .unwrap();
    let RuleKind::Health { states, .. } = &rules[0].kind else {
        panic!("health");
    };
    assert_eq!(states.len(), 3);
    assert_eq!(
        error(RuleConfig { states: Some(vec!["ok".to_owned()]), ..config.clone() }),
        "rule \"lidar_lost\": states: \"ok\" is not a state a rule can fire on; allowed: slow, stalled, missing"
    );
    assert_eq!(
        error(RuleConfig { when: Some("true".to_owned()), ..config }),
        "rule \"lidar_lost\": when: a health rule has no condition; it fires when a matching topic's health enters one of its states"
    );
}

#[test]
fn iceoryx2_fields_are_checked_with_the_condition() {
    let mut config = rule("speed_shm");
    config.fields = Some(
        [("speed", "f32@8"), ("gear", "u8@12")]
            .into_iter()
            .map(|(k, v)| (k.to_owned(), v.to_owned()))
            .collect(),
    );
    config.when = Some("msg.speed > 30.0 && msg.gear == 4".to_owned());
    assert!(check_rules(&[config.clone()]).is_ok());
    config.when = Some("msg.sped > 30.0".to_owned());
    assert_eq!(
        error(config.clone()),
        "rule \"speed_shm\": when: the declared fields has no field \"sped\"; it has gear, speed"
    );
    config.when = Some("msg.gear < 'x'".to_owned());
    let e = error(config.clone());
    assert!(
        e.starts_with("rule \"speed_shm\": when: no such overload: int < string"),
        "{e}"
    );
    config.when = Some("msg.gear == 4".to_owned());
    config
        .fields
        .as_mut()
        .unwrap()
        .insert("bad".to_owned(), "f16@2".to_owned());
    assert_eq!(
        error(config),
        "rule \"speed_shm\": fields.bad: \"f16@2\" is not a field spec; write KIND@OFFSET, e.g. \"f32@8\", \
         with KIND one of bool, u8, i8, u16, i16, u32, i32, u64, i64, f32, f64 and OFFSET the byte offset in the payload"
    );
}

#[test]
fn bad_tables_are_refused() {
    assert_eq!(
        error(rule("")),
        "rule #1: name is empty; give every [[rule]] a unique name"
    );
    assert_eq!(
        check_rules(&[rule("a"), rule("a")])
            .unwrap_err()
            .to_string(),
        "rule \"a\": the name is used by more than one [[rule]]; names must be unique"
    );
    let both = RuleConfig {
        health: Some("x".to_owned()),
        ..rule("r")
    };
    assert!(error(both).starts_with("rule \"r\": topic: a rule has either topic"));
    let neither = RuleConfig {
        topic: None,
        ..rule("r")
    };
    assert!(error(neither).starts_with("rule \"r\": topic: missing"));
    let no_when = RuleConfig {
        when: None,
        ..rule("r")
    };
    assert!(error(no_when).starts_with("rule \"r\": when: missing"));
    let states = RuleConfig {
        states: Some(vec![]),
        ..rule("r")
    };
    assert_eq!(
        error(states),
        "rule \"r\": states: only a health rule has states"
    );
    let hold = RuleConfig {
        hold: Some("2 parsecs".to_owned()),
        ..rule("r")
    };
    assert!(error(hold).starts_with("rule \"r\": hold: \"2 parsecs\" is not a duration"));
    let parse = RuleConfig {
        when: Some("msg.x >".to_owned()),
        ..rule("r")
    };
    assert!(error(parse).starts_with("rule \"r\": when: does not parse"));
    let var = RuleConfig {
        when: Some("x > 1".to_owned()),
        ..rule("r")
    };
    assert!(error(var).starts_with("rule \"r\": when: unknown variable \"x\""));
    let unknown: Result<RuleConfig, _> = serde_json::from_str(r#"{"name": "a", "topik": "b"}"#);
    assert!(unknown
        .unwrap_err()
        .to_string()
        .contains("unknown field `topik`"));
}

#[test]
fn session_globs() {
    let mut r = check_rules(&[rule("a")]).unwrap().remove(0);
    r.sessions = vec!["drive*".to_owned(), "t?st".to_owned()];
    assert!(r.triggers_session("drive"));
    assert!(r.triggers_session("drive_2024"));
    assert!(r.triggers_session("test"));
    assert!(!r.triggers_session("tst"));
    assert!(!r.triggers_session("xdrive"));
    assert!(crate::glob_match("*a*b", "xxaybb"));
    assert!(!crate::glob_match("*a*b", "xxaybc"));
}

#[test]
fn a_window_side_beyond_a_week_is_refused_naming_the_key() {
    let mut far = rule("far");
    far.after = Some("8d".into());
    let refused = error(far);
    assert!(
        refused.contains("after") && refused.contains("longer than the 7 days"),
        "{refused}"
    );
    let mut week = rule("week");
    week.before = Some("7d".into());
    assert_eq!(
        check_rules(&[week]).unwrap()[0].before,
        Duration::from_secs(7 * 24 * 3600)
    );
}
