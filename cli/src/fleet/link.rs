//! `rec fleet`'s side of the remote-control contract: a participant in the domain, a
//! reader of the recorders' statuses and a writer of commands.

use std::collections::BTreeMap;
use std::net::IpAddr;
use std::time::{Duration, Instant};

use recd_remote::{
    command_qos, status_qos, DdsRecorderCommand, DdsRecorderStatus, StatusInfo, Topics,
};
use rustdds::no_key::{DataReader, DataWriter};
use rustdds::{
    CDRDeserializerAdapter, CDRSerializerAdapter, DataWriterStatus, QosPolicyBuilder, StatusEvented,
};

/// How often the status reader is polled.
const POLL: Duration = Duration::from_millis(1);

/// Where the fleet's recorders are reached.
#[derive(Debug, Clone)]
pub struct Domain {
    /// The DDS domain.
    pub id: u16,
    /// Addresses of this host to use; empty, all.
    pub interfaces: Vec<IpAddr>,
    /// The command topic.
    pub command_topic: String,
    /// The status topic.
    pub status_topic: String,
}

/// A status as it came, with when.
#[derive(Debug, Clone)]
pub struct Heard {
    /// The status.
    pub status: DdsRecorderStatus,
    /// recd's info in it (none from a recorder other than recd).
    pub info: Option<StatusInfo>,
    /// When it came.
    pub at: Instant,
}

impl Heard {
    /// The recorder it came from: recd's participant id, or its recorder name.
    pub fn recorder_key(&self) -> String {
        match &self.info {
            Some(info) => format!("{}@{}", info.recorder, info.participant),
            None => "(not recd)".to_string(),
        }
    }
}

/// The joined domain.
pub struct Link {
    _participant: rustdds::DomainParticipant,
    statuses: DataReader<DdsRecorderStatus, CDRDeserializerAdapter<DdsRecorderStatus>>,
    commands: DataWriter<DdsRecorderCommand, CDRSerializerAdapter<DdsRecorderCommand>>,
    matched: usize,
}

impl Link {
    /// Joins `domain`: a status reader that gets each recorder's recent statuses at once,
    /// and a command writer.
    pub fn join(domain: &Domain) -> Result<Self, String> {
        let participant = recd_engine::dds_participant(domain.id, &domain.interfaces, None)
            .map_err(|e| e.to_string())?;
        let failed = |what: &str, error: &dyn std::fmt::Display| {
            format!("cannot create the {what}: {error}")
        };
        let topics = Topics::create(&participant, &domain.command_topic, &domain.status_topic)?;
        let statuses = participant
            .create_subscriber(&QosPolicyBuilder::new().build())
            .and_then(|s| s.create_datareader_no_key_cdr(&topics.status, Some(status_qos())))
            .map_err(|e| failed("status reader", &e))?;
        let commands = participant
            .create_publisher(&QosPolicyBuilder::new().build())
            .and_then(|p| p.create_datawriter_no_key_cdr(&topics.command, Some(command_qos())))
            .map_err(|e| failed("command writer", &e))?;
        Ok(Self {
            _participant: participant,
            statuses,
            commands,
            matched: 0,
        })
    }

    /// Every status that came until `deadline` or until `enough` says so, polled.
    pub fn listen(
        &mut self,
        deadline: Instant,
        mut enough: impl FnMut(&Heard) -> bool,
    ) -> Vec<Heard> {
        let mut heard = Vec::new();
        loop {
            while let Ok(Some(sample)) = self.statuses.take_next_sample() {
                let status = sample.into_value();
                let info = StatusInfo::parse(&status.info);
                let one = Heard {
                    status,
                    info,
                    at: Instant::now(),
                };
                let done = enough(&one);
                heard.push(one);
                if done {
                    return heard;
                }
            }
            if Instant::now() >= deadline {
                return heard;
            }
            std::thread::sleep(POLL);
        }
    }

    /// Recorders whose command readers matched the writer by now.
    pub fn command_readers(&mut self) -> usize {
        while let Some(status) = self.commands.try_recv_status() {
            if let DataWriterStatus::PublicationMatched { current, .. } = status {
                self.matched = current.count().max(0) as usize;
            }
        }
        self.matched
    }

    /// Writes a command.
    pub fn send(&self, command: DdsRecorderCommand) -> Result<(), String> {
        self.commands
            .write(command, None)
            .map_err(|e| format!("cannot write the command: {e}"))
    }
}

/// The newest status of each recorder among `heard`.
pub fn newest_by_recorder(heard: &[Heard]) -> BTreeMap<String, Heard> {
    let mut newest: BTreeMap<String, Heard> = BTreeMap::new();
    for one in heard {
        let key = one.recorder_key();
        let time = |h: &Heard| h.info.as_ref().map_or(0, |i| i.time_ns);
        match newest.get(&key) {
            Some(known) if time(known) > time(one) => {}
            _ => {
                newest.insert(key, one.clone());
            }
        }
    }
    newest
}
