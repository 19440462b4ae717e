//! The bucket, as object_store's S3 client sees it: requests signed with the credentials,
//! every part carrying a CRC64-NVME the store checks, and what went wrong sorted into what
//! the uploader can do about it.

use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

use object_store::aws::{AmazonS3, AmazonS3Builder, AwsCredential, Checksum};
use object_store::{
    BackoffConfig, ClientOptions, CredentialProvider, HeaderMap, HeaderValue, RetryConfig,
};

use crate::credentials::{Credentials, NoCredentials};
use crate::settings::UploadSettings;

/// The bucket files go to.
#[derive(Debug)]
pub(crate) struct Bucket {
    /// For everything but completing an upload.
    pub(crate) store: AmazonS3,
    /// For completing an upload without overwriting: every request carries
    /// `If-None-Match: *`. object_store's `MultipartStore::complete_multipart` always
    /// overwrites; S3 refuses a completion whose key exists when this header is set.
    pub(crate) create_only: AmazonS3,
    /// Set once the store answered a part without its CRC64-NVME, i.e. without showing
    /// that it checked one: from then on recd computes every part's MD5 itself.
    pub(crate) unconfirmed_checksums: AtomicBool,
}

/// What a failed request means to the uploader.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Trouble {
    /// The network or the server: try again after a while, for as long as it takes.
    Transient(String),
    /// The configuration (credentials, bucket): nothing goes until it is fixed; tried
    /// again now and then, since a credentials file may be fixed without a restart.
    Refused(String),
    /// The store no longer knows the multipart upload: start the file over.
    UploadGone,
    /// An object exists under the key (a conditional request failed).
    Exists,
}

impl Bucket {
    pub(crate) fn new(settings: &UploadSettings) -> Result<Self, object_store::Error> {
        let credentials: Arc<dyn CredentialProvider<Credential = AwsCredential>> =
            Arc::new(Credentials::new(settings.credentials.clone()));
        let mut if_none_match = HeaderMap::new();
        if_none_match.insert("if-none-match", HeaderValue::from_static("*"));
        Ok(Self {
            store: builder(settings, credentials.clone(), HeaderMap::new()).build()?,
            create_only: builder(settings, credentials, if_none_match).build()?,
            unconfirmed_checksums: AtomicBool::new(false),
        })
    }
}

fn builder(
    settings: &UploadSettings,
    credentials: Arc<dyn CredentialProvider<Credential = AwsCredential>>,
    headers: HeaderMap,
) -> AmazonS3Builder {
    // reqwest is built without a crypto provider of its own (no aws-lc beside ring): ring
    // is recd's, chosen for the process. Already chosen (by the fleet link) is as good.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let client = ClientOptions::new()
        .with_connect_timeout(Duration::from_secs(5))
        .with_timeout(Duration::from_secs(300))
        .with_default_headers(headers)
        .with_allow_http(
            settings
                .endpoint
                .as_deref()
                .is_some_and(|e| e.starts_with("http://")),
        );
    // object_store retries a request briefly; longer outages are the uploader's to ride
    // out, with its own backoff and status.
    let retry = RetryConfig {
        backoff: BackoffConfig {
            init_backoff: Duration::from_millis(100),
            max_backoff: Duration::from_secs(1),
            base: 2.0,
        },
        max_retries: 2,
        retry_timeout: Duration::from_secs(10),
    };
    let mut builder = AmazonS3Builder::new()
        .with_bucket_name(&settings.bucket)
        .with_region(&settings.region)
        .with_credentials(credentials)
        // The store verifies each part against its CRC64-NVME (SeaweedFS and S3 refuse a
        // part that does not match: BadDigest) and answers with it; a signed payload
        // would hash every byte again with SHA-256 (see transfer.rs for the ETags).
        .with_checksum_algorithm(Checksum::CRC64NVME)
        .with_unsigned_payload(true)
        .with_client_options(client)
        .with_retry(retry);
    if let Some(endpoint) = &settings.endpoint {
        // Self-hosted stores (SeaweedFS, MinIO, Garage, Ceph) take path-style requests.
        builder = builder
            .with_endpoint(endpoint)
            .with_virtual_hosted_style_request(false);
    }
    builder
}

/// What `error` means to the uploader; `bucket` names the bucket in messages.
pub(crate) fn classify(error: &object_store::Error, bucket: &str) -> Trouble {
    use object_store::Error;
    let text = error.to_string();
    match error {
        Error::Unauthenticated { source, .. } => match source.downcast_ref::<NoCredentials>() {
            Some(missing) => Trouble::Refused(missing.to_string()),
            None => Trouble::Refused(format!("the store refuses recd's credentials: {text}")),
        },
        Error::PermissionDenied { .. } => Trouble::Refused(format!(
            "the store refuses recd's credentials or access to bucket {bucket}: {text}"
        )),
        Error::NotFound { .. } if text.contains("NoSuchUpload") => Trouble::UploadGone,
        Error::NotFound { .. } if text.contains("NoSuchBucket") => {
            Trouble::Refused(format!("bucket {bucket} does not exist: {text}"))
        }
        Error::Precondition { .. } | Error::AlreadyExists { .. } => Trouble::Exists,
        _ if text.contains("SignatureDoesNotMatch") || text.contains("InvalidAccessKeyId") => {
            Trouble::Refused(format!("the store refuses recd's credentials: {text}"))
        }
        _ => Trouble::Transient(text),
    }
}
