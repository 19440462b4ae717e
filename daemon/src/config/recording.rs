//! From a `rec start` request and the daemon's session defaults to the engine's
//! recording configuration.

use std::path::PathBuf;
use std::time::Duration;

use recd_control::{AttachedFile, StartRequest, MAX_ATTACHMENT_BYTES};
use recd_engine::{
    DdsConfig, NameSelection, PreTrigger, RecordingConfig, RingConfig, SplitPolicy, ThrottleRule,
    TopicSelection, DEFAULT_BUFFER_BYTES, MIN_BUFFER_BYTES,
};
use recd_storage::UnknownIoMode;

use super::SessionDefaults;

/// The smallest file size a session splits at (0 is no splitting).
pub const MIN_SPLIT_BYTES: u64 = 1 << 20;
/// The shortest file duration a session splits at (0 is no splitting).
pub const MIN_SPLIT_DURATION: Duration = Duration::from_secs(1);

/// Why a start request cannot become a recording configuration.
#[derive(Debug, thiserror::Error)]
pub enum RequestError {
    /// The I/O mode does not exist.
    #[error(transparent)]
    IoMode(#[from] UnknownIoMode),
    /// A file size limit so small that every message would get a file of its own.
    #[error("max_file_size of {0} bytes is too small to split at: use 0 for no splitting, or at least 1MiB")]
    FileSizeTooSmall(u64),
    /// A file duration limit so short that every message would get a file of its own.
    #[error(
        "max_duration of {0:?} is too short to split at: use 0s for no splitting, or at least 1s"
    )]
    DurationTooShort(Duration),
    /// The attachments hold more than a session may put into each file.
    #[error("the attachments hold {0} bytes together, more than the {MAX_ATTACHMENT_BYTES} a session may attach")]
    AttachmentsTooLarge(usize),
    /// An attachment has no name, or a metadata entry no key.
    #[error("{0} without a name")]
    Unnamed(&'static str),
    /// A pre-trigger duration of nothing.
    #[error("a pre-trigger buffer must keep more than 0s")]
    NoPreTrigger,
    /// A buffer size without a pre-trigger buffer.
    #[error("a buffer size needs a pre-trigger buffer (rec start --pre-trigger DURATION)")]
    BufferWithoutPreTrigger,
    /// A pre-trigger buffer too small for camera frames.
    #[error("a pre-trigger buffer of {0} bytes is too small: use at least 1MiB")]
    BufferTooSmall(u64),
    /// A rate limit or downsampling rule that does not parse.
    #[error(transparent)]
    Throttle(#[from] recd_engine::ThrottleError),
}

/// The request's `--max-rate` and `--downsample` rules, in that order.
fn throttles(request: &StartRequest) -> Result<Vec<ThrottleRule>, RequestError> {
    let rates = request
        .max_rate
        .iter()
        .map(|text| ThrottleRule::max_rate(text));
    let downsampling = request
        .downsample
        .iter()
        .map(|text| ThrottleRule::downsample(text));
    Ok(rates.chain(downsampling).collect::<Result<_, _>>()?)
}

/// The pre-trigger buffer a request asks for, if any.
fn pre_trigger(request: &StartRequest) -> Result<Option<PreTrigger>, RequestError> {
    let Some(ms) = request.pre_trigger_ms else {
        return match request.buffer_size {
            Some(_) => Err(RequestError::BufferWithoutPreTrigger),
            None => Ok(None),
        };
    };
    if ms == 0 {
        return Err(RequestError::NoPreTrigger);
    }
    let buffer_bytes = request.buffer_size.unwrap_or(DEFAULT_BUFFER_BYTES);
    if buffer_bytes < MIN_BUFFER_BYTES {
        return Err(RequestError::BufferTooSmall(buffer_bytes));
    }
    Ok(Some(PreTrigger {
        duration: Duration::from_millis(ms),
        buffer_bytes,
    }))
}

/// A split limit as the session applies it: 0 is no limit (ros2 bag's convention);
/// other values below `min` are refused.
fn split_limit<T: PartialOrd + Default + Copy, E>(
    value: Option<T>,
    min: T,
    too_small: impl FnOnce(T) -> E,
) -> Result<Option<T>, E> {
    match value {
        Some(value) if value == T::default() => Ok(None),
        Some(value) if value < min => Err(too_small(value)),
        other => Ok(other),
    }
}

/// The request's attachments as the files take them, refused when nameless or larger
/// together than [`MAX_ATTACHMENT_BYTES`] (rec checks both before it asks).
fn attachments(files: &[AttachedFile]) -> Result<Vec<recd_storage::Attachment>, RequestError> {
    let total: usize = files.iter().map(|f| f.data.len()).sum();
    if total > MAX_ATTACHMENT_BYTES {
        return Err(RequestError::AttachmentsTooLarge(total));
    }
    files
        .iter()
        .map(|file| {
            if file.name.is_empty() {
                return Err(RequestError::Unnamed("an attachment"));
            }
            Ok(recd_storage::Attachment {
                name: file.name.clone(),
                media_type: file.media_type.clone(),
                create_time: file.create_time_ns,
                data: file.data.clone(),
            })
        })
        .collect()
}

impl SessionDefaults {
    /// The configuration a session records with: what `request` asks for, the rest from
    /// these defaults; files go to `output_dir` and are named `<file_prefix>_NNNN.mcap`.
    /// Fails on an I/O mode that does not exist and on split limits too small to make
    /// sense.
    pub fn recording_config(
        &self,
        request: &StartRequest,
        file_prefix: String,
        output_dir: PathBuf,
    ) -> Result<RecordingConfig, RequestError> {
        if request.metadata.keys().any(String::is_empty) {
            return Err(RequestError::Unnamed("a metadata entry"));
        }
        let parameters = request.parameters || self.parameters;
        let io_mode = match &request.io_mode {
            Some(name) => name.parse()?,
            None => self.io_mode,
        };
        Ok(RecordingConfig {
            topics: TopicSelection {
                include: request.topics.clone(),
                exclude: request.exclude.clone(),
                types: if request.topic_types.is_empty() {
                    self.topic_types.clone()
                } else {
                    request.topic_types.clone()
                },
                exclude_types: [&request.exclude_topic_types[..], &self.exclude_topic_types]
                    .concat(),
                services: NameSelection {
                    include: request.services.clone(),
                    all: request.all_services,
                    exclude: request.exclude_services.clone(),
                },
                actions: NameSelection {
                    include: request.actions.clone(),
                    all: request.all_actions,
                    exclude: request.exclude_actions.clone(),
                },
                parameter_events: parameters,
            },
            output_dir,
            file_prefix,
            split: SplitPolicy {
                max_bytes: split_limit(
                    request
                        .max_file_size
                        .or(self.max_file_size.map(|s| s.as_u64())),
                    MIN_SPLIT_BYTES,
                    RequestError::FileSizeTooSmall,
                )?,
                max_duration: split_limit(
                    request
                        .max_duration_ms
                        .map(Duration::from_millis)
                        .or(self.max_duration),
                    MIN_SPLIT_DURATION,
                    RequestError::DurationTooShort,
                )?,
            },
            crc: request.crc || self.crc,
            io_mode,
            zero_copy_threshold: self.zero_copy_threshold.as_u64() as usize,
            ring: RingConfig {
                items: self.ring_items,
                copy_bytes: self.ring_copy_bytes.as_u64() as usize,
                loaned_bytes: self.ring_loaned_bytes.as_u64() as usize,
            },
            spill_bytes: self.spill_bytes.as_u64() as usize,
            // "0s" in recd.toml turns the periodic sync off.
            sync_period: self.sync_period.filter(|period| !period.is_zero()),
            discovery_interval: self.discovery_interval,
            min_poll_interval: self.min_poll_interval,
            max_poll_interval: self.max_poll_interval,
            receive_priority: self.receive_priority,
            iceoryx2_prefix: self.iceoryx2_prefix.clone(),
            iceoryx2: self.iceoryx2 && !request.no_iceoryx2,
            user_metadata: request.metadata.clone(),
            start_paused: request.paused,
            pre_trigger: pre_trigger(request)?,
            throttles: throttles(request)?,
            attachments: attachments(&request.attachments)?,
            dds: request
                .dds_domain
                .or(self.dds_domain)
                .map(|domain| DdsConfig {
                    domain,
                    interfaces: self.dds_interfaces.clone(),
                    message_dirs: self.dds_message_dirs.clone(),
                    reader_memory: self.dds_reader_memory.as_u64(),
                    receive_buffer_bytes: self.dds_receive_buffer.as_u64() as usize,
                    fetch_types: self.dds_fetch_types,
                    parameters,
                    // The daemon's state directory, set where the session starts.
                    type_cache: None,
                }),
            zenoh: request.zenoh_domain.or(self.zenoh.domain).map(|domain| {
                let mut zenoh = self.zenoh.source(domain, &self.dds_message_dirs);
                zenoh.fetch_types = self.dds_fetch_types;
                zenoh
            }),
            ..RecordingConfig::default()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytesize::ByteSize;
    use recd_engine::IoMode;

    #[test]
    fn the_request_overrides_the_defaults() {
        let defaults = SessionDefaults {
            max_file_size: Some(ByteSize::mib(1)),
            max_duration: Some(Duration::from_secs(60)),
            dds_domain: Some(3),
            ..SessionDefaults::default()
        };
        let plain = defaults
            .recording_config(
                &StartRequest::default(),
                "a_1".into(),
                PathBuf::from("/d/a"),
            )
            .unwrap();
        assert_eq!(plain.split.max_bytes, Some(1 << 20));
        assert_eq!(plain.split.max_duration, Some(Duration::from_secs(60)));
        assert_eq!(plain.dds.as_ref().map(|d| d.domain), Some(3));
        assert!(plain.iceoryx2);
        assert_eq!(plain.output_dir, PathBuf::from("/d/a"));
        assert_eq!(plain.file_prefix, "a_1");

        let request = StartRequest {
            topics: vec!["camera/*".into()],
            max_file_size: Some(4 << 20),
            max_duration_ms: Some(1500),
            crc: true,
            dds_domain: Some(7),
            no_iceoryx2: true,
            io_mode: Some("buffered".into()),
            ..StartRequest::default()
        };
        let asked = defaults
            .recording_config(&request, "a_1".into(), PathBuf::from("/d/a"))
            .unwrap();
        assert_eq!(asked.topics.include, ["camera/*"]);
        assert_eq!(asked.split.max_bytes, Some(4 << 20));
        assert_eq!(asked.split.max_duration, Some(Duration::from_millis(1500)));
        assert!(asked.crc);
        assert_eq!(asked.dds.as_ref().map(|d| d.domain), Some(7));
        assert!(!asked.iceoryx2);
        assert_eq!(plain.io_mode, IoMode::Auto);
        assert_eq!(asked.io_mode, IoMode::Buffered);

        let unknown = StartRequest {
            io_mode: Some("fast".into()),
            ..StartRequest::default()
        };
        let error = defaults
            .recording_config(&unknown, "a_1".into(), PathBuf::from("/d/a"))
            .unwrap_err();
        assert!(error.to_string().contains("\"fast\""), "{error}");
    }

    #[test]
    fn zero_is_no_splitting_and_tiny_limits_are_refused() {
        let defaults = SessionDefaults {
            max_file_size: Some(ByteSize::gib(1)),
            max_duration: Some(Duration::from_secs(60)),
            ..SessionDefaults::default()
        };
        let config = |max_file_size, max_duration_ms| {
            let request = StartRequest {
                max_file_size,
                max_duration_ms,
                ..StartRequest::default()
            };
            defaults.recording_config(&request, "a_1".into(), PathBuf::from("/d/a"))
        };
        let unsplit = config(Some(0), Some(0)).unwrap();
        assert_eq!(unsplit.split.max_bytes, None);
        assert_eq!(unsplit.split.max_duration, None);

        let error = config(Some(4096), None).unwrap_err();
        assert!(
            error.to_string().contains("4096 bytes is too small"),
            "{error}"
        );
        assert!(error.to_string().contains("0 for no splitting"), "{error}");
        let error = config(None, Some(500)).unwrap_err();
        assert!(error.to_string().contains("500ms is too short"), "{error}");

        let unsplit_by_default = SessionDefaults {
            max_file_size: Some(ByteSize::b(0)),
            max_duration: Some(Duration::ZERO),
            ..SessionDefaults::default()
        }
        .recording_config(
            &StartRequest::default(),
            "a_1".into(),
            PathBuf::from("/d/a"),
        )
        .unwrap();
        assert_eq!(unsplit_by_default.split.max_bytes, None);
        assert_eq!(unsplit_by_default.split.max_duration, None);
    }
}
