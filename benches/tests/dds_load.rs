//! `recd-load dds` against a plain rustdds reader on loopback: it waits for the reader,
//! publishes every message on the schedule, and each sample is a `recd_load/msg/Blob`
//! whose CDR bytes carry a proven payload.

mod common;

use std::net::IpAddr;
use std::time::{Duration, Instant};

use common::{finish_load, RecdLoad};
use recd_workload::{blob, proof};
use rustdds::no_key::{DataReader, Decode, DefaultDecoder, DeserializerAdapter};
use rustdds::policy::{History, Reliability, ResourceLimits};
use rustdds::{DomainParticipantBuilder, QosPolicyBuilder, RepresentationIdentifier, TopicKind};

/// A sample's bytes as received (after the encapsulation header) and its encoding.
struct Raw {
    encoding: RepresentationIdentifier,
    bytes: Vec<u8>,
}

impl Raw {
    /// The message as a recorder writes it: encapsulation header, then the payload.
    fn message(&self) -> Vec<u8> {
        let mut message = self.encoding.to_bytes().to_vec();
        message.extend_from_slice(&[0, 0]);
        message.extend_from_slice(&self.bytes);
        message
    }
}

struct RawAdapter;

#[derive(Clone)]
struct RawDecoder;

impl DeserializerAdapter<Raw> for RawAdapter {
    type Error = std::convert::Infallible;
    type Decoded = Raw;

    fn supported_encodings() -> &'static [RepresentationIdentifier] {
        &[
            RepresentationIdentifier::CDR_LE,
            RepresentationIdentifier::CDR_BE,
        ]
    }

    fn transform_decoded(decoded: Raw) -> Raw {
        decoded
    }
}

impl Decode<'_, Raw> for RawDecoder {
    type Error = std::convert::Infallible;

    fn decode_bytes(
        self,
        bytes: &[u8],
        encoding: RepresentationIdentifier,
    ) -> Result<Raw, Self::Error> {
        Ok(Raw {
            encoding,
            bytes: bytes.to_vec(),
        })
    }
}

impl DefaultDecoder<Raw> for RawAdapter {
    type Decoder = RawDecoder;
    const DECODER: RawDecoder = RawDecoder;
}

#[test]
fn dds_load_waits_for_its_reader_and_publishes_proven_blobs_on_schedule() {
    // A domain of this test's own (ids up to 232 map to valid ports).
    let domain = 100 + (std::process::id() % 100) as u16;
    let prefix = format!("dds_load_test_{}/", std::process::id());
    let participant = DomainParticipantBuilder::new(domain)
        .with_only_networks([IpAddr::from([127, 0, 0, 1])])
        .same_host_loopback(true)
        .build()
        .unwrap();
    let qos = QosPolicyBuilder::new()
        .reliability(Reliability::Reliable {
            max_blocking_time: rustdds::Duration::from_millis(100),
        })
        .history(History::KeepLast { depth: 2000 })
        .resource_limits(ResourceLimits {
            max_samples: 2000,
            max_instances: 1,
            max_samples_per_instance: 2000,
        })
        .build();
    let subscriber = participant.create_subscriber(&qos).unwrap();
    // (ROS name, messages expected, bytes each): 1 camera at 30 Hz, 2 small at 200 Hz.
    let expected: [(String, u64, usize); 3] = [
        (format!("/{prefix}camera_0"), 30, 200_000),
        (format!("/{prefix}small_0"), 200, 100),
        (format!("/{prefix}small_1"), 200, 100),
    ];
    let mut readers: Vec<DataReader<Raw, RawAdapter>> = expected
        .iter()
        .map(|(name, _, _)| {
            let topic = participant
                .create_topic(
                    blob::dds_topic(name),
                    blob::DDS_TYPE_NAME.to_string(),
                    &qos,
                    TopicKind::NoKey,
                )
                .unwrap();
            subscriber
                .create_datareader_no_key::<Raw, RawAdapter>(&topic, Some(qos.clone()))
                .unwrap()
        })
        .collect();

    let started = Instant::now();
    let load = RecdLoad::new(&prefix)
        .duration(Duration::from_secs(1))
        .dds(domain, "127.0.0.1")
        .cameras(1)
        .frame_size(200_000)
        .fps(30)
        .small_topics(2)
        .small_size(100)
        .small_rate(200)
        .spawn();

    let mut received: Vec<Vec<Vec<u8>>> = vec![Vec::new(); readers.len()];
    let complete = |received: &[Vec<Vec<u8>>]| {
        received
            .iter()
            .zip(&expected)
            .all(|(got, (_, count, _))| got.len() as u64 >= *count)
    };
    while !complete(&received) && started.elapsed() < Duration::from_secs(60) {
        let mut any = false;
        for (reader, got) in readers.iter_mut().zip(&mut received) {
            while let Some(sample) = reader.take_next_sample().unwrap() {
                got.push(sample.into_value().message());
                any = true;
            }
        }
        if !any {
            std::thread::sleep(Duration::from_millis(5));
        }
    }
    let report = finish_load(load);

    for ((name, count, size), got) in expected.iter().zip(&received) {
        let sent = report
            .topics
            .iter()
            .find(|t| blob::recorded_topic(&t.service) == *name)
            .unwrap_or_else(|| panic!("{name} is in the report {report:?}"));
        assert_eq!(
            (sent.sent, sent.errors, sent.payload_len),
            (*count, 0, *size)
        );
        assert_eq!(got.len() as u64, *count, "{name}: every message arrives");
        for (sequence, message) in got.iter().enumerate() {
            assert_eq!(message.len(), *size);
            let blob = blob::parse(message).unwrap();
            assert_eq!(blob.sequence as usize, sequence);
            assert_eq!(proof::check(blob.data), Ok(sequence as u64));
        }
        let stamps: Vec<u64> = got
            .iter()
            .map(|m| blob::parse(m).unwrap().publish_time_ns)
            .collect();
        // Paced, not sent at once: no message goes out before it is due, so the last
        // one leaves at least its scheduled time after the first.
        let spread = (stamps[stamps.len() - 1] - stamps[0]) as f64 / 1e9;
        let scheduled = (*count - 1) as f64 / *count as f64;
        assert!(
            spread >= scheduled - 0.01,
            "{name}: published over {spread:.3} s, scheduled {scheduled:.3} s"
        );
    }
}
