use super::*;
use crate::expect::Expectation;

const MS: u64 = 1_000_000;
const T0: u64 = 1_700_000_000_000 * MS;

fn rule(text: &str) -> Rule {
    crate::Expectations::new(&[Expectation::parse(text).unwrap()])
        .unwrap()
        .rule_for("t", "t")
        .unwrap()
}

/// Feeds samples every `period_ms` over [from_ms, to_ms), checking every 10 ms; returns
/// the changes with the time of the check that found them.
fn run(
    watch: &mut TopicWatch,
    from_ms: u64,
    to_ms: u64,
    period_ms: Option<u64>,
) -> Vec<(u64, Change)> {
    let mut changes = Vec::new();
    for now in (from_ms..to_ms).step_by(10) {
        if let Some(period) = period_ms {
            if (now - from_ms).is_multiple_of(period) {
                watch.saw(T0 + now * MS);
            }
        }
        if let Some(change) = watch.check(T0 + now * MS) {
            changes.push((now, change));
        }
    }
    changes
}

#[test]
fn a_silence_longer_than_max_gap_is_a_stall_from_the_last_sample_and_ends_with_the_next() {
    let mut watch = TopicWatch::new(Some(&rule("t:max_gap=200ms")));
    assert!(run(&mut watch, 0, 1000, Some(10)).is_empty());
    let stalled = run(&mut watch, 1000, 1700, None);
    assert_eq!(stalled.len(), 1);
    let (found_at, change) = stalled[0];
    assert_eq!(
        (change.from, change.to),
        (HealthState::Ok, HealthState::Stalled)
    );
    assert_eq!(change.since_ns, T0 + 990 * MS, "the last sample");
    assert!(
        found_at <= 990 + 200 + 10,
        "found within max_gap and a check: {found_at}"
    );
    assert_eq!(watch.health().state, HealthState::Stalled);
    assert_eq!(watch.health().since_ns, Some(T0 + 990 * MS));
    let back = run(&mut watch, 1700, 2000, Some(10));
    assert_eq!(back.len(), 1);
    assert_eq!(
        (back[0].1.from, back[0].1.to),
        (HealthState::Stalled, HealthState::Ok)
    );
    assert_eq!(back[0].1.gap_ns, Some(710 * MS));
    assert_eq!(watch.health().stalls, 1);
    assert_eq!(watch.health().worst, HealthState::Stalled);
    assert_eq!(watch.health().longest_gap_ns, 710 * MS);
}

#[test]
fn the_seconds_after_a_stall_are_not_slow_for_the_stall_and_learning_skips_it() {
    // max_gap given, the rate learnt: a stall during learning must not lower it.
    let mut watch = TopicWatch::new(Some(&rule("t:max_gap=200ms")));
    let mut changes = run(&mut watch, 0, 1500, Some(20));
    changes.extend(run(&mut watch, 1500, 2200, None));
    changes.extend(run(&mut watch, 2200, 6000, Some(20)));
    let states: Vec<_> = changes.iter().map(|(_, c)| c.to).collect();
    assert_eq!(
        states,
        [HealthState::Stalled, HealthState::Ok],
        "{changes:?}"
    );
    let rate = watch.health().expected.learnt_rate.unwrap();
    assert!(
        (45.0..55.0).contains(&rate),
        "learnt from 50 Hz, not across the stall: {rate}"
    );
}

#[test]
fn a_rate_below_min_rate_for_a_whole_second_is_slow_and_comes_back() {
    let mut watch = TopicWatch::new(Some(&rule("t:40hz,max_gap=500ms")));
    assert!(
        run(&mut watch, 0, 2000, Some(20)).is_empty(),
        "50 Hz is fine"
    );
    let slow = run(&mut watch, 2000, 4000, Some(40));
    assert_eq!(slow.len(), 1, "{slow:?}");
    assert_eq!(slow[0].1.to, HealthState::Slow);
    assert!(
        slow[0].0 < 3200,
        "slow within the window after the rate fell: {}",
        slow[0].0
    );
    let back = run(&mut watch, 4000, 6000, Some(20));
    assert_eq!(back.len(), 1);
    assert_eq!(
        (back[0].1.from, back[0].1.to),
        (HealthState::Slow, HealthState::Ok)
    );
    assert_eq!(watch.health().slow_spells, 1);
}

#[test]
fn without_a_rule_the_topic_learns_its_rate_and_then_stalls_only_past_ten_periods_or_half_a_second()
{
    let mut watch = TopicWatch::new(None);
    assert_eq!(watch.health().state, HealthState::Unchecked);
    // 100 Hz in bursts of five every 50 ms, as a polled topic arrives.
    let mut changes = Vec::new();
    for now in (0..3000u64).step_by(10) {
        if now.is_multiple_of(50) {
            for i in 0..5 {
                watch.saw(T0 + now * MS + i * 1000);
            }
        }
        changes.extend(watch.check(T0 + now * MS));
    }
    assert!(changes.is_empty(), "learning is no change: {changes:?}");
    assert_eq!(watch.health().state, HealthState::Ok);
    let expected = &watch.health().expected;
    let rate = expected.learnt_rate.unwrap();
    assert!((90.0..110.0).contains(&rate), "{rate}");
    assert_eq!(expected.max_gap_ns, Some(500 * MS));
    assert!((45.0..55.0).contains(&expected.min_rate.unwrap()));
    assert_eq!(expected.from, ExpectedFrom::Learnt);
    let stalled = run(&mut watch, 3000, 3600, None);
    assert_eq!(stalled.len(), 1);
    assert!(
        stalled[0].0 >= 2950 + 500,
        "not before half a second: {}",
        stalled[0].0
    );
}

#[test]
fn a_slow_topic_without_a_rule_keeps_its_rate_unchecked_and_a_rule_off_checks_nothing() {
    let mut watch = TopicWatch::new(None);
    run(&mut watch, 0, 30_000, Some(500));
    assert_eq!(
        watch.health().expected.min_rate,
        None,
        "2 Hz: too few per window"
    );
    assert_eq!(watch.health().expected.max_gap_ns, Some(5000 * MS));
    let mut off = TopicWatch::new(Some(&rule("t:off,required")));
    assert!(run(&mut off, 0, 20_000, None).is_empty());
    assert_eq!(off.health().state, HealthState::Unchecked);
}
