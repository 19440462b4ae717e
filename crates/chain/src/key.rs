//! The keys: the ECU's Ed25519 private key as `openssl genpkey -algorithm ed25519` writes
//! it (PKCS#8 in PEM), readable by its owner only, and the public key as `openssl pkey
//! -pubout` writes it (SubjectPublicKeyInfo in PEM).

use std::io::Read;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

use base64::Engine;
use recd_locked::Locked;
use ring::signature::{Ed25519KeyPair, KeyPair, UnparsedPublicKey, ED25519};
use zeroize::Zeroizing;

/// Permission bits a private key file must not have: any for its group or others.
pub const KEY_EXPOSING_BITS: u32 = 0o077;

/// The DER of an Ed25519 SubjectPublicKeyInfo up to the key: SEQUENCE, the algorithm
/// (OID 1.3.101.112) and the BIT STRING's header; the raw 32-byte key follows.
const SPKI_PREFIX: [u8; 12] = [
    0x30, 0x2a, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x03, 0x21, 0x00,
];

/// Why a key cannot be used; names the file, never the key.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KeyError {
    /// It cannot be opened or read.
    #[error("cannot read the key file {path}: {reason}")]
    Unreadable {
        /// The file.
        path: String,
        /// Why.
        reason: String,
    },
    /// Its group or others may use the private key.
    #[error("the signing key file {path} has mode {mode:04o}: it must be 0600 or stricter (chmod 600 {path})")]
    Exposed {
        /// The file.
        path: String,
        /// Its permission bits.
        mode: u32,
    },
    /// It is not the PEM it should be, or the key inside is not Ed25519.
    #[error("{path} is not {expected}: {reason}")]
    Invalid {
        /// The file (or "the key" for text given directly).
        path: String,
        /// What it should hold.
        expected: &'static str,
        /// What is wrong.
        reason: String,
    },
    /// No locked page could be allocated to hold the key.
    #[error("cannot hold the signing key from {path} in locked memory: {reason}")]
    Memory {
        /// The file (or "the key" for text given directly).
        path: String,
        /// Why.
        reason: String,
    },
}

/// The private key entries are signed with. The key pair lives in a page of its own,
/// locked into memory (never swapped, where `LimitMEMLOCK` allows), left out of core
/// dumps and wiped when it is dropped ([`Locked`]); the file's text and DER are wiped as
/// soon as it is parsed. Not covered: the copy of the pair on the stack while ring builds
/// it, before it is moved into its page.
#[derive(Debug)]
pub struct SigningKey {
    pair: Locked<Ed25519KeyPair>,
}

impl SigningKey {
    /// Reads the key file at `path`: refused unless its mode is 0600 or stricter (checked
    /// on the open file), and unless it holds an Ed25519 private key in PKCS#8 PEM.
    pub fn load(path: &Path) -> Result<Self, KeyError> {
        let shown = path.display().to_string();
        let unreadable = |error: std::io::Error| KeyError::Unreadable {
            path: shown.clone(),
            reason: error.to_string(),
        };
        let mut file = std::fs::File::open(path).map_err(unreadable)?;
        let metadata = file.metadata().map_err(unreadable)?;
        let mode = metadata.mode() & 0o7777;
        if mode & KEY_EXPOSING_BITS != 0 {
            return Err(KeyError::Exposed { path: shown, mode });
        }
        // Sized up front, so that reading does not grow the buffer and leave the text
        // behind in a freed one.
        let capacity = usize::try_from(metadata.len()).unwrap_or(0) + 1;
        let mut text = Zeroizing::new(String::with_capacity(capacity));
        file.read_to_string(&mut text).map_err(unreadable)?;
        Self::from_pem(&text, &shown)
    }

    /// The key in `pem` (`-----BEGIN PRIVATE KEY-----`); `source` names it in errors.
    pub fn from_pem(pem: &str, source: &str) -> Result<Self, KeyError> {
        let invalid = invalid(
            source,
            "an Ed25519 private key in PKCS#8 PEM (openssl genpkey -algorithm ed25519)",
        );
        let der = pem_body(pem, "PRIVATE KEY").map_err(invalid)?;
        let pair = Ed25519KeyPair::from_pkcs8_maybe_unchecked(&der)
            .map_err(|e| invalid(format!("not an Ed25519 key ({e})")))?;
        let pair = Locked::new(pair).map_err(|e| KeyError::Memory {
            path: source.to_string(),
            reason: e.to_string(),
        })?;
        Ok(Self { pair })
    }

    /// Its public key.
    pub fn public_key(&self) -> PublicKey {
        let raw = self.pair.public_key().as_ref();
        PublicKey(raw.try_into().expect("an Ed25519 public key is 32 bytes"))
    }

    /// The Ed25519 signature of `message`.
    pub fn sign(&self, message: &[u8]) -> [u8; 64] {
        let signature = self.pair.sign(message);
        signature
            .as_ref()
            .try_into()
            .expect("an Ed25519 signature is 64 bytes")
    }
}

/// An Ed25519 public key: its raw 32 bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PublicKey(pub [u8; 32]);

impl PublicKey {
    /// Reads the PEM file at `path` (`openssl pkey -pubout`).
    pub fn load(path: &Path) -> Result<Self, KeyError> {
        let text = std::fs::read_to_string(path).map_err(|e| KeyError::Unreadable {
            path: path.display().to_string(),
            reason: e.to_string(),
        })?;
        Self::from_pem(&text, &path.display().to_string())
    }

