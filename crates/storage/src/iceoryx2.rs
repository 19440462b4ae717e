//! How recd stores iceoryx2 samples in MCAP.
//!
//! A sample is recorded so that a replay can reproduce it byte for byte:
//!
//! - The channel's message encoding is [`MESSAGE_ENCODING`] (`iceoryx2`). Each Message
//!   record's data is the sample's **user header bytes followed by its payload bytes**, as
//!   they were in shared memory. The user header is [`USER_HEADER_SIZE`] bytes long (0
//!   when the service has no user header), so a reader splits the data there.
//! - The channel's schema is named after the payload type (the type name iceoryx2 keeps
//!   in the service's static config), with schema encoding [`SCHEMA_ENCODING`] and empty
//!   data: iceoryx2 carries type names and layouts, not definitions.
//! - Channel metadata keeps the type details of payload and user header from the
//!   service's static config, under the keys below (sizes and alignments in bytes, as
//!   decimal strings; variants `FixedSize` or `Dynamic`). A `Dynamic` payload is a slice
//!   whose length is the record's data length minus the user header size. The service's
//!   history and limits are kept too, so that a replay can create the service alike.
//! - `publish_time` is the source time stamp of rmw_iceoryx2's user header
//!   (`rmw_iceoryx2/MessageInfoHeader`: `i64` source time stamp in ns, then `u64`
//!   publication sequence number, native byte order) when the service carries it, else
//!   the receive time. Services named `ros2://topics/<name>` (rmw_iceoryx2's convention)
//!   are recorded under the ROS topic name `/<name>`; every other service under its
//!   iceoryx2 service name.

/// Message encoding of channels that hold iceoryx2 samples.
pub const MESSAGE_ENCODING: &str = "iceoryx2";
/// Schema encoding of the payload-type schemas of iceoryx2 channels.
pub const SCHEMA_ENCODING: &str = "iceoryx2";
/// Channel metadata key: the iceoryx2 service name the channel was recorded from.
pub const SERVICE_NAME: &str = "iceoryx2.service";
/// Channel metadata key: the payload's type name.
pub const PAYLOAD_TYPE_NAME: &str = "iceoryx2.payload.type_name";
/// Channel metadata key: the payload's (element) size.
pub const PAYLOAD_SIZE: &str = "iceoryx2.payload.size";
/// Channel metadata key: the payload's alignment.
pub const PAYLOAD_ALIGNMENT: &str = "iceoryx2.payload.alignment";
/// Channel metadata key: the payload's variant, `FixedSize` or `Dynamic`.
pub const PAYLOAD_VARIANT: &str = "iceoryx2.payload.variant";
/// Channel metadata key: the user header's type name.
pub const USER_HEADER_TYPE_NAME: &str = "iceoryx2.user_header.type_name";
/// Channel metadata key: the user header's size; the first this many bytes of each
/// message are the user header.
pub const USER_HEADER_SIZE: &str = "iceoryx2.user_header.size";
/// Channel metadata key: the user header's alignment.
pub const USER_HEADER_ALIGNMENT: &str = "iceoryx2.user_header.alignment";
/// Channel metadata key: the user header's variant.
pub const USER_HEADER_VARIANT: &str = "iceoryx2.user_header.variant";
/// Channel metadata key: the service's history size; a non-zero history makes the topic
/// latched, and its last message is repeated at the start of every split file.
pub const HISTORY_SIZE: &str = "iceoryx2.history_size";
/// Channel metadata key: the service's subscriber buffer size (samples).
pub const SUBSCRIBER_MAX_BUFFER_SIZE: &str = "iceoryx2.subscriber_max_buffer_size";
/// Channel metadata key: the samples a subscriber may borrow at once, per publisher.
pub const SUBSCRIBER_MAX_BORROWED_SAMPLES: &str = "iceoryx2.subscriber_max_borrowed_samples";
/// Channel metadata key: the service's publisher limit.
pub const MAX_PUBLISHERS: &str = "iceoryx2.max_publishers";
/// Channel metadata key: the service's subscriber limit.
pub const MAX_SUBSCRIBERS: &str = "iceoryx2.max_subscribers";
/// Channel metadata key: the service's node limit.
pub const MAX_NODES: &str = "iceoryx2.max_nodes";
/// Channel metadata key: `true` when a full subscriber buffer overwrites its oldest
/// sample (safe overflow), `false` when the publisher is held up.
pub const SAFE_OVERFLOW: &str = "iceoryx2.safe_overflow";

