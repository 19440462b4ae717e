//! Playing iceoryx2 channels: each goes to the service of the same name with the recorded
//! type details, opened if it exists or created, and each message is copied straight
//! from the file's bytes into a loaned sample, user header restored byte for byte.

use std::mem::MaybeUninit;

use iceoryx2::prelude::*;
use iceoryx2::service::marker::{CustomHeaderMarker, CustomPayloadMarker};
use iceoryx2::service::messaging_pattern::MessagingPattern;
use iceoryx2::service::static_config::message_type_details::{TypeDetail, TypeVariant};
use iceoryx2::service::static_config::messaging_pattern::MessagingPattern as PatternConfig;
use recd_storage::iceoryx2 as keys;
use recd_storage::RecordedChannel;

use recd_engine::ShmFlavor as Flavor;
type RawPublisher =
    iceoryx2::port::publisher::Publisher<Flavor, [CustomPayloadMarker], CustomHeaderMarker>;

/// The iceoryx2 side of a playback: one node, a publisher per channel.
pub struct ShmOutput {
    node: Node<Flavor>,
}

/// One channel's service and publisher.
pub struct ShmTopic {
    service: iceoryx2::service::port_factory::publish_subscribe::PortFactory<
        Flavor,
        [CustomPayloadMarker],
        CustomHeaderMarker,
    >,
    publisher: RawPublisher,
    header_len: usize,
    payload: TypeDetail,
}

/// The recorded type details of a channel, from its metadata.
struct RecordedTypes {
    service: String,
    payload: TypeDetail,
    user_header: TypeDetail,
    history_size: usize,
}

impl ShmOutput {
    /// A node in the iceoryx2 domain of `prefix` (iceoryx2's default when `None`).
    pub fn new(prefix: Option<&str>) -> Result<Self, String> {
        let node = recd_engine::iceoryx2_node(prefix).map_err(|e| e.to_string())?;
        Ok(Self { node })
    }

    /// Opens (or creates) the service of `channel`, played as `topic` (its recorded name
    /// or a remapped one), and a publisher on it; refuses a service that exists with other
    /// types, naming both.
    pub fn open(&self, channel: &RecordedChannel, topic: &str) -> Result<ShmTopic, String> {
        let mut types = RecordedTypes::of(channel)?;
        if topic != channel.topic {
            types.service = remapped_service(&types.service, topic);
        }
        let name = ServiceName::new(&types.service)
            .map_err(|e| format!("invalid service name {:?}: {e:?}", types.service))?;
        if let Some(existing) = self.existing_types(&name)? {
            if existing.0 != types.payload || existing.1 != types.user_header {
                return Err(format!(
                    "service {} exists with payload {} and user header {}; the recording has payload {} and user header {}",
                    types.service,
                    describe(&existing.0),
                    describe(&existing.1),
                    describe(&types.payload),
                    describe(&types.user_header)
                ));
            }
        }
        // SAFETY: the type details are the ones the samples were recorded with; every
        // message is written as that many bytes of user header and payload.
        let service = unsafe {
            self.node
                .service_builder(&name)
                .publish_subscribe::<[CustomPayloadMarker]>()
                .user_header::<CustomHeaderMarker>()
                .__internal_set_payload_type_details(&types.payload)
                .__internal_set_user_header_type_details(&types.user_header)
                .history_size(types.history_size)
                .open_or_create()
        }
        .map_err(|e| format!("cannot open or create service {}: {e:?}", types.service))?;
        let publisher = service
            .publisher_builder()
            .initial_max_slice_len(1)
            .allocation_strategy(AllocationStrategy::PowerOfTwo)
            .create()
            .map_err(|e| format!("cannot publish on {}: {e:?}", types.service))?;
        Ok(ShmTopic {
            service,
            publisher,
            header_len: types.user_header.size(),
            payload: types.payload,
        })
    }

    /// The payload and user header types of the service `name`, if it exists.
    fn existing_types(
        &self,
        name: &ServiceName,
    ) -> Result<Option<(TypeDetail, TypeDetail)>, String> {
        let details = Flavor::details(name, self.node.config(), MessagingPattern::PublishSubscribe)
            .map_err(|e| format!("cannot look up service {name}: {e:?}"))?;
        Ok(
            details.and_then(|d| match d.static_details.messaging_pattern() {
                PatternConfig::PublishSubscribe(config) => {
                    let types = config.message_type_details();
                    Some((types.payload, types.user_header))
                }
                _ => None,
            }),
        )
    }
}

impl ShmTopic {
    /// Subscribers of the service now.
    pub fn subscribers(&self) -> usize {
        self.service.dynamic_config().number_of_subscribers()
    }

