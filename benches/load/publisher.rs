//! One publisher process: creates its services and publishes at a fixed rate.

use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use iceoryx2::port::notifier::Notifier;
use iceoryx2::port::publisher::Publisher;
use iceoryx2::prelude::*;
use recd_testkit::MessageInfoHeader;
use recd_workload::proof;
use recd_workload::report::TopicSent;

use crate::{Load, Worker};

struct TopicPublisher {
    service_name: String,
    publisher: Publisher<ipc::Service, [u8], MessageInfoHeader>,
    notifier: Option<Notifier<ipc::Service>>,
    _service: iceoryx2::service::port_factory::publish_subscribe::PortFactory<
        ipc::Service,
        [u8],
        MessageInfoHeader,
    >,
    _event: Option<iceoryx2::service::port_factory::event::PortFactory<ipc::Service>>,
    bodies: Vec<(Vec<u8>, u32)>,
    sent: u64,
    errors: u64,
}

/// Publishes the topics of one worker; returns what each sent.
pub fn run(load: &Load, worker: &Worker) -> Result<Vec<TopicSent>, String> {
    let mut config = iceoryx2::config::Config::global_config().clone();
    if let Some(prefix) = &load.iceoryx2_prefix {
        config.global.prefix = FileName::new(prefix.as_bytes())
            .map_err(|_| format!("invalid iceoryx2 prefix {prefix:?}"))?;
    }
    let node = NodeBuilder::new()
        .config(&config)
        .create::<ipc::Service>()
        .map_err(|e| format!("cannot create a node: {e:?}"))?;
    let (names, size, rate) = match worker {
        Worker::Camera { index } => (
            vec![format!("{}camera/{index}", load.workload.name_prefix)],
            load.workload.frame_size,
            load.workload.fps,
        ),
        Worker::Small => (
            (0..load.workload.small_topics)
                .map(|i| format!("{}small/{i}", load.workload.name_prefix))
                .collect(),
            load.workload.small_size,
            load.workload.small_rate,
        ),
    };
    let size = size.max(proof::PROOF_LEN);
    let buffer = load.buffer.unwrap_or(if size >= 65536 { 16 } else { 256 });
    let mut topics = names
        .iter()
        .enumerate()
        .map(|(i, name)| open_topic(&node, name, size, buffer, load, i as u64))
        .collect::<Result<Vec<_>, String>>()?;
    wait_for_subscribers(&topics, load.wait_subscribers);

    let period = Duration::from_secs_f64(1.0 / rate.max(0.001));
    let started = Instant::now();
    let mut next = started;
    let mut sequence = 0u64;
    while started.elapsed() < load.workload.duration
        && load.workload.count.is_none_or(|count| sequence < count)
    {
        for topic in &mut topics {
            topic.publish(sequence);
        }
        sequence += 1;
        next += period;
        let now = Instant::now();
        if next > now {
            std::thread::sleep(next - now);
        }
    }
    // Let subscribers take the last samples before the services go away with this node.
    std::thread::sleep(load.workload.linger);
    Ok(topics
        .iter()
        .map(|t| TopicSent {
            service: t.service_name.clone(),
            sent: t.sent,
            payload_len: size,
            errors: t.errors,
        })
        .collect())
}

fn open_topic(
    node: &Node<ipc::Service>,
    name: &str,
    size: usize,
    buffer: usize,
    load: &Load,
    seed: u64,
) -> Result<TopicPublisher, String> {
    let service_name =
        ServiceName::new(name).map_err(|e| format!("invalid service name {name:?}: {e:?}"))?;
    let service = node
        .service_builder(&service_name)
        .publish_subscribe::<[u8]>()
        .user_header::<MessageInfoHeader>()
        .max_subscribers(8)
        .max_publishers(2)
        .subscriber_max_buffer_size(buffer)
        .subscriber_max_borrowed_samples(load.borrowed)
        .history_size(load.history)
        .enable_safe_overflow(true)
        .open_or_create()
        .map_err(|e| format!("cannot create service {name:?}: {e:?}"))?;
    let publisher = service
        .publisher_builder()
        .initial_max_slice_len(size)
        .max_loaned_samples(2)
        .create()
        .map_err(|e| format!("cannot create a publisher on {name:?}: {e:?}"))?;
    let (event, notifier) = if load.notify {
        let event = node
            .service_builder(&service_name)
            .event()
            .open_or_create()
            .map_err(|e| format!("cannot create event service {name:?}: {e:?}"))?;
        let notifier = event
            .notifier_builder()
            .create()
            .map_err(|e| format!("cannot create a notifier on {name:?}: {e:?}"))?;
        (Some(event), Some(notifier))
    } else {
        (None, None)
    };
    let bodies = (0..4)
        .map(|variant| {
            let mut payload = recd_workload::mixed_bytes(size, seed * 16 + variant);
            let crc = proof::body_checksum(&payload[proof::PROOF_LEN..]);
            payload[..proof::PROOF_LEN].fill(0);
            (payload, crc)
        })
        .collect();
    Ok(TopicPublisher {
        service_name: name.to_string(),
        publisher,
        notifier,
        _service: service,
        _event: event,
        bodies,
        sent: 0,
        errors: 0,
    })
}

fn wait_for_subscribers(topics: &[TopicPublisher], wanted: usize) {
    if wanted == 0 {
        return;
    }
    let deadline = Instant::now() + Duration::from_secs(10);
    while Instant::now() < deadline {
        let connected = topics
            .iter()
            .all(|t| t._service.dynamic_config().number_of_subscribers() >= wanted);
        if connected {
            // The subscriber's connection to this publisher is made on its next receive.
            std::thread::sleep(Duration::from_millis(50));
            return;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

impl TopicPublisher {
    fn publish(&mut self, sequence: u64) {
        let (body, crc) = &mut self.bodies[(sequence % 4) as usize];
        proof::stamp(body, sequence, *crc);
        let sample = match self.publisher.loan_slice_uninit(body.len()) {
            Ok(sample) => sample,
            Err(_) => {
                self.errors += 1;
                return;
            }
        };
        let mut sample = sample;
        *sample.user_header_mut() = MessageInfoHeader {
            source_timestamp: SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos() as i64),
            publication_sequence_number: sequence,
        };
        let sample = sample.write_from_slice(body);
        match sample.send() {
            Ok(_) => self.sent += 1,
            Err(_) => self.errors += 1,
        }
        if let Some(notifier) = &self.notifier {
            let _ = notifier.notify();
        }
    }
}
