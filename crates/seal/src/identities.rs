//! The private keys that open sealed files: X25519 identities (`AGE-SECRET-KEY-1…`), given
//! as strings or in an identity file as `age-keygen` writes it.

use std::path::{Path, PathBuf};

use age::x25519::Identity;

/// The prefix of an age X25519 private key.
const IDENTITY_PREFIX: &str = "AGE-SECRET-KEY-1";
/// The prefix of an age plugin's identity, which recd cannot use.
const PLUGIN_PREFIX: &str = "AGE-PLUGIN-";
/// The first line of an identity file that is itself encrypted with age.
const AGE_FILE_PREFIXES: [&str; 2] = ["age-encryption.org/", "-----BEGIN AGE ENCRYPTED FILE-----"];

/// X25519 identities (age private keys) to open sealed files with; never empty.
pub struct Identities(Vec<Identity>);

/// Why a list of identities was refused. A secret key is never repeated in it.
#[derive(Debug, thiserror::Error)]
pub enum IdentitiesError {
    /// No identity was given.
    #[error("no identities: give at least one age private key (AGE-SECRET-KEY-1…)")]
    Empty,
    /// An entry is not an X25519 identity.
    #[error("identity {index} is not an age X25519 private key: {reason}")]
    Invalid {
        /// The entry's place in the list, from 1.
        index: usize,
        /// What is wrong with it.
        reason: String,
    },
}

/// Why an identity file was refused. A secret key is never repeated in it.
#[derive(Debug, thiserror::Error)]
pub enum IdentitiesFileError {
    /// The file could not be read.
    #[error("reading the identity file {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// The error reading it.
        #[source]
        source: std::io::Error,
    },
    /// The file is itself an age file (a passphrase-protected identity).
    #[error(
        "the identity file {path} is itself encrypted with age: decrypt it first \
         (age -d {path} > KEY, on a machine you trust)"
    )]
    Encrypted {
        /// The file.
        path: PathBuf,
    },
    /// The file holds no identity.
    #[error("the identity file {path} holds no identity (AGE-SECRET-KEY-1…, one a line)")]
    Empty {
        /// The file.
        path: PathBuf,
    },
    /// A line of the file is not an X25519 identity.
    #[error("{path}:{line} is not an age X25519 private key: {reason}")]
    Invalid {
        /// The file.
        path: PathBuf,
        /// The line, from 1.
        line: usize,
        /// What is wrong with it.
        reason: String,
    },
}

/// Parses one entry, trimmed; the error says what it is instead, without repeating it.
fn parse_entry(entry: &str) -> Result<Identity, String> {
    let upper = entry.to_ascii_uppercase();
    if upper.starts_with(PLUGIN_PREFIX) {
        return Err("it is an age plugin's identity (AGE-PLUGIN-…), which recd cannot use".into());
    }
    if entry.starts_with("age1") {
        return Err("it is a public key (age1…): give the private key that matches it".into());
    }
    if !upper.starts_with(IDENTITY_PREFIX) {
        return Err(format!(
            "it does not start with {IDENTITY_PREFIX} ({} characters)",
            entry.chars().count()
        ));
    }
    entry
        .parse::<Identity>()
        .map_err(|reason| format!("the age crate says: {reason}"))
}

impl Identities {
    /// Parses X25519 identities (`AGE-SECRET-KEY-1…`), each trimmed of surrounding white
    /// space.
    pub fn parse(entries: &[String]) -> Result<Self, IdentitiesError> {
        let mut identities = Vec::with_capacity(entries.len());
        for (i, entry) in entries.iter().enumerate() {
            let identity =
                parse_entry(entry.trim()).map_err(|reason| IdentitiesError::Invalid {
                    index: i + 1,
                    reason,
                })?;
            identities.push(identity);
        }
        if identities.is_empty() {
            return Err(IdentitiesError::Empty);
        }
        Ok(Self(identities))
    }