    /// Sends one recorded message: its first bytes are the user header, the rest the
    /// payload.
    pub fn send(&self, data: &[u8]) -> Result<(), String> {
        if data.len() < self.header_len {
            return Err(format!(
                "a message of {} bytes is shorter than its {}-byte user header",
                data.len(),
                self.header_len
            ));
        }
        let (header, payload) = data.split_at(self.header_len);
        let element = self.payload.size().max(1);
        if payload.len() % element != 0 {
            return Err(format!(
                "a payload of {} bytes is not a whole number of {element}-byte elements",
                payload.len()
            ));
        }
        let elements = payload.len() / element;
        if self.payload.variant() == TypeVariant::FixedSize && elements != 1 {
            return Err(format!(
                "a payload of {} bytes does not fit its fixed-size type of {element} bytes",
                payload.len()
            ));
        }
        // SAFETY: `elements` is 1 for a fixed-size payload, and the sample is filled with
        // exactly `elements * size` payload bytes and `header_len` user-header bytes
        // before it is marked initialized.
        let mut sample = unsafe { self.publisher.loan_custom_payload(elements) }
            .map_err(|e| format!("cannot loan a sample: {e:?}"))?;
        let slots: &mut [MaybeUninit<CustomPayloadMarker>] = sample.payload_mut();
        debug_assert_eq!(slots.len(), payload.len());
        // SAFETY: the loan holds `payload.len()` bytes (elements times the element size),
        // and the user header `header_len` bytes, as the service's type details say.
        unsafe {
            std::ptr::copy_nonoverlapping(
                payload.as_ptr(),
                slots.as_mut_ptr().cast::<u8>(),
                payload.len(),
            );
            let user_header: *mut CustomHeaderMarker = sample.user_header_mut();
            std::ptr::copy_nonoverlapping(header.as_ptr(), user_header.cast::<u8>(), header.len());
            sample.assume_init()
        }
        .send()
        .map_err(|e| format!("cannot send: {e:?}"))?;
        Ok(())
    }
}

impl RecordedTypes {
    fn of(channel: &RecordedChannel) -> Result<Self, String> {
        let meta = &channel.metadata;
        let get = |key: &str| {
            meta.get(key)
                .map(String::as_str)
                .ok_or_else(|| format!("channel {} lacks its {key} metadata", channel.topic))
        };
        let number = |key: &str| -> Result<usize, String> {
            get(key)?
                .parse()
                .map_err(|_| format!("channel {}: {key} is not a number", channel.topic))
        };
        let detail = |name: &str, size: &str, alignment: &str, variant: &str| {
            let variant = match get(variant)? {
                "Dynamic" => TypeVariant::Dynamic,
                _ => TypeVariant::FixedSize,
            };
            TypeDetail::__internal_new_from_parts(
                variant,
                get(name)?,
                number(size)?,
                number(alignment)?,
            )
            .map_err(|e| format!("channel {}: type name too long: {e:?}", channel.topic))
        };
        Ok(Self {
            service: meta
                .get(keys::SERVICE_NAME)
                .cloned()
                .unwrap_or_else(|| channel.topic.clone()),
            payload: detail(
                keys::PAYLOAD_TYPE_NAME,
                keys::PAYLOAD_SIZE,
                keys::PAYLOAD_ALIGNMENT,
                keys::PAYLOAD_VARIANT,
            )?,
            user_header: detail(
                keys::USER_HEADER_TYPE_NAME,
                keys::USER_HEADER_SIZE,
                keys::USER_HEADER_ALIGNMENT,
                keys::USER_HEADER_VARIANT,
            )?,
            history_size: meta
                .get(keys::HISTORY_SIZE)
                .and_then(|h| h.parse().ok())
                .unwrap_or(0),
        })
    }
}

/// The service a channel recorded from `service` plays to under the remapped name
/// `topic`: an rmw_iceoryx2 topic (`ros2://topics/a`, recorded as `/a`) stays one.
fn remapped_service(service: &str, topic: &str) -> String {
    match topic.strip_prefix('/') {
        Some(ros) if service.starts_with(keys::RMW_TOPIC_PREFIX) => {
            format!("{}{ros}", keys::RMW_TOPIC_PREFIX)
        }
        _ => topic.to_string(),
    }
}

/// A type for people: name, size, alignment.
fn describe(detail: &TypeDetail) -> String {
    format!(
        "{} ({} bytes, aligned to {})",
        detail.type_name(),
        detail.size(),
        detail.alignment()
    )
}

/// Whether `channel` was recorded from iceoryx2.
pub fn is_shm(channel: &RecordedChannel) -> bool {
    channel.message_encoding == keys::MESSAGE_ENCODING
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn remapped_rmw_topics_stay_rmw_topics() {
        assert_eq!(
            remapped_service("ros2://topics/chatter", "/echo"),
            "ros2://topics/echo"
        );
        assert_eq!(
            remapped_service("camera/front", "camera/rear"),
            "camera/rear"
        );
    }
}
