//! What could be recorded right now (`rec topics`): the sources discover and receive as a
//! recording's would, for a short while, and a drain in place of the writer counts and
//! drops what they hand over. Nothing is written.

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::config::RecordingConfig;
use crate::handoff::{Item, Receiver};
use crate::recording::{spawn, Sources, StartError};
use crate::registry::TopicRegistry;
use crate::source::Held;

/// A topic a survey found.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SurveyedTopic {
    /// Its channel name, as a recording would name it.
    pub name: String,
    /// Where it comes from: the iceoryx2 service, or `dds:` and the DDS topic.
    pub service: String,
    /// Its message type (the schema name a recording would write).
    pub type_name: String,
    /// Publishers (iceoryx2) or writers (DDS) at the end of the survey.
    pub publishers: u64,
    /// Messages per second received over the measured part of the survey.
    pub messages_per_s: f64,
    /// Payload bytes per second over the same time.
    pub bytes_per_s: f64,
}

/// What a survey found.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Survey {
    /// Topics, in the order found.
    pub topics: Vec<SurveyedTopic>,
    /// Services that match but could not be subscribed to, with the reason.
    pub problems: BTreeMap<String, String>,
}

/// Receives what `config` selects for `discovery` (for topics and their publishers to be
/// found), then measures rates over `window`.
pub fn survey(
    config: &RecordingConfig,
    discovery: Duration,
    window: Duration,
) -> Result<Survey, StartError> {
    // A survey names topics and measures rates: it asks no node for a type (the topic
    // would wait for the answer, and the survey's window is short).
    let mut config = config.clone();
    if let Some(dds) = &mut config.dds {
        dds.fetch_types = false;
    }
    let Sources {
        stop,
        registry,
        dds,
        shm,
        ..
    } = Sources::open(&config)?;
    let bytes = Arc::new(Mutex::new(HashMap::<u32, u64>::new()));
    let mut drains = Vec::new();
    let mut dds_thread = None;
    let mut shm_thread = None;
    if let Some((mut source, receivers)) = dds {
        let drain = spawn_drain(receivers, bytes.clone())?;
        source.set_consumer_thread(drain.thread().clone());
        drains.push(drain);
        let stopper = source.stopper();
        dds_thread = Some((
            spawn("recd-survey-dds", "survey DDS receive", move || {
                source.run()
            })?,
            stopper,
        ));
    }
    if let Some((mut source, receivers)) = shm {
        let drain = spawn_drain(receivers, bytes.clone())?;
        source.set_consumer_thread(drain.thread().clone());
        drains.push(drain);
        shm_thread = Some(spawn("recd-survey-shm", "survey receive", move || {
            source.run()
        })?);
    }

    std::thread::sleep(discovery);
    let before = counts(&registry, &bytes);
    let measured_from = Instant::now();
    std::thread::sleep(window);
    let after = counts(&registry, &bytes);
    let seconds = measured_from.elapsed().as_secs_f64();

    stop.store(true, Ordering::Release);
    if let Some((thread, stopper)) = dds_thread {
        stopper.wake();
        let _ = thread.join();
    }
    if let Some(thread) = shm_thread {
        let _ = thread.join();
    }
    for drain in drains {
        let _ = drain.join();
    }

    let problems = registry.problems.lock().expect("problems lock").clone();
    let topics = registry.topics.lock().expect("topics lock");
    let rate = |index: u32, of: fn(&(u64, u64)) -> u64| {
        let start = before.get(&index).map_or(0, of);
        let end = after.get(&index).map_or(0, of);
        end.saturating_sub(start) as f64 / seconds
    };
    Ok(Survey {
        topics: topics
            .iter()
            .map(|topic| SurveyedTopic {
                name: topic.name.clone(),
                service: topic.service.clone(),
                type_name: topic.channel.schema_name.clone(),
                publishers: topic.counters.publishers(),
                messages_per_s: rate(topic.index, |c| c.0),
                bytes_per_s: rate(topic.index, |c| c.1),
            })
            .collect(),
        problems,
    })
}

/// Per topic index: messages received and bytes drained so far.
fn counts(registry: &TopicRegistry, bytes: &Mutex<HashMap<u32, u64>>) -> HashMap<u32, (u64, u64)> {
    let bytes = bytes.lock().expect("bytes lock");
    (registry.topics.lock().expect("topics lock").iter())
        .map(|topic| {
            let received = topic.counters.snapshot().received;
            let drained = bytes.get(&topic.index).copied().unwrap_or(0);
            (topic.index, (received, drained))
        })
        .collect()
}

/// A thread that takes every item off `receivers`, counting bytes per topic, until each
/// delivered its stop mark.
fn spawn_drain(
    mut receivers: Vec<Receiver<Held>>,
    bytes: Arc<Mutex<HashMap<u32, u64>>>,
) -> Result<JoinHandle<()>, StartError> {
    spawn("recd-survey-drain", "survey drain", move || {
        let mut running = receivers.len();
        while running > 0 {
            let mut worked = false;
            for receiver in &mut receivers {
                while let Some(item) = receiver.pop() {
                    worked = true;
                    let (topic, len) = match item {
                        Item::Copied { topic, len, .. } => {
                            receiver.with_copied(len, |_| ());
                            (topic, len)
                        }
                        Item::Loaned {
                            topic, len, sample, ..
                        } => {
                            drop(sample);
                            receiver.release_loaned(len);
                            (topic, len)
                        }
                        Item::Skipped(len) => {
                            receiver.with_copied(len, |_| ());
                            continue;
                        }
                        Item::Stop => {
                            running -= 1;
                            break;
                        }
                        Item::Announce(_) | Item::Retire(_) | Item::Unselect(_) | Item::Mark(_) => {
                            continue
                        }
                    };
                    *bytes.lock().expect("bytes lock").entry(topic).or_default() += len as u64;
                }
            }
            if !worked {
                std::thread::park_timeout(Duration::from_millis(10));
            }
        }
    })
}
