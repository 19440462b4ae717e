//! What recorded files hold: their messages with their channels, and what a file says of
//! the iceoryx2 services it recorded.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use recd_storage::iceoryx2::SUBSCRIBER_MAX_BUFFER_SIZE;

/// The subscriber queue depth (`subscriber_max_buffer_size`) of the service recorded as
/// `topic`, from the channel metadata in `file`'s summary (the file is mapped, not read:
/// recordings of cameras are GiBs).
pub fn recorded_queue_depth(file: &Path, topic: &str) -> usize {
    let opened =
        std::fs::File::open(file).unwrap_or_else(|e| panic!("cannot open {}: {e}", file.display()));
    // SAFETY: a finished recording nothing writes to any more.
    let bytes = unsafe { memmap2::Mmap::map(&opened) }
        .unwrap_or_else(|e| panic!("cannot map {}: {e}", file.display()));
    let summary = mcap::Summary::read(&bytes)
        .unwrap_or_else(|e| panic!("{} has no readable summary: {e}", file.display()))
        .unwrap_or_else(|| panic!("{} has no summary", file.display()));
    let channel = (summary.channels.values())
        .find(|channel| channel.topic == topic)
        .unwrap_or_else(|| panic!("{} has no channel {topic}", file.display()));
    channel
        .metadata
        .get(SUBSCRIBER_MAX_BUFFER_SIZE)
        .and_then(|depth| depth.parse().ok())
        .unwrap_or_else(|| {
            panic!(
                "channel {topic} of {} records no {SUBSCRIBER_MAX_BUFFER_SIZE}: {:?}",
                file.display(),
                channel.metadata
            )
        })
}

/// One recorded message with its channel and schema, as the `mcap` crate reads it.
#[derive(Debug, Clone)]
pub struct RecordedMessage {
    /// Its channel's topic.
    pub topic: String,
    /// Its schema's name.
    pub schema_name: String,
    /// Its schema's encoding (`ros2msg`, `omgidl`, …).
    pub schema_encoding: String,
    /// Its schema's data (the message definition; empty where recd had none).
    pub schema_data: Vec<u8>,
    /// Its channel's message encoding.
    pub message_encoding: String,
    /// Its channel's metadata.
    pub metadata: BTreeMap<String, String>,
    /// Its payload.
    pub data: Vec<u8>,
}

/// Every message of `paths`, in file order, read by the `mcap` crate; recd's own health
/// channel is left out. Panics on a message without a schema (recd gives every recorded
/// topic one).
pub fn recorded_messages(paths: &[PathBuf]) -> Vec<RecordedMessage> {
    let mut messages = Vec::new();
    for path in paths {
        let bytes =
            std::fs::read(path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
        for message in mcap::MessageStream::new(&bytes).unwrap() {
            let message = message.unwrap();
            if message.channel.topic == recd_engine::recd_health::HEALTH_CHANNEL {
                // recd's account of the topics' health, no recorded topic.
                continue;
            }
            let schema = message.channel.schema.clone().expect("a schema");
            messages.push(RecordedMessage {
                topic: message.channel.topic.clone(),
                schema_name: schema.name.clone(),
                schema_encoding: schema.encoding.clone(),
                schema_data: schema.data.to_vec(),
                message_encoding: message.channel.message_encoding.clone(),
                metadata: message.channel.metadata.clone(),
                data: message.data.to_vec(),
            });
        }
    }
    messages
}
