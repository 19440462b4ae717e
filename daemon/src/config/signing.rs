//! `[signing]`: the Ed25519 key each closed file's entry in its session's hash chain is
//! signed with (tamper evidence, `rec verify`).

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// The `[signing]` table of recd.toml.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SigningConfig {
    /// The ECU's Ed25519 private key in PKCS#8 PEM (`openssl genpkey -algorithm
    /// ed25519`), mode 0600 or stricter; none: files are not chained nor signed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub key_file: Option<PathBuf>,
}
