//! What an input's reader hands the merge: its channels, the window's messages in
//! batches, the latched messages before the window, and at the end what it read.

use std::collections::BTreeMap;
use std::ops::Range;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::SyncSender;
use std::sync::Arc;

use recd_health::Expected;

use super::{CutError, InputRead};

/// A schema as an input describes it.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(super) struct SchemaDef {
    pub name: String,
    pub encoding: String,
    pub data: Vec<u8>,
}

/// A channel as an input describes it; inputs that describe a topic alike share one
/// output channel, whatever their ids.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(super) struct ChannelDef {
    pub topic: String,
    pub message_encoding: String,
    pub metadata: BTreeMap<String, String>,
    pub schema: Option<Arc<SchemaDef>>,
}

impl ChannelDef {
    /// The channel of a summary (or a scan that kept its schemas).
    pub fn from_mcap(channel: &mcap::Channel<'_>) -> Self {
        Self {
            topic: channel.topic.clone(),
            message_encoding: channel.message_encoding.clone(),
            metadata: channel.metadata.clone(),
            schema: channel.schema.as_ref().map(|schema| {
                Arc::new(SchemaDef {
                    name: schema.name.clone(),
                    encoding: schema.encoding.clone(),
                    data: schema.data.to_vec(),
                })
            }),
        }
    }

    /// What identifies the output channel: everything but the schema's definition, which
    /// a reindex may have filled in for one input and not another.
    pub fn key(&self) -> ChannelKey {
        (
            self.topic.clone(),
            self.schema
                .as_ref()
                .map(|s| (s.name.clone(), s.encoding.clone())),
            self.message_encoding.clone(),
            self.metadata.clone(),
        )
    }
}

/// What identifies an output channel: topic, schema name and encoding, message
/// encoding, metadata.
pub(super) type ChannelKey = (
    String,
    Option<(String, String)>,
    String,
    BTreeMap<String, String>,
);

/// A message whose data lies in its batch's bytes.
#[derive(Debug, Clone)]
pub(super) struct Message {
    /// The input's channel id.
    pub channel: u16,
    pub sequence: u32,
    pub log_time: u64,
    pub publish_time: u64,
    pub data: Range<usize>,
}

/// Messages of one input in log-time order, with the channels first seen in them.
#[derive(Debug, Default)]
pub(super) struct Batch {
    pub channels: Vec<(u16, Arc<ChannelDef>)>,
    pub bytes: Vec<u8>,
    pub messages: Vec<Message>,
}

impl Batch {
    /// Adds a message, copying its data.
    pub fn push(&mut self, header: &mcap::records::MessageHeader, data: &[u8]) {
        let start = self.bytes.len();
        self.bytes.extend_from_slice(data);
        self.messages.push(Message {
            channel: header.channel_id,
            sequence: header.sequence,
            log_time: header.log_time,
            publish_time: header.publish_time,
            data: start..self.bytes.len(),
        });
    }

    /// Orders the messages by log time, those of one time as they came.
    pub fn sort(&mut self) {
        self.messages.sort_by_key(|message| message.log_time);
    }
}

/// The last message of a latched channel before the window, with its own bytes.
#[derive(Debug, Clone)]
pub(super) struct Latched {
    pub channel: Arc<ChannelDef>,
    pub sequence: u32,
    pub log_time: u64,
    pub publish_time: u64,
    pub data: Vec<u8>,
}

/// What an input's reader found besides messages, sent when it is done.
#[derive(Debug)]
pub(super) struct Done {
    pub read: InputRead,
    pub notes: Notes,
}

/// One step of an input's reader, in this order: `Ready`, `Batch`es, `Done`; or `Failed`
/// at any point.
#[derive(Debug)]
pub(super) enum Event {
    /// The input's profile and its latched messages before the window.
    Ready {
        profile: String,
        latched: Vec<Latched>,
    },
    Batch(Batch),
    Done(Box<Done>),
    Failed(CutError),
}

/// Where a reader sends its events; a send fails once the merge has stopped.
pub(super) type Events = SyncSender<Event>;

/// What every reader of a cut shares.
#[derive(Clone, Copy)]
pub(super) struct Context<'a> {
    pub window: super::LogWindow,
    /// The caller's cancellation.
    pub cancel: &'a AtomicBool,
    /// Set when the merge stopped (done, failed or cancelled): readers stop too.
    pub stop: &'a AtomicBool,
    pub pace: Option<&'a (dyn Fn(u64) + Send + Sync)>,
    /// The keys of sealed inputs.
    pub keys: Option<&'a crate::sealing::SealKeys>,
    /// The inputs still being written.
    pub growing: &'a [std::path::PathBuf],
    /// The topics kept; `None` keeps all.
    pub topics: Option<&'a super::CutTopics>,
    /// The checkpoints of the files this process is writing.
    pub checkpoints: Option<&'a crate::checkpoints::CheckpointBook>,
}

impl Context<'_> {
    /// Whether reading should stop now.
    pub fn stopped(&self) -> bool {
        self.cancel.load(Ordering::Relaxed) || self.stop.load(Ordering::Relaxed)
    }

    /// Tells the pace hook that `bytes` more were read; it may hold the reader.
    pub fn paced(&self, bytes: u64) {
        if let Some(pace) = self.pace {
            pace(bytes);
        }
    }

    /// Whether the cut keeps the messages of `channel` (of a topic selected).
    pub fn keeps(&self, channel: &ChannelDef) -> bool {
        self.topics
            .is_none_or(|topics| topics.keeps(&channel.topic))
    }

    /// Whether `log_time` lies in the window.
    pub fn holds(&self, log_time: u64) -> bool {
        self.window.contains(log_time)
    }
}

/// The markers and expectations an input's Metadata records hold.
#[derive(Debug, Default)]
pub(super) struct Notes {
    /// Marker records whose time lies in the window.
    pub markers: Vec<mcap::records::Metadata>,
    /// Each topic's expectation, from the input's health record.
    pub expected: BTreeMap<String, Expected>,
}

impl Notes {
    /// Keeps what `metadata` says, if it is a marker in `window` or a health record.
    pub fn add(&mut self, metadata: mcap::records::Metadata, window: super::LogWindow) {
        if let Some(marker) = crate::Marker::from_record(&metadata.name, &metadata.metadata) {
            if window.contains(marker.time_ns) {
                self.markers.push(metadata);
            }
        } else if crate::info::is_health_record(&metadata.name) {
            if let Ok(health) = recd_health::FileHealthSummary::from_metadata(&metadata.metadata) {
                for (topic, health) in health.topics {
                    self.expected.entry(topic).or_insert(health.expected);
                }
            }
        }
    }

    /// Whether a Metadata record of this name may hold something [`Self::add`] keeps.
    pub fn wants(name: &str) -> bool {
        name == crate::iceoryx2::MARKER || crate::info::is_health_record(name)
    }
}