/// Type name of rmw_iceoryx2's user header, whose time stamp and sequence number recd
/// reads.
pub const RMW_MESSAGE_INFO_HEADER: &str = "rmw_iceoryx2/MessageInfoHeader";
/// Service name prefix of rmw_iceoryx2's topics.
pub const RMW_TOPIC_PREFIX: &str = "ros2://topics/";

/// Name of the Metadata record that holds the recorder's per-topic counts in files
/// written before it got a name per file ([`recorder_metadata_name`]).
pub const RECORDER_METADATA: &str = "recorder";

/// Name of the Metadata record of `file_name` that holds the recorder's per-topic counts:
/// `recorder/<file name>`. See [`per_file_name`].
pub fn recorder_metadata_name(file_name: &str) -> String {
    per_file_name(RECORDER_METADATA, file_name)
}

/// What names the Metadata record of a file's health: each topic's expectation, rate,
/// gaps and gap map, and the required topics missing; `health/<file name>`
/// ([`per_file_name`]).
pub const HEALTH_METADATA: &str = "health";

/// Name of the Metadata record of `file_name` that holds its health: `health/<file
/// name>`.
pub fn health_metadata_name(file_name: &str) -> String {
    per_file_name(HEALTH_METADATA, file_name)
}

/// What names the Metadata records of the ROS 2 parameters a file starts with (`rec start
/// --parameters`): one record per node, `parameters/<file name>/<node>` with the node's
/// full name (`/ns/talker`), each entry a parameter's name and its value as YAML
/// ([`parameters_metadata_name`]).
pub const PARAMETERS_METADATA: &str = "parameters";

/// Name of the Metadata record of `file_name` that holds the parameters of `node` (its
/// full name, `/ns/talker`): `parameters/<file name>/ns/talker`.
pub fn parameters_metadata_name(file_name: &str, node: &str) -> String {
    let node = node.strip_prefix('/').unwrap_or(node);
    format!("{}/{node}", per_file_name(PARAMETERS_METADATA, file_name))
}

/// The node (`/ns/talker`) whose parameters a Metadata record of this name holds, if it
/// is one ([`parameters_metadata_name`]).
pub fn parameters_node(name: &str) -> Option<String> {
    let rest = name.strip_prefix(PARAMETERS_METADATA)?.strip_prefix('/')?;
    let (_file, node) = rest.split_once('/')?;
    (!node.is_empty()).then(|| format!("/{node}"))
}

/// Whether a Metadata record of this name holds the recorder's per-topic counts.
pub fn is_recorder_metadata(name: &str) -> bool {
    name == RECORDER_METADATA
        || name
            .strip_prefix(RECORDER_METADATA)
            .is_some_and(|rest| rest.starts_with('/'))
}

/// What names the Metadata record of a session's `rec start --metadata KEY=VALUE`
/// entries; each file's is `user/<file name>` ([`per_file_name`]).
pub const USER_METADATA: &str = "user";

/// What names a marker's Metadata record (`rec mark`): entries `time` (ns since the Unix
/// epoch) and `text`.
pub const MARKER: &str = "marker";

/// What names a trigger's Metadata record (`rec trigger`): entries `time`, `start` and
/// `end` (ns since the Unix epoch) and `note` (see [`crate::Trigger`]).
pub const TRIGGER: &str = "trigger";

/// `<kind>/<file name>`: the name of a Metadata record that every file of a session has.
/// Each file's is its own, because `mcap merge` refuses two records of one name, even
/// identical ones (unless `--allow-duplicate-metadata`).
pub fn per_file_name(kind: &str, file_name: &str) -> String {
    format!("{kind}/{file_name}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_parameters_record_names_its_file_and_node() {
        let name = parameters_metadata_name("drive_0002.mcap", "/ns/talker");
        assert_eq!(name, "parameters/drive_0002.mcap/ns/talker");
        assert_eq!(parameters_node(&name).as_deref(), Some("/ns/talker"));
        assert_eq!(parameters_node("parameters/drive_0002.mcap"), None);
        assert_eq!(parameters_node("recorder/drive_0002.mcap"), None);
        assert_eq!(parameters_node("parametersx/a/b"), None);
    }
}
