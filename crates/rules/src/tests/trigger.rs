//! The firing state machine and the runner.

use std::time::Duration;

use super::*;
use crate::{Condition, EvalError, Expression, Layout, RuleRunner, Trigger};

const MS: u64 = 1_000_000;

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

#[test]
fn fires_on_the_rising_edge() {
    let mut t = Trigger::new(ms(0), ms(0));
    assert!(t.step(0, true), "the initial state counts as false");
    assert!(!t.step(MS, true));
    assert!(!t.step(2 * MS, false));
    assert!(t.step(3 * MS, true));
    assert!(!t.step(4 * MS, true));
    assert_eq!(t.last_fire(), Some(3 * MS));
}

#[test]
fn fires_once_it_has_held() {
    let mut t = Trigger::new(ms(200), ms(0));
    assert!(!t.step(0, true));
    assert!(!t.step(100 * MS, true));
    assert!(!t.step(199 * MS, true));
    assert!(t.step(200 * MS, true));
    assert!(!t.step(400 * MS, true));
    // A false sample restarts the hold.
    assert!(!t.step(500 * MS, false));
    assert!(!t.step(600 * MS, true));
    assert!(!t.step(700 * MS, false));
    assert!(!t.step(750 * MS, true));
    assert!(!t.step(900 * MS, true));
    assert!(t.step(1000 * MS, true));
}

#[test]
fn a_firing_within_holdoff_is_suppressed_and_consumes_the_edge() {
    let mut t = Trigger::new(ms(0), ms(60_000));
    assert!(t.step(0, true));
    assert!(!t.step(MS, false));
    assert!(!t.step(30_000 * MS, true), "within holdoff");
    // Still true past the holdoff: the edge was consumed.
    assert!(!t.step(70_000 * MS, true));
    assert!(!t.step(71_000 * MS, false));
    assert!(t.step(72_000 * MS, true));
    // The holdoff counts from the last real firing, exactly: t - last < holdoff.
    assert!(!t.step(73_000 * MS, false));
    assert!(t.step(132_000 * MS, true));
}

fn runner(when: &str) -> RuleRunner {
    let schema = vehicle_schema();
    let layout = Layout::Ros2 {
        type_name: VEHICLE,
        definition: &schema,
    };
    let c = Condition::compile(&Expression::parse(when).unwrap(), layout).unwrap();
    RuleRunner::new(c, ms(0), ms(0))
}

#[test]
fn the_runner_keeps_prev_and_reports_values() {
    let mut r = runner("msg.mode != prev.mode");
    let park = vehicle(true, 0.0, [0.0; 3], 0, "park");
    let drive = vehicle(true, 0.0, [0.0; 3], 0, "drive");
    assert_eq!(r.offer(1, &drive).unwrap(), None, "no prev: not holding");
    assert_eq!(r.offer(2, &drive).unwrap(), None);
    let firing = r.offer(3, &park).unwrap().unwrap();
    assert_eq!(firing.log_time_ns, 3);
    assert_eq!(firing.values["msg.mode"], serde_json::json!("park"));
    assert_eq!(firing.values["prev.mode"], serde_json::json!("drive"));
    // An undecodable message is not kept as prev, and changes nothing.
    assert!(matches!(
        r.offer(4, &park[..10]),
        Err(EvalError::Truncated { .. })
    ));
    assert_eq!(r.offer(5, &park).unwrap(), None, "prev is still park");
    let firing = r.offer(6, &drive).unwrap().unwrap();
    assert_eq!(firing.values["prev.mode"], serde_json::json!("park"));
}

#[test]
fn an_evaluation_error_leaves_the_trigger_as_it_was() {
    let mut r = runner("10 / msg.gear > 1");
    let zero = vehicle(true, 0.0, [0.0; 3], 0, "");
    let two = vehicle(true, 0.0, [0.0; 3], 2, "");
    assert!(r.offer(1, &two).unwrap().is_some());
    assert!(matches!(r.offer(2, &zero), Err(EvalError::Eval(_))));
    // Still true, no false between: no second firing.
    assert!(r.offer(3, &two).unwrap().is_none());
}
