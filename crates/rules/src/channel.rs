//! A content rule made ready for its topic's channel as recorded, the one way both recd
//! (from the writer's channel) and `rec rules test` (from the file's) do it: a ROS 2
//! channel is decoded with its `ros2msg` schema, any other with the fields the rule
//! declares, skipping the iceoryx2 user header whose size the channel's metadata gives.

use std::collections::BTreeMap;

use recd_storage::iceoryx2::USER_HEADER_SIZE;

use crate::condition::{Condition, Layout};
use crate::config::{Rule, RuleKind};
use crate::runner::RuleRunner;

/// What a rule needs to know of its topic's channel.
#[derive(Debug, Clone, Copy)]
pub struct ChannelView<'a> {
    /// The topic.
    pub topic: &'a str,
    /// The channel's message encoding (`cdr`, `iceoryx2`).
    pub message_encoding: &'a str,
    /// The schema's name (the message type).
    pub schema_name: &'a str,
    /// The schema's encoding (`ros2msg`).
    pub schema_encoding: &'a str,
    /// The schema's data (the concatenated message definition).
    pub schema_data: &'a [u8],
    /// The channel's metadata.
    pub metadata: &'a BTreeMap<String, String>,
}

/// Why a rule cannot run on a channel; its words go to `rec status` and the log.
#[derive(Debug, thiserror::Error)]
pub enum NoRunner {
    /// A health rule reads no messages.
    #[error("rule {rule:?} watches health, not messages")]
    WatchesHealth {
        /// The rule.
        rule: String,
    },
    /// A ROS 2 topic recorded without its `.msg` definition.
    #[error("topic {topic} ({type_name}) has no message definition: add the directory of its .msg files to dds_message_dirs")]
    NoDefinition {
        /// The topic.
        topic: String,
        /// Its message type.
        type_name: String,
    },
    /// The definition recorded is not text.
    #[error("topic {topic}'s message definition is not UTF-8")]
    NotUtf8 {
        /// The topic.
        topic: String,
    },
    /// Neither a schema a rule decodes nor fields declared by the rule.
    #[error("topic {topic} has no schema a rule can decode (message encoding {encoding:?}): declare the fields the rule reads, e.g. fields = {{ speed = \"f32@8\" }}")]
    NoSchema {
        /// The topic.
        topic: String,
        /// Its message encoding.
        encoding: String,
    },
    /// The condition does not compile against the channel's layout.
    #[error(transparent)]
    Condition(#[from] crate::error::CompileError),
}

impl Rule {
    /// The rule compiled against `channel`, ready for its samples, or why it cannot run
    /// there. A health rule has none.
    pub fn runner_for(&self, channel: &ChannelView<'_>) -> Result<RuleRunner, NoRunner> {
        let RuleKind::Content {
            expression, fields, ..
        } = &self.kind
        else {
            return Err(NoRunner::WatchesHealth {
                rule: self.name.clone(),
            });
        };
        let layout = match fields {
            Some(fields) => Layout::Fields {
                fields,
                user_header_size: channel
                    .metadata
                    .get(USER_HEADER_SIZE)
                    .and_then(|size| size.parse().ok())
                    .unwrap_or(0),
            },
            None if channel.message_encoding == "cdr" && channel.schema_encoding == "ros2msg" => {
                if channel.schema_data.is_empty() {
                    return Err(NoRunner::NoDefinition {
                        topic: channel.topic.to_string(),
                        type_name: channel.schema_name.to_string(),
                    });
                }
                Layout::Ros2 {
                    type_name: channel.schema_name,
                    definition: std::str::from_utf8(channel.schema_data).map_err(|_| {
                        NoRunner::NotUtf8 {
                            topic: channel.topic.to_string(),
                        }
                    })?,
                }
            }
            None => {
                return Err(NoRunner::NoSchema {
                    topic: channel.topic.to_string(),
                    encoding: channel.message_encoding.to_string(),
                })
            }
        };
        let condition = Condition::compile(expression, layout)?;
        Ok(RuleRunner::new(condition, self.hold, self.holdoff))
    }
}