    /// The key in `pem` (`-----BEGIN PUBLIC KEY-----`); `source` names it in errors.
    pub fn from_pem(pem: &str, source: &str) -> Result<Self, KeyError> {
        let invalid = invalid(
            source,
            "an Ed25519 public key in PEM (openssl pkey -pubout)",
        );
        let der = pem_body(pem, "PUBLIC KEY").map_err(invalid)?;
        match der.strip_prefix(&SPKI_PREFIX[..]) {
            Some(raw) if raw.len() == 32 => Ok(Self(raw.try_into().expect("32 bytes"))),
            _ => Err(invalid("not an Ed25519 SubjectPublicKeyInfo".into())),
        }
    }

    /// The key as `openssl pkey -pubout` writes it.
    pub fn to_pem(&self) -> String {
        let mut der = SPKI_PREFIX.to_vec();
        der.extend_from_slice(&self.0);
        let body = base64::engine::general_purpose::STANDARD.encode(der);
        format!("-----BEGIN PUBLIC KEY-----\n{body}\n-----END PUBLIC KEY-----\n")
    }

    /// A short name for the key: the first 8 bytes of its SHA-256, in hex.
    pub fn fingerprint(&self) -> String {
        crate::entry::hex(&crate::entry::sha256(&self.0)[..8])
    }

    /// Whether `signature` is this key's signature of `message`.
    pub fn verifies(&self, message: &[u8], signature: &[u8]) -> bool {
        UnparsedPublicKey::new(&ED25519, &self.0)
            .verify(message, signature)
            .is_ok()
    }
}

/// What makes the error of `source` not holding `expected`, for a reason.
fn invalid<'a>(source: &'a str, expected: &'static str) -> impl Fn(String) -> KeyError + Copy + 'a {
    move |reason| KeyError::Invalid {
        path: source.to_string(),
        expected,
        reason,
    }
}

/// The DER between `-----BEGIN {label}-----` and `-----END {label}-----`; it and the
/// base64 text it was decoded from are wiped when dropped (a private key's are secret).
fn pem_body(pem: &str, label: &str) -> Result<Zeroizing<Vec<u8>>, String> {
    let begin = format!("-----BEGIN {label}-----");
    let end = format!("-----END {label}-----");
    let start = pem.find(&begin).ok_or_else(|| format!("no {begin} line"))? + begin.len();
    let stop = pem[start..]
        .find(&end)
        .ok_or_else(|| format!("no {end} line"))?
        + start;
    // Sized up front, so that no freed buffer keeps part of it.
    let mut body = Zeroizing::new(String::with_capacity(stop - start));
    body.extend(pem[start..stop].chars().filter(|c| !c.is_whitespace()));
    base64::engine::general_purpose::STANDARD
        .decode(body.as_bytes())
        .map(Zeroizing::new)
        .map_err(|e| format!("bad base64 ({e})"))
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    /// A key as `openssl genpkey -algorithm ed25519` wrote it (PKCS#8 v1, no public key),
    /// and its public half as `openssl pkey -pubout` wrote it.
    pub(crate) const PRIVATE: &str = "-----BEGIN PRIVATE KEY-----\nMC4CAQAwBQYDK2VwBCIEIBwgS3EgHBvTn3U7JDuN616dp4dTWHEZ/dWsG4+kUMaO\n-----END PRIVATE KEY-----\n";
    pub(crate) const PUBLIC: &str = "-----BEGIN PUBLIC KEY-----\nMCowBQYDK2VwAyEAmJ30jCppnk9NZbAQO2wwL7V++vCZsX6pvcLK8DYrTNQ=\n-----END PUBLIC KEY-----\n";

    #[test]
    fn reads_the_keys_openssl_writes_and_they_match() {
        let key = SigningKey::from_pem(PRIVATE, "test").unwrap();
        assert!(
            key.pair.is_locked(),
            "the tests run as root: mlock must hold"
        );
        let public = PublicKey::from_pem(PUBLIC, "test").unwrap();
        assert_eq!(key.public_key(), public);
        assert_eq!(public.to_pem(), PUBLIC);
        let signature = key.sign(b"entry digest");
        assert!(public.verifies(b"entry digest", &signature));
        assert!(!public.verifies(b"another digest", &signature));
    }

    #[test]
    fn refuses_a_key_file_its_group_or_others_may_read_naming_its_mode() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("key.pem");
        std::fs::write(&path, PRIVATE).unwrap();
        for mode in [0o644, 0o640, 0o604, 0o610] {
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
            let error = SigningKey::load(&path).unwrap_err();
            assert_eq!(
                error,
                KeyError::Exposed {
                    path: path.display().to_string(),
                    mode
                }
            );
            let message = error.to_string();
            assert!(message.contains(&format!("mode {mode:04o}")), "{message}");
            assert!(message.contains("chmod 600"), "{message}");
        }
        for mode in [0o600, 0o400] {
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
            SigningKey::load(&path).unwrap();
        }
    }

    #[test]
    fn a_bad_key_is_a_clear_error() {
        for text in [
            "",
            "-----BEGIN PRIVATE KEY-----\n!!!\n-----END PRIVATE KEY-----\n",
            "-----BEGIN PRIVATE KEY-----\nMCowBQYDK2VwAyEAuPxr\n-----END PRIVATE KEY-----\n",
            PUBLIC,
        ] {
            let error = SigningKey::from_pem(text, "/etc/recd/key.pem").unwrap_err();
            let message = error.to_string();
            assert!(
                message.starts_with("/etc/recd/key.pem is not an Ed25519 private key"),
                "{message}"
            );
        }
        let error = PublicKey::from_pem(PRIVATE, "pub.pem").unwrap_err();
        assert!(error.to_string().contains("no -----BEGIN PUBLIC KEY-----"));
    }
}
