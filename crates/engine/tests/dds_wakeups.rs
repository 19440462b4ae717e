//! The readiness event of a rustdds reader, as recd's DDS receive thread waits for it:
//! the thread sleeps in mio until a reader is readable, lets samples gather, then drains
//! the reader's notifications and takes everything. Every batch written after a take must
//! raise the event again, or its samples would wait for the thread's next sweep. (Kept
//! for any change to how rustdds notifies, such as writing the wake-up once per batch.)
//! Two participants in this process, over real UDP on loopback.

use std::net::IpAddr;
use std::time::{Duration, Instant};

use rustdds::mio1::{Events, Interest, Poll, Token};
use rustdds::no_key::SimpleDataReader;
use rustdds::policy::{History, Reliability};
use rustdds::{
    CDRDeserializerAdapter, DomainParticipant, DomainParticipantBuilder, QosPolicyBuilder,
    TopicKind,
};
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Debug, PartialEq)]
struct Counter {
    value: u32,
}

const READER: Token = Token(7);
/// Far longer than a loopback round trip, far shorter than any sweep would hide.
const EVENT_LIMIT: Duration = Duration::from_secs(5);

fn participant(domain: u16) -> DomainParticipant {
    DomainParticipantBuilder::new(domain)
        .same_host_loopback(true)
        .with_only_networks([IpAddr::from([127, 0, 0, 1])])
        .build()
        .unwrap()
}

/// Waits for the reader's readiness event, then takes everything it holds.
fn take_after_event(
    poll: &mut Poll,
    events: &mut Events,
    reader: &SimpleDataReader<Counter, CDRDeserializerAdapter<Counter>>,
) -> Option<Vec<u32>> {
    let deadline = Instant::now() + EVENT_LIMIT;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return None;
        }
        poll.poll(events, Some(left)).unwrap();
        if events.iter().any(|event| event.token() == READER) {
            break;
        }
    }
    reader.drain_read_notifications();
    let mut taken = Vec::new();
    while let Some(change) = reader.try_take_one().unwrap() {
        taken.push(change.into_value().value);
    }
    Some(taken)
}

#[test]
fn every_batch_of_samples_raises_the_readers_event_again() {
    let writing = participant(41);
    let reading = participant(41);
    let qos = QosPolicyBuilder::new()
        .reliability(Reliability::Reliable {
            max_blocking_time: rustdds::Duration::from_secs(1),
        })
        .history(History::KeepAll)
        .build();
    let topic_of = |participant: &DomainParticipant| {
        participant
            .create_topic(
                "wakeups".to_string(),
                "Counter".to_string(),
                &qos,
                TopicKind::NoKey,
            )
            .unwrap()
    };
    let writer = writing
        .create_publisher(&qos)
        .unwrap()
        .create_datawriter_no_key_cdr::<Counter>(&topic_of(&writing), None)
        .unwrap();
    let mut reader = reading
        .create_subscriber(&qos)
        .unwrap()
        .create_simple_datareader_no_key::<Counter, CDRDeserializerAdapter<Counter>>(
            &topic_of(&reading),
            None,
        )
        .unwrap();
    let mut poll = Poll::new().unwrap();
    poll.registry()
        .register(&mut reader, READER, Interest::READABLE)
        .unwrap();
    let mut events = Events::with_capacity(16);

    // Discovery: the first sample is written until the reader has matched the writer.
    let mut taken = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(20);
    while taken.is_empty() {
        assert!(Instant::now() < deadline, "the reader never matched");
        writer.write(Counter { value: 0 }, None).unwrap();
        taken = take_after_event(&mut poll, &mut events, &reader).unwrap_or_default();
    }
    let mut next = taken.last().unwrap() + 1;

    // Batches of 1 to 20 samples, each written before the reader looks: every batch must
    // wake the reader again, and every sample must be there when it does.
    for round in 0..200u32 {
        let batch = round % 20 + 1;
        let first = next;
        for _ in 0..batch {
            writer.write(Counter { value: next }, None).unwrap();
            next += 1;
        }
        let mut got = Vec::new();
        while got.last().is_none_or(|last| *last + 1 < next) {
            let Some(taken) = take_after_event(&mut poll, &mut events, &reader) else {
                panic!("round {round}: no event within {EVENT_LIMIT:?}; taken so far {got:?}");
            };
            got.extend(taken);
        }
        let expected: Vec<u32> = (first..next).collect();
        assert_eq!(got, expected, "round {round}");
    }
}
