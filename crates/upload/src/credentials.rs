//! Upload credentials: an AWS shared credentials file, read again whenever it changes (so
//! that fixing it needs no restart) and refused while others may read it (a
//! [`SecretFile`], as the HTTP token's), or the standard AWS environment variables. Their
//! values never reach an error message, the log or the catalog.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use object_store::aws::AwsCredential;
use object_store::CredentialProvider;
use recd_secret::{SecretFile, SecretFileError, Version};

/// What the credentials file holds, for messages.
const WHAT: &str = "upload credentials";

/// Where the access key comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CredentialSource {
    /// An AWS shared credentials file (`[profile]` sections of `aws_access_key_id`,
    /// `aws_secret_access_key`, optionally `aws_session_token`).
    File {
        /// The file.
        path: PathBuf,
        /// Its section.
        profile: String,
    },
    /// `AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY` and optionally `AWS_SESSION_TOKEN`.
    Environment,
}

/// Why no credentials could be had; names the file, profile or variable, never a value.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CredentialError {
    /// The file cannot be read, or others may read it.
    #[error(transparent)]
    File(#[from] SecretFileError),
    /// The file lacks the profile or one of its keys.
    #[error("the upload credentials file {path} has no {what} in profile [{profile}]")]
    Incomplete {
        /// The file.
        path: String,
        /// The profile.
        profile: String,
        /// What is missing.
        what: &'static str,
    },
    /// A variable is not set.
    #[error("no upload credentials: set credentials_file in [upload], or {variable} in recd's environment")]
    Unset {
        /// The variable.
        variable: &'static str,
    },
}

impl CredentialSource {
    /// Refuses a credentials file others may read or its group write, as recd does at
    /// start-up (a file not there yet passes: the uploader waits for it).
    pub fn check_exposure(&self) -> Result<(), CredentialError> {
        match self {
            Self::File { path, .. } => Ok(SecretFile::new(path, WHAT).check_exposure()?),
            Self::Environment => Ok(()),
        }
    }

    /// Reads the credentials now.
    pub fn load(&self) -> Result<AwsCredential, CredentialError> {
        match self {
            Self::File { path, profile } => {
                let (_, text) = SecretFile::new(path, WHAT).read()?;
                let incomplete = |what| CredentialError::Incomplete {
                    path: path.display().to_string(),
                    profile: profile.clone(),
                    what,
                };
                let section = profile_section(&text, profile).ok_or(incomplete("section"))?;
                let value = |key| section.iter().find(|(k, _)| *k == key).map(|(_, v)| v);
                Ok(AwsCredential {
                    key_id: value("aws_access_key_id")
                        .ok_or(incomplete("aws_access_key_id"))?
                        .to_string(),
                    secret_key: value("aws_secret_access_key")
                        .ok_or(incomplete("aws_secret_access_key"))?
                        .to_string(),
                    token: value("aws_session_token").map(|token| token.to_string()),
                })
            }
            Self::Environment => {
                let variable = |variable| {
                    std::env::var(variable)
                        .ok()
                        .filter(|value| !value.is_empty())
                        .ok_or(CredentialError::Unset { variable })
                };
                Ok(AwsCredential {
                    key_id: variable("AWS_ACCESS_KEY_ID")?,
                    secret_key: variable("AWS_SECRET_ACCESS_KEY")?,
                    token: variable("AWS_SESSION_TOKEN").ok(),
                })
            }
        }
    }

    /// When the credentials last changed (content, replacement or mode), for reading a
    /// file again only then.
    fn version(&self) -> Option<Version> {
        match self {
            Self::File { path, .. } => SecretFile::new(path, WHAT).version(),
            Self::Environment => None,
        }
    }
}

/// The `key = value` lines of `[profile]` in an INI-style credentials file.
fn profile_section<'a>(text: &'a str, profile: &str) -> Option<Vec<(&'a str, &'a str)>> {
    let mut in_profile = false;
    let mut found = false;
    let mut entries = Vec::new();
    for line in text.lines().map(str::trim) {
        if line.is_empty() || line.starts_with('#') || line.starts_with(';') {
            continue;
        }
        if let Some(name) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
            in_profile = name.trim() == profile;
            found |= in_profile;
            continue;
        }
        if in_profile {
            if let Some((key, value)) = line.split_once('=') {
                entries.push((key.trim(), value.trim()));
            }
        }
    }
    found.then_some(entries)
}

