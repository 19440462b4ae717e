//! Remote control over DDS (`[remote_control]`): eProsima DDS Record & Replay's command
//! and status topics ([`contract`]) and rosbag2's recorder services ([`ros2`]), served on
//! a DDS participant of their own. Commands are carried out one after another on a
//! thread of their own, through the same requests as the control socket; a trigger
//! whose moment is ahead waits on a thread of its own, so later commands are not held.

mod commands;
mod contract;
mod origin;
mod ros2;
mod status;

use std::sync::Arc;

use rustdds::DomainParticipant;
use tokio::sync::mpsc;

use crate::config::RemoteControlConfig;
use crate::sessions::Sessions;
use status::{Identity, Suspended};

/// What the remote-control tasks share.
struct Context {
    config: RemoteControlConfig,
    sessions: Arc<Sessions>,
    suspended: Suspended,
    identity: Identity,
    participant: DomainParticipant,
    worker: Worker,
}

/// Runs jobs one after another on a thread of its own.
#[derive(Clone)]
struct Worker {
    jobs: mpsc::UnboundedSender<Box<dyn FnOnce() + Send>>,
}

impl Worker {
    fn start() -> Self {
        let (jobs, mut queue) = mpsc::unbounded_channel::<Box<dyn FnOnce() + Send>>();
        std::thread::Builder::new()
            .name("recd-remote".into())
            .spawn(move || {
                while let Some(job) = queue.blocking_recv() {
                    job();
                }
            })
            .expect("the remote-control thread starts");
        Self { jobs }
    }

    fn run(&self, job: impl FnOnce() + Send + 'static) {
        let _ = self.jobs.send(Box::new(job));
    }
}

/// Serves remote control as `config` says until the task is dropped; nothing when it
/// is off. Errors (no participant, topics refused) are logged, and recd goes on
/// without remote control.
pub async fn serve(config: RemoteControlConfig, sessions: Arc<Sessions>, hostname: String) {
    if !config.active() {
        return;
    }
    let participant = match recd_engine::dds_participant(config.domain, &config.interfaces, None) {
        Ok(participant) => participant,
        Err(error) => {
            tracing::error!("remote control is off: {error}");
            return;
        }
    };
    let identity = Identity {
        recorder: config.recorder.clone().unwrap_or_else(|| hostname.clone()),
        host: hostname,
        participant: origin::participant_id(&participant),
        control: config.enabled,
    };
    tracing::info!(
        domain = config.domain,
        commands = config.enabled,
        status = config.publishes_status(),
        recorder = %identity.recorder,
        "remote control over DDS on {} and {}",
        config.command_topic,
        config.status_topic
    );
    let context = Arc::new(Context {
        suspended: Suspended::default(),
        identity,
        participant,
        worker: Worker::start(),
        sessions,
        config,
    });
    let services = context.config.enabled && context.config.ros2_services;
    let ros2 = async {
        if services {
            ros2::serve(context.clone()).await;
        }
    };
    let (contract, ()) = tokio::join!(contract::serve(context.clone()), ros2);
    if let Err(error) = contract {
        tracing::error!("remote control stopped: {error}");
    }
}
