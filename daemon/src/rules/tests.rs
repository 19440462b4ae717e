//! The rules inside recd, fed by hand: which stream a rule follows, what a full queue
//! does, and what a firing asks of the sessions.

use std::collections::BTreeMap;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use recd_control::{ErrorKind, ErrorReply, SessionTriggered, TriggerRequest};
use recd_engine::ChannelSpec;

use super::*;

/// Sessions that record every trigger asked of them.
#[derive(Default)]
struct Recorder {
    running: Vec<String>,
    asked: Mutex<Vec<TriggerRequest>>,
}

impl Target for Recorder {
    fn running(&self) -> Vec<String> {
        self.running.clone()
    }

    fn trigger(&self, request: &TriggerRequest) -> Result<SessionTriggered, ErrorReply> {
        self.asked.lock().unwrap().push(request.clone());
        Err(ErrorReply {
            kind: ErrorKind::Failed,
            message: "recorded".into(),
        })
    }

    fn tell_fleet(&self, _: &TriggerRequest) -> Result<(), String> {
        Ok(())
    }
}

/// A rule on the iceoryx2 topic `speed`: fires when the u32 at payload offset 0 is 7.
fn rules(sessions: &[&str]) -> Arc<Rules> {
    let config = recd_rules::RuleConfig {
        name: "seven".into(),
        topic: Some("speed".into()),
        fields: Some(BTreeMap::from([("v".to_string(), "u32@0".to_string())])),
        when: Some("msg.v == 7".into()),
        before: Some("1s".into()),
        after: Some("2s".into()),
        sessions: sessions.iter().map(|s| s.to_string()).collect(),
        ..Default::default()
    };
    Rules::new(recd_rules::check_rules(&[config]).unwrap(), false, None)
}

fn channel() -> ChannelSpec {
    ChannelSpec {
        message_encoding: "iceoryx2".into(),
        schema_name: "u32".into(),
        schema_encoding: "iceoryx2".into(),
        schema_data: Vec::new(),
        metadata: BTreeMap::new(),
    }
}

/// Runs the rules' loop over what was queued, then stops it.
fn drain(rules: &Arc<Rules>, target: &Recorder) {
    let queue = rules.receiver.lock().unwrap().take().unwrap();
    let stop = AtomicBool::new(false);
    std::thread::scope(|scope| {
        scope.spawn(|| {
            // Stop once the queue is empty (the loop's wait is 200 ms).
            while rules.queued_bytes.load(Ordering::Relaxed) > 0 {
                std::thread::sleep(Duration::from_millis(5));
            }
            std::thread::sleep(Duration::from_millis(50));
            stop.store(true, Ordering::Relaxed);
        });
        watch::run(rules, &queue, target, &stop);
    });
}

fn value(v: u32) -> [u8; 4] {
    v.to_le_bytes()
}

#[test]
fn a_session_takes_a_topic_over_from_the_rules_own_subscription() {
    let rules = rules(&[]);
    let listener = rules.tap(LISTENER, "rules");
    let session = rules.tap(1, "drive");
    assert!(listener.taps(0, "speed", &channel()));
    assert!(session.taps(3, "speed", &channel()));
    assert!(!session.taps(4, "other", &channel()));
    // No session records the topic (by its globs): the listener's 7 fires.
    listener.sample(0, 100, &[&value(7)]);
    // A session's samples take over: from then on only its samples count.
    session.sample(3, 200, &[&value(1)]);
    listener.sample(0, 250, &[&value(1)]);
    listener.sample(0, 300, &[&value(7)]);
    session.sample(3, 400, &[&[7, 0], &[0, 0]]);
    let target = Recorder {
        running: vec!["drive".into(), "park".into()],
        ..Default::default()
    };
    drain(&rules, &target);
    let asked = target.asked.lock().unwrap();
    let moments: Vec<(Option<String>, Option<u64>)> =
        asked.iter().map(|r| (r.name.clone(), r.at_ns)).collect();
    assert_eq!(
        moments,
        [
            (Some("drive".into()), Some(100)),
            (Some("park".into()), Some(100)),
            (Some("drive".into()), Some(400)),
            (Some("park".into()), Some(400)),
        ]
    );
    let last = asked.last().unwrap();
    assert_eq!(last.origin.as_deref(), Some("rule"));
    assert_eq!((last.before_ms, last.after_ms), (Some(1000), 2000));
    assert_eq!(last.id, asked[2].id, "one firing, one id for its sessions");
    let fired = last.rule.as_ref().unwrap();
    assert_eq!(
        (fired.rule.as_str(), fired.topic.as_str()),
        ("seven", "speed")
    );
    assert_eq!(fired.values["msg.v"], serde_json::json!(7));
    let status = &rules.status()[0];
    assert_eq!((status.evaluated, status.fired), (3, 2));
}

#[test]
fn the_rules_own_subscription_stands_in_only_for_topics_no_session_records() {
    let rules = rules(&[]);
    let listener = rules.tap(LISTENER, "rules");
    listener.taps(0, "speed", &channel());
    let only = |globs: &[&str]| recd_engine::TopicSelection {
        include: globs.iter().map(|g| g.to_string()).collect(),
        ..Default::default()
    };
    // A session that records other topics leaves it to the listener; one whose globs
    // select it does not, even before its first sample.
    rules.session_records(1, &only(&["camera/*"]));
    rules.session_records(2, &only(&["spe*"]));
    listener.sample(0, 100, &[&value(7)]);
    let target = Recorder {
        running: vec!["drive".into()],
        ..Default::default()
    };
    drain(&rules, &target);
    assert!(target.asked.lock().unwrap().is_empty());
    assert_eq!(rules.status()[0].evaluated, 0);
    rules.session_ended(2);
    assert!(!rules.recorded_by_a_session("speed"));
    assert!(rules.recorded_by_a_session("camera/front"));
}

#[test]
fn a_rule_triggers_only_the_sessions_it_names() {
    let rules = rules(&["drive*"]);
    let session = rules.tap(1, "drive1");
    session.taps(0, "speed", &channel());
    session.sample(0, 100, &[&value(7)]);
    let target = Recorder {
        running: vec!["drive1".into(), "park".into()],
        ..Default::default()
    };
    drain(&rules, &target);
    let asked = target.asked.lock().unwrap();
    assert_eq!(asked.len(), 1);
    assert_eq!(asked[0].name.as_deref(), Some("drive1"));
}

#[test]
fn a_full_queue_skips_and_counts_rather_than_wait() {
    let rules = rules(&[]);
    let session = rules.tap(1, "drive");
    session.taps(0, "speed", &channel());
    for time in 0..QUEUE_EVENTS as u64 + 10 {
        session.sample(0, time, &[&value(1)]);
    }
    assert_eq!(rules.status()[0].skipped, 10);
    // A sample bigger than a rule sees is cut, not refused.
    let big = vec![0u8; SAMPLE_BYTES * 2];
    let rules = self::rules(&[]);
    let session = rules.tap(1, "drive");
    session.taps(0, "speed", &channel());
    session.sample(0, 1, &[&big]);
    assert_eq!(rules.queued_bytes.load(Ordering::Relaxed), SAMPLE_BYTES);
}
