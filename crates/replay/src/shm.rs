//! Playing iceoryx2 channels: each goes to the service of the same name with the recorded
//! type details, opened if it exists or created, and each message is copied straight
//! from the file's bytes into a loaned sample, user header restored byte for byte.

use std::mem::MaybeUninit;

use iceoryx2::prelude::*;
use iceoryx2::service::builder::publish_subscribe::{
    PublishSubscribeCreateError, PublishSubscribeOpenError,
};
use iceoryx2::service::marker::{CustomHeaderMarker, CustomPayloadMarker};
use iceoryx2::service::messaging_pattern::MessagingPattern;
use iceoryx2::service::static_config::message_type_details::{TypeDetail, TypeVariant};
use iceoryx2::service::static_config::messaging_pattern::MessagingPattern as PatternConfig;
use recd_storage::iceoryx2 as keys;
use recd_storage::RecordedChannel;

use recd_engine::ShmFlavor as Flavor;
type RawPublisher =
    iceoryx2::port::publisher::Publisher<Flavor, [CustomPayloadMarker], CustomHeaderMarker>;

/// A loaned sample filled with a message, ready to send.
pub type FilledSample =
    iceoryx2::sample_mut::SampleMut<Flavor, [CustomPayloadMarker], CustomHeaderMarker>;

/// The iceoryx2 side of a playback: one node, a publisher per channel.
pub struct ShmOutput {
    node: Node<Flavor>,
}

type PubSubService = iceoryx2::service::port_factory::publish_subscribe::PortFactory<
    Flavor,
    [CustomPayloadMarker],
    CustomHeaderMarker,
>;

/// One channel's service and publisher.
pub struct ShmTopic {
    service: PubSubService,
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
    limits: RecordedLimits,
}

/// The limits the recorded service had; `None` where the file does not say (recorded
/// before recd kept them), which leaves iceoryx2's default.
#[derive(Debug, Default)]
struct RecordedLimits {
    subscriber_max_buffer_size: Option<usize>,
    subscriber_max_borrowed_samples: Option<usize>,
    max_publishers: Option<usize>,
    max_subscribers: Option<usize>,
    max_nodes: Option<usize>,
    safe_overflow: Option<bool>,
}

type Builder = iceoryx2::service::builder::publish_subscribe::Builder<
    [CustomPayloadMarker],
    CustomHeaderMarker,
    Flavor,
>;

impl RecordedLimits {
    fn of(metadata: &std::collections::BTreeMap<String, String>) -> Self {
        let number = |key: &str| metadata.get(key).and_then(|v| v.parse().ok());
        Self {
            subscriber_max_buffer_size: number(keys::SUBSCRIBER_MAX_BUFFER_SIZE),
            subscriber_max_borrowed_samples: number(keys::SUBSCRIBER_MAX_BORROWED_SAMPLES),
            max_publishers: number(keys::MAX_PUBLISHERS),
            max_subscribers: number(keys::MAX_SUBSCRIBERS),
            max_nodes: number(keys::MAX_NODES),
            safe_overflow: metadata
                .get(keys::SAFE_OVERFLOW)
                .and_then(|v| v.parse().ok()),
        }
    }

    fn apply(&self, mut builder: Builder) -> Builder {
        if let Some(n) = self.subscriber_max_buffer_size {
            builder = builder.subscriber_max_buffer_size(n);
        }
        if let Some(n) = self.subscriber_max_borrowed_samples {
            builder = builder.subscriber_max_borrowed_samples(n);
        }
        if let Some(n) = self.max_publishers {
            builder = builder.max_publishers(n);
        }
        if let Some(n) = self.max_subscribers {
            builder = builder.max_subscribers(n);
        }
        if let Some(n) = self.max_nodes {
            builder = builder.max_nodes(n);
        }
        if let Some(safe) = self.safe_overflow {
            builder = builder.enable_safe_overflow(safe);
        }
        builder
    }
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
        let service = self.open_or_create(&name, &types)?;
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

