//! The readers of raw samples, one per recorded topic.

use std::collections::HashMap;
use std::sync::Arc;

use rustdds::mio1::{Interest, Token};
use rustdds::{no_key, with_key, QosPolicies, RTPSEntity, SampleInfo, TopicKind, GUID};

use super::qos::ReaderChoice;
use super::raw::{PassThrough, RawSample};
use super::DdsSource;
use crate::source::SequenceGaps;
use crate::topic::Topic;

/// A reader of raw samples; keyed writers are only matched by keyed readers.
pub(super) enum Reader {
    NoKey(no_key::DataReader<RawSample, PassThrough>),
    Keyed(with_key::DataReader<RawSample, PassThrough>),
}

impl Reader {
    /// The next sample: its CDR (`None` for a dispose or unregister) and its info.
    pub fn take(&mut self) -> Result<Option<(Option<RawSample>, SampleInfo)>, String> {
        match self {
            Reader::NoKey(reader) => reader
                .take_next_sample()
                .map(|sample| {
                    sample.map(|sample| {
                        let info = sample.sample_info().clone();
                        (Some(sample.into_value()), info)
                    })
                })
                .map_err(|e| e.to_string()),
            Reader::Keyed(reader) => reader
                .take_next_sample()
                .map(|sample| {
                    sample.map(|sample| {
                        let info = sample.sample_info().clone();
                        (sample.into_value().value(), info)
                    })
                })
                .map_err(|e| e.to_string()),
        }
    }

    pub fn guid(&self) -> GUID {
        match self {
            Reader::NoKey(reader) => reader.guid(),
            Reader::Keyed(reader) => reader.guid(),
        }
    }

    pub fn source(&mut self) -> &mut dyn rustdds::mio1::event::Source {
        match self {
            Reader::NoKey(reader) => reader,
            Reader::Keyed(reader) => reader,
        }
    }
}

/// A recorded DDS topic.
pub(super) struct DdsTopic {
    pub topic: Arc<Topic>,
    pub dds_name: String,
    pub type_name: String,
    pub reader: Reader,
    pub choice: ReaderChoice,
    /// The writers known to be alive, with what they offer.
    pub writers: HashMap<GUID, QosPolicies>,
    /// Each writer's last sequence number, to count gaps.
    pub gaps: SequenceGaps<GUID>,
    pub announced: bool,
}

impl DdsSource {
    pub(super) fn create_reader(
        &mut self,
        slot: usize,
        topic_name: &str,
        type_name: &str,
        keyed: bool,
        choice: ReaderChoice,
    ) -> Result<Reader, String> {
        let qos = choice.policies(self.settings.config.history_depth.max(1));
        let kind = if keyed {
            TopicKind::WithKey
        } else {
            TopicKind::NoKey
        };
        let topic = self
            .participant
            .create_topic(topic_name.to_string(), type_name.to_string(), &qos, kind)
            .map_err(|e| format!("cannot create the DDS topic: {e}"))?;
        let mut reader = if keyed {
            Reader::Keyed(
                self.subscriber
                    .create_datareader::<RawSample, PassThrough>(&topic, Some(qos))
                    .map_err(|e| format!("cannot create a DDS reader: {e}"))?,
            )
        } else {
            Reader::NoKey(
                self.subscriber
                    .create_datareader_no_key::<RawSample, PassThrough>(&topic, Some(qos))
                    .map_err(|e| format!("cannot create a DDS reader: {e}"))?,
            )
        };
        self.poll
            .registry()
            .register(reader.source(), Token(slot), Interest::READABLE)
            .map_err(|e| format!("cannot wait on the DDS reader: {e}"))?;
        Ok(reader)
    }
}
