//! What an iceoryx2 service's static config says about its samples, and how that is
//! written down in the file (keys in [`recd_storage::iceoryx2`]).

use std::collections::BTreeMap;

use iceoryx2::service::static_config::message_type_details::{TypeDetail, TypeVariant};
use iceoryx2::service::static_config::publish_subscribe::StaticConfig;
use recd_storage::iceoryx2 as keys;

use crate::topic::ChannelSpec;

/// Type details of a payload or user header, as iceoryx2 keeps them in the static config.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TypeDetails {
    /// The type's name.
    pub type_name: String,
    /// Size in bytes (of one element, for a slice payload).
    pub size: usize,
    /// Alignment in bytes.
    pub alignment: usize,
    /// `FixedSize` or `Dynamic`.
    pub variant: &'static str,
}

impl TypeDetails {
    fn of(detail: &TypeDetail) -> Self {
        Self {
            type_name: detail.type_name().to_string(),
            size: detail.size(),
            alignment: detail.alignment(),
            variant: match detail.variant() {
                TypeVariant::FixedSize => "FixedSize",
                TypeVariant::Dynamic => "Dynamic",
            },
        }
    }
}

/// The sample layout, history and limits of a publish-subscribe service.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ServiceTypes {
    pub payload: TypeDetails,
    pub user_header: TypeDetails,
    /// Non-zero when the service keeps a history for late subscribers (a latched topic).
    pub history_size: usize,
    /// The limits it was created with, by metadata key, so that a replay can create it
    /// alike.
    pub limits: Vec<(&'static str, String)>,
}

impl ServiceTypes {
    /// The types of the service whose static config this is.
    pub fn of(config: &StaticConfig) -> Self {
        let types = config.message_type_details();
        Self {
            payload: TypeDetails::of(&types.payload),
            user_header: TypeDetails::of(&types.user_header),
            history_size: config.history_size(),
            limits: vec![
                (
                    keys::SUBSCRIBER_MAX_BUFFER_SIZE,
                    config.subscriber_max_buffer_size().to_string(),
                ),
                (
                    keys::SUBSCRIBER_MAX_BORROWED_SAMPLES,
                    config.subscriber_max_borrowed_samples().to_string(),
                ),
                (keys::MAX_PUBLISHERS, config.max_publishers().to_string()),
                (keys::MAX_SUBSCRIBERS, config.max_subscribers().to_string()),
                (keys::MAX_NODES, config.max_nodes().to_string()),
                (keys::SAFE_OVERFLOW, config.has_safe_overflow().to_string()),
            ],
        }
    }

    /// The schema and channel records of `service`: message encoding `iceoryx2`, the
    /// payload type as schema, the type details as channel metadata.
    pub fn channel(&self, service: &str) -> ChannelSpec {
        let entries = [
            (keys::SERVICE_NAME, service.to_string()),
            (keys::PAYLOAD_TYPE_NAME, self.payload.type_name.clone()),
            (keys::PAYLOAD_SIZE, self.payload.size.to_string()),
            (keys::PAYLOAD_ALIGNMENT, self.payload.alignment.to_string()),
            (keys::PAYLOAD_VARIANT, self.payload.variant.to_string()),
            (
                keys::USER_HEADER_TYPE_NAME,
                self.user_header.type_name.clone(),
            ),
            (keys::USER_HEADER_SIZE, self.user_header.size.to_string()),
            (
                keys::USER_HEADER_ALIGNMENT,
                self.user_header.alignment.to_string(),
            ),
            (
                keys::USER_HEADER_VARIANT,
                self.user_header.variant.to_string(),
            ),
            (keys::HISTORY_SIZE, self.history_size.to_string()),
        ];
        ChannelSpec {
            message_encoding: keys::MESSAGE_ENCODING.to_string(),
            schema_name: self.payload.type_name.clone(),
            schema_encoding: keys::SCHEMA_ENCODING.to_string(),
            schema_data: Vec::new(),
            metadata: entries
                .into_iter()
                .chain(self.limits.iter().cloned())
                .map(|(k, v)| (k.to_string(), v))
                .collect::<BTreeMap<_, _>>(),
        }
    }

    /// Whether the user header is rmw_iceoryx2's, carrying a source time stamp and a
    /// sequence number.
    pub fn has_rmw_header(&self) -> bool {
        self.user_header.type_name == keys::RMW_MESSAGE_INFO_HEADER && self.user_header.size == 16
    }
}

/// The name a service's channel gets: rmw_iceoryx2 topics by their ROS name.
pub fn channel_name(service: &str) -> String {
    match service.strip_prefix(keys::RMW_TOPIC_PREFIX) {
        Some(ros) => format!("/{}", ros.trim_start_matches('/')),
        None => service.to_string(),
    }
}

/// Reads rmw_iceoryx2's user header: (source time stamp in ns, sequence number).
pub fn read_rmw_header(header: &[u8]) -> Option<(i64, u64)> {
    let stamp = i64::from_ne_bytes(header.get(0..8)?.try_into().ok()?);
    let sequence = u64::from_ne_bytes(header.get(8..16)?.try_into().ok()?);
    Some((stamp, sequence))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ros_topics_get_their_ros_names() {
        assert_eq!(channel_name("ros2://topics/chatter"), "/chatter");
        assert_eq!(channel_name("ros2://topics/a/b"), "/a/b");
        assert_eq!(channel_name("camera/front"), "camera/front");
    }

    #[test]
    fn rmw_header_is_read_in_native_order() {
        let mut bytes = Vec::new();
        bytes.extend_from_slice(&(-5i64).to_ne_bytes());
        bytes.extend_from_slice(&42u64.to_ne_bytes());
        assert_eq!(read_rmw_header(&bytes), Some((-5, 42)));
        assert_eq!(read_rmw_header(&bytes[..10]), None);
    }
}