    /// The service `name` with the recorded types: opened as it is when it exists (the
    /// system under test made it), else created with the recorded history and limits.
    fn open_or_create(
        &self,
        name: &ServiceName,
        types: &RecordedTypes,
    ) -> Result<PubSubService, String> {
        let builder = || {
            // SAFETY: the type details are the ones the samples were recorded with; every
            // message is written as that many bytes of user header and payload.
            unsafe {
                self.node
                    .service_builder(name)
                    .publish_subscribe::<[CustomPayloadMarker]>()
                    .user_header::<CustomHeaderMarker>()
                    .__internal_set_payload_type_details(&types.payload)
                    .__internal_set_user_header_type_details(&types.user_header)
            }
        };
        let failed =
            |e: &dyn std::fmt::Debug| format!("cannot open or create service {name}: {e:?}");
        match builder().open() {
            Ok(service) => return Ok(service),
            Err(PublishSubscribeOpenError::DoesNotExist) => {}
            Err(e) => return Err(failed(&e)),
        }
        match types
            .limits
            .apply(builder().history_size(types.history_size))
            .create()
        {
            Ok(service) => Ok(service),
            // Someone created it meanwhile.
            Err(PublishSubscribeCreateError::AlreadyExists) => {
                builder().open().map_err(|e| failed(&e))
            }
            Err(e) => Err(failed(&e)),
        }
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

    /// Sends a sample [`Self::fill`] filled.
    pub fn send_filled(sample: FilledSample) -> Result<(), String> {
        sample
            .send()
            .map(drop)
            .map_err(|e| format!("cannot send: {e:?}"))
    }

    /// Loans a sample and copies one recorded message into it (its first bytes are the
    /// user header, the rest the payload), to send later; dropping it gives the loan back.
    pub fn fill(&self, data: &[u8]) -> Result<FilledSample, String> {
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
            Ok(sample.assume_init())
        }
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
            limits: RecordedLimits::of(meta),
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
    use std::collections::BTreeMap;

    fn channel(service: &str, extra: &[(&str, &str)]) -> RecordedChannel {
        let mut metadata: BTreeMap<String, String> = [
            (keys::SERVICE_NAME, service),
            (keys::PAYLOAD_TYPE_NAME, "u8"),
            (keys::PAYLOAD_SIZE, "1"),
            (keys::PAYLOAD_ALIGNMENT, "1"),
            (keys::PAYLOAD_VARIANT, "Dynamic"),
            (keys::USER_HEADER_TYPE_NAME, "()"),
            (keys::USER_HEADER_SIZE, "0"),
            (keys::USER_HEADER_ALIGNMENT, "1"),
            (keys::USER_HEADER_VARIANT, "FixedSize"),
        ]
        .iter()
        .chain(extra)
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        metadata.insert(keys::SERVICE_NAME.into(), service.into());
        RecordedChannel {
            topic: service.into(),
            message_encoding: keys::MESSAGE_ENCODING.into(),
            schema_name: "u8".into(),
            schema_encoding: String::new(),
            schema_data: Vec::new(),
            metadata,
        }
    }

    /// Removes the files of an iceoryx2 domain when dropped.
    struct Prefix(String);

    impl Drop for Prefix {
        fn drop(&mut self) {
            for dir in ["/dev/shm", "/tmp/iceoryx2"] {
                let _ = remove_prefixed(std::path::Path::new(dir), &self.0);
            }
        }
    }

    fn remove_prefixed(dir: &std::path::Path, prefix: &str) -> std::io::Result<()> {
        for entry in std::fs::read_dir(dir)? {
            let path = entry?.path();
            if path.is_dir() {
                let _ = remove_prefixed(&path, prefix);
            } else if path
                .file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with(prefix))
            {
                let _ = std::fs::remove_file(&path);
            }
        }
        Ok(())
    }

    #[test]
    fn a_service_is_created_with_the_recorded_limits_and_an_existing_one_opened_as_it_is() {
        let prefix = Prefix(format!("recd_shm_test{}_", std::process::id()));
        let output = ShmOutput::new(Some(&prefix.0)).unwrap();
        let limits = [
            (keys::HISTORY_SIZE, "2"),
            (keys::SUBSCRIBER_MAX_BUFFER_SIZE, "7"),
            (keys::SUBSCRIBER_MAX_BORROWED_SAMPLES, "3"),
            (keys::MAX_PUBLISHERS, "4"),
            (keys::MAX_SUBSCRIBERS, "5"),
            (keys::SAFE_OVERFLOW, "false"),
        ];
        let created = output
            .open(&channel("made/here", &limits), "made/here")
            .unwrap();
        let config = created.service.static_config();
        assert_eq!(config.history_size(), 2);
        assert_eq!(config.subscriber_max_buffer_size(), 7);
        assert_eq!(config.subscriber_max_borrowed_samples(), 3);
        assert_eq!(config.max_publishers(), 4);
        assert_eq!(config.max_subscribers(), 5);
        assert!(!config.has_safe_overflow());

        // The system under test made it with iceoryx2's defaults (no history): it is
        // used as it is, although the recording asks for more.
        let existing = output.open(&channel("theirs", &[]), "theirs").unwrap();
        let history = existing.service.static_config().history_size();
        let played = output.open(&channel("theirs", &limits), "theirs").unwrap();
        assert_eq!(played.service.static_config().history_size(), history);
        drop((created, existing, played, output));
    }

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
