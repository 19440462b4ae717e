//! What the uploader needs to know, from `[upload]` in recd.toml.

use crate::credentials::CredentialSource;
use crate::key::KeyTemplate;

/// Where and how finished files are uploaded.
#[derive(Debug, Clone)]
pub struct UploadSettings {
    /// The S3 endpoint (`http://127.0.0.1:8333`); none means AWS for `region`.
    pub endpoint: Option<String>,
    /// The bucket's region.
    pub region: String,
    /// The bucket.
    pub bucket: String,
    /// Where in the bucket a file goes: `{vehicle}`, `{session}`, `{date}` filled in.
    pub prefix: KeyTemplate,
    /// The vehicle's id: the `{vehicle}` of keys and `foxglove_device_id`.
    pub vehicle_id: String,
    /// The vehicle's name for Foxglove (`foxglove_device_name`).
    pub vehicle_name: String,
    /// Where the access key comes from.
    pub credentials: CredentialSource,
    /// Bytes per second at most; none is as fast as the network goes.
    pub max_rate: Option<u64>,
    /// Upload a zstd-reindexed copy rather than the raw file.
    pub after_reindex: bool,
    /// Size of the parts (the last is smaller); grown for files that would need more than
    /// S3's 10,000 parts.
    pub part_size: u64,
    /// Parts of a file in flight at once.
    pub parallel_parts: usize,
}

impl UploadSettings {
    /// `s3://bucket/prefix` at the endpoint, for status and log lines (no credentials).
    pub fn destination(&self) -> String {
        let at = self
            .endpoint
            .clone()
            .unwrap_or_else(|| format!("AWS {}", self.region));
        format!("s3://{}/{} at {at}", self.bucket, self.prefix.as_str())
    }
}
