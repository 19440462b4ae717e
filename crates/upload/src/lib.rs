//! recd's uploader: finished recordings leave the vehicle for an S3-compatible bucket on
//! a task of their own, never in the recording's way.
//!
//! Files wait in the catalog's durable queue ([`recd_catalog::QueuedUpload`]); each is
//! sent as a multipart upload whose id and parts are journaled there, so that a restart
//! resumes at the next part; every part carries a CRC64-NVME the store checks, and a file
//! is `uploaded` only once the object's size and ETag match the parts the store
//! acknowledged, and the local file has not changed since it was queued.

#![warn(missing_docs)]

mod bucket;
mod credentials;
mod key;
mod pressure;
mod rate;
mod reading;
mod settings;
mod transfer;
mod uploader;
mod yielding;

pub use credentials::{CredentialError, CredentialSource};
pub use key::{object_key, KeyTemplate, KeyTemplateError};
pub use pressure::Pressure;
pub use rate::{Paced, RateLimit};
pub use settings::UploadSettings;
pub use uploader::{Uploaded, Uploader, UploaderHandle};
pub use yielding::{Holds, Turn, Yielding, HOLD_LOOK};