/// The provider object_store signs requests with: the source read again when it changed.
#[derive(Debug)]
pub(crate) struct Credentials {
    source: CredentialSource,
    cached: Mutex<Option<(Option<Version>, Arc<AwsCredential>)>>,
}

impl Credentials {
    pub(crate) fn new(source: CredentialSource) -> Self {
        Self {
            source,
            cached: Mutex::new(None),
        }
    }
}

/// The error object_store reports for credentials recd could not load; the uploader
/// recognizes it to say what to fix.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub(crate) struct NoCredentials(pub(crate) CredentialError);

#[async_trait::async_trait]
impl CredentialProvider for Credentials {
    type Credential = AwsCredential;

    async fn get_credential(&self) -> object_store::Result<Arc<AwsCredential>> {
        let version = self.source.version();
        let mut cached = self.cached.lock().expect("credentials lock");
        if let Some((seen, credential)) = &*cached {
            if *seen == version && version.is_some() {
                return Ok(credential.clone());
            }
        }
        let credential =
            Arc::new(
                self.source
                    .load()
                    .map_err(|error| object_store::Error::Unauthenticated {
                        path: String::new(),
                        source: Box::new(NoCredentials(error)),
                    })?,
            );
        *cached = Some((version, credential.clone()));
        Ok(credential)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    /// A credentials file of mode `mode` holding `text`, in `dir`.
    fn write(dir: &std::path::Path, text: &str, mode: u32) -> PathBuf {
        let path = dir.join("credentials");
        std::fs::write(&path, text).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
        path
    }

    #[test]
    fn a_profile_of_a_shared_credentials_file_is_read_and_gaps_are_named_without_values() {
        let dir = tempfile::tempdir().unwrap();
        let path = write(
            dir.path(),
            "# fleet\n[default]\naws_access_key_id = AKID1\naws_secret_access_key=s3cr3t\n\n[car]\naws_access_key_id = AKID2\n",
            0o600,
        );
        let source = |profile: &str| CredentialSource::File {
            path: path.clone(),
            profile: profile.into(),
        };
        let credential = source("default").load().unwrap();
        assert_eq!(credential.key_id, "AKID1");
        assert_eq!(credential.secret_key, "s3cr3t");
        assert_eq!(credential.token, None);
        let error = source("car").load().unwrap_err().to_string();
        assert!(
            error.contains("aws_secret_access_key") && error.contains("[car]"),
            "{error}"
        );
        assert!(!error.contains("AKID2"), "{error}");
        let error = source("truck").load().unwrap_err().to_string();
        assert!(error.contains("[truck]"), "{error}");
        let missing = CredentialSource::File {
            path: dir.path().join("none"),
            profile: "default".into(),
        };
        assert!(missing
            .load()
            .unwrap_err()
            .to_string()
            .contains("cannot read"));
    }

    #[test]
    fn a_credentials_file_others_may_read_is_refused_until_fixed() {
        let dir = tempfile::tempdir().unwrap();
        let path = write(
            dir.path(),
            "[default]\naws_access_key_id = AKID1\naws_secret_access_key = s3cr3t\n",
            0o644,
        );
        let source = CredentialSource::File {
            path: path.clone(),
            profile: "default".into(),
        };
        let error = source.check_exposure().unwrap_err();
        assert_eq!(source.load().unwrap_err(), error);
        let message = error.to_string();
        assert!(
            message.contains(&format!("upload credentials file {}", path.display()))
                && message.contains("0644")
                && message.contains(&format!("chmod 600 {}", path.display())),
            "{message}"
        );
        assert!(
            !message.contains("s3cr3t") && !message.contains("AKID1"),
            "{message}"
        );

        // The provider reads it again once the mode is fixed.
        let provider = Credentials::new(source.clone());
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        assert!(runtime.block_on(provider.get_credential()).is_err());
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o640)).unwrap();
        source.check_exposure().unwrap();
        let credential = runtime.block_on(provider.get_credential()).unwrap();
        assert_eq!(credential.key_id, "AKID1");

        // An environment source has no file to check.
        assert_eq!(CredentialSource::Environment.check_exposure(), Ok(()));
    }
}