    /// Reads an identity file: one identity a line, blank lines and `#` comments ignored,
    /// as `age-keygen` writes it.
    pub fn read_file(path: &Path) -> Result<Self, IdentitiesFileError> {
        let text = std::fs::read_to_string(path).map_err(|source| IdentitiesFileError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        Self::parse_file(&text, path)
    }

    /// Parses the text of an identity file; `path` names it in errors.
    pub fn parse_file(text: &str, path: &Path) -> Result<Self, IdentitiesFileError> {
        let first = text.lines().map(str::trim).find(|l| !l.is_empty());
        if first.is_some_and(|line| AGE_FILE_PREFIXES.iter().any(|p| line.starts_with(p))) {
            return Err(IdentitiesFileError::Encrypted {
                path: path.to_path_buf(),
            });
        }
        let mut identities = Vec::new();
        for (i, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let identity = parse_entry(line).map_err(|reason| IdentitiesFileError::Invalid {
                path: path.to_path_buf(),
                line: i + 1,
                reason,
            })?;
            identities.push(identity);
        }
        if identities.is_empty() {
            return Err(IdentitiesFileError::Empty {
                path: path.to_path_buf(),
            });
        }
        Ok(Self(identities))
    }

    /// Joins two lists (several `-i` files).
    pub fn extend(&mut self, other: Identities) {
        self.0.extend(other.0);
    }

    /// The identities, in the order given.
    pub(crate) fn iter(&self) -> impl Iterator<Item = &Identity> {
        self.0.iter()
    }

    /// The public keys (`age1…`) of the identities, in the order given.
    pub fn public_keys(&self) -> Vec<String> {
        self.0.iter().map(|i| i.to_public().to_string()).collect()
    }
}

impl std::fmt::Debug for Identities {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("Identities")
            .field(&self.public_keys())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use age::secrecy::ExposeSecret;

    fn secret() -> String {
        Identity::generate().to_string().expose_secret().to_owned()
    }

    #[test]
    fn a_keygen_file_with_comments_and_blank_lines_parses() {
        let key = secret();
        let text = format!("# created: 2026-01-01\n# public key: age1xyz\n\n{key}\n\n");
        let identities = Identities::parse_file(&text, Path::new("k.txt")).unwrap();
        assert_eq!(identities.0.len(), 1);
        assert!(identities.public_keys()[0].starts_with("age1"));
    }

    #[test]
    fn a_bad_line_is_named_without_repeating_it() {
        let key = secret();
        let broken = format!("{}x", &key[..key.len() - 1]);
        let text = format!("# comment\n{key}\n{broken}\n");
        let error = Identities::parse_file(&text, Path::new("k.txt")).unwrap_err();
        let message = error.to_string();
        assert!(message.starts_with("k.txt:3 is not"), "{message}");
        assert!(!message.contains(&broken[16..]), "{message}");
    }

    #[test]
    fn public_keys_plugins_empty_and_encrypted_files_are_refused() {
        let path = Path::new("k");
        let public = Identity::generate().to_public().to_string();
        let error = Identities::parse_file(&public, path)
            .unwrap_err()
            .to_string();
        assert!(error.contains("public key"), "{error}");
        let error = Identities::parse_file("AGE-PLUGIN-YUBIKEY-1XYZ", path).unwrap_err();
        assert!(error.to_string().contains("plugin"), "{error}");
        let error = Identities::parse_file("# only\n\n", path).unwrap_err();
        assert!(
            matches!(error, IdentitiesFileError::Empty { .. }),
            "{error}"
        );
        let error = Identities::parse_file("age-encryption.org/v1\n-> scrypt", path).unwrap_err();
        assert!(
            matches!(error, IdentitiesFileError::Encrypted { .. }),
            "{error}"
        );
    }

    #[test]
    fn parse_takes_trimmed_entries_and_refuses_none() {
        let identities = Identities::parse(&[format!("  {}\n", secret()), secret()]).unwrap();
        assert_eq!(identities.public_keys().len(), 2);
        assert!(matches!(
            Identities::parse(&[]),
            Err(IdentitiesError::Empty)
        ));
        let error = Identities::parse(&["nope".into()]).unwrap_err().to_string();
        assert!(error.starts_with("identity 1 is not"), "{error}");
    }
}
