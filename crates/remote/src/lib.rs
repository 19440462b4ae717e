//! recd's remote control over DDS, as plain data: the topics and types of eProsima DDS
//! Record & Replay's remote-control contract ([`contract`]), the commands and their
//! `args` JSON ([`command`]), the recorder states ([`state`]), the `info` JSON of a
//! status ([`info`]). recd serves them; `rec fleet` drives them.

pub mod command;
pub mod contract;
pub mod info;
pub mod state;

pub use command::{ArgsError, CommandArgs, RemoteCommand};
pub use contract::{
    command_qos, status_qos, DdsRecorderCommand, DdsRecorderStatus, Topics, COMMAND_TOPIC,
    COMMAND_TYPE, STATUS_TOPIC, STATUS_TYPE,
};
pub use info::{IncidentInfo, Reply, SessionInfo, StatusInfo, TopicInfo, STATUS_INCIDENTS};
pub use state::RecorderState;
