//! `[upload]`: where finished recordings go in object storage and how. Off when the
//! section is absent.

use std::path::PathBuf;
use std::time::Duration;

use bytesize::ByteSize;
use recd_upload::{CredentialSource, KeyTemplate, UploadSettings};
use serde::{Deserialize, Serialize};

use super::units;

/// The most parts of a file sent at once: boto3 sends 10; beyond a few dozen, more
/// connections only share the same link.
const MAX_PARALLEL_PARTS: usize = 32;

/// The `[upload]` table of recd.toml.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct UploadConfig {
    /// The S3 endpoint, e.g. "http://10.0.0.5:8333" for a self-hosted store; none is AWS
    /// for `region`.
    pub endpoint: Option<String>,
    /// The bucket's region.
    pub region: String,
    /// The bucket (required).
    pub bucket: String,
    /// Where in the bucket files go; `{vehicle}`, `{session}` and `{date}` (the
    /// session's start, UTC) are filled in, then the file's name is appended.
    pub prefix: String,
    /// An AWS shared credentials file (`[profile]` with `aws_access_key_id` and
    /// `aws_secret_access_key`), read again whenever it changes; none takes
    /// `AWS_ACCESS_KEY_ID` and `AWS_SECRET_ACCESS_KEY` from recd's environment.
    pub credentials_file: Option<PathBuf>,
    /// The section of `credentials_file` to use.
    pub profile: String,
    /// The vehicle's id: `{vehicle}` in keys and the objects' `foxglove_device_id`; the
    /// host's name by default.
    pub vehicle_id: Option<String>,
    /// The vehicle's name for Foxglove (`foxglove_device_name`); `vehicle_id` by default.
    pub vehicle_name: Option<String>,
    /// Bytes per second at most (e.g. "20MiB"); none is as fast as the network goes.
    #[serde(with = "units::option_size")]
    pub max_rate: Option<ByteSize>,
    /// Delete a file once its upload is verified.
    pub delete_after_upload: bool,
    /// Upload a zstd-reindexed copy of each file instead of the raw one (made by the
    /// uploader at low priority, removed once uploaded).
    pub after_reindex: bool,
    /// Retention never deletes a file not yet uploaded; when nothing else can go, the
    /// disk fills to `min_free_space` and recording pauses as on a full disk.
    pub keep_until_uploaded: bool,
    /// Size of the parts of a multipart upload (at least 5 MiB; grown for files that
    /// would need more than 10,000 parts).
    #[serde(with = "units::size")]
    pub part_size: ByteSize,
    /// Parts of a file sent at once (1 to 32): each is read ahead and held in memory
    /// until the bucket has it, so memory grows by a part's size for each.
    pub parallel_parts: usize,
    /// recd warns once a file has waited longer than this to be finished or to be
    /// uploaded (e.g. "10min"): uploads are falling behind the recording.
    #[serde(with = "units::duration")]
    pub max_delay: Duration,
}

/// `[upload] max_delay` by default, and the bound for finishing when nothing uploads.
pub const DEFAULT_MAX_DELAY: Duration = Duration::from_secs(600);

impl Default for UploadConfig {
    fn default() -> Self {
        Self {
            endpoint: None,
            region: "us-east-1".into(),
            bucket: String::new(),
            prefix: "{vehicle}/{date}/{session}".into(),
            credentials_file: None,
            profile: "default".into(),
            vehicle_id: None,
            vehicle_name: None,
            max_rate: None,
            delete_after_upload: false,
            after_reindex: false,
            keep_until_uploaded: false,
            part_size: ByteSize::mib(16),
            parallel_parts: 4,
            max_delay: DEFAULT_MAX_DELAY,
        }
    }
}

impl UploadConfig {
    /// Checks what TOML cannot: a bucket, the prefix's placeholders, the part size.
    pub fn validate(&self) -> Result<(), String> {
        if self.bucket.trim().is_empty() {
            return Err("[upload] needs a bucket".into());
        }
        KeyTemplate::new(&self.prefix).map_err(|e| format!("[upload] {e}"))?;
        if self.part_size < ByteSize::mib(5) {
            return Err(format!(
                "[upload] part_size {} is below S3's minimum of 5 MiB",
                self.part_size
            ));
        }
        if !(1..=MAX_PARALLEL_PARTS).contains(&self.parallel_parts) {
            return Err(format!(
                "[upload] parallel_parts {} is not between 1 and {MAX_PARALLEL_PARTS}",
                self.parallel_parts
            ));
        }
        if self.max_delay.is_zero() {
            return Err("[upload] max_delay must be more than 0".into());
        }
        if self.max_rate == Some(ByteSize::b(0)) {
            return Err("[upload] max_rate must be more than 0 (leave it out for no limit)".into());
        }
        Ok(())
    }

    /// Where the credentials come from.
    fn credentials(&self) -> CredentialSource {
        match &self.credentials_file {
            Some(path) => CredentialSource::File {
                path: path.clone(),
                profile: self.profile.clone(),
            },
            None => CredentialSource::Environment,
        }
    }

    /// Refuses a credentials file that others may read or its group write (recd checks
    /// it at start-up, before touching anything, as it refuses such an HTTP token file).
    pub fn check_credentials_file(&self) -> Result<(), String> {
        self.credentials()
            .check_exposure()
            .map_err(|error| error.to_string())
    }

    /// The uploader's settings; `hostname` is the default vehicle id.
    pub fn settings(&self, hostname: &str) -> Result<UploadSettings, String> {
        self.validate()?;
        let vehicle_id = self
            .vehicle_id
            .clone()
            .unwrap_or_else(|| hostname.to_string());
        Ok(UploadSettings {
            endpoint: self.endpoint.clone(),
            region: self.region.clone(),
            bucket: self.bucket.clone(),
            prefix: KeyTemplate::new(&self.prefix).map_err(|e| e.to_string())?,
            vehicle_name: self
                .vehicle_name
                .clone()
                .unwrap_or_else(|| vehicle_id.clone()),
            vehicle_id,
            credentials: self.credentials(),
            max_rate: self.max_rate.map(|rate| rate.as_u64()),
            after_reindex: self.after_reindex,
            part_size: self.part_size.as_u64(),
            parallel_parts: self.parallel_parts,
        })
    }
}
