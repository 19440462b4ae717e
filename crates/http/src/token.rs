//! The bearer token: read from its file, read again whenever the file changes (so that
//! rotating it needs no restart), refused when others may read it. Its value never
//! reaches an error message or the log.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::SystemTime;

/// Tokens shorter than this are refused as guessable.
pub const MIN_TOKEN_CHARS: usize = 16;

/// Why the token file cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TokenError {
    /// It cannot be read.
    #[error("cannot read the HTTP token file {path}: {reason}")]
    Unreadable {
        /// The file.
        path: String,
        /// Why.
        reason: String,
    },
    /// Others than its owner and group may read it, or its group may write it.
    #[error("the HTTP token file {path} has mode {mode:04o}: others must not read it nor its group write it (chmod 600 {path})")]
    Exposed {
        /// The file.
        path: String,
        /// Its permission bits.
        mode: u32,
    },
    /// It holds fewer than [`MIN_TOKEN_CHARS`] characters.
    #[error("the HTTP token in {path} is shorter than {MIN_TOKEN_CHARS} characters")]
    TooShort {
        /// The file.
        path: String,
    },
}

/// The file's identity, age, size and the change time of its mode: a change of any
/// means it must be read again.
type Version = (u64, u64, Option<SystemTime>, u64, (i64, i64));

/// A token file, read again when it changes.
#[derive(Debug)]
pub struct TokenFile {
    path: PathBuf,
    loaded: Mutex<(Option<Version>, Result<String, TokenError>)>,
}

impl TokenFile {
    /// Reads the token file; an unusable one is refused.
    pub fn open(path: &Path) -> Result<Self, TokenError> {
        let (version, token) = read(path);
        token.as_ref().map_err(Clone::clone)?;
        Ok(Self {
            path: path.to_path_buf(),
            loaded: Mutex::new((version, token)),
        })
    }

    /// Whether `presented` is the token (compared in constant time); a file that became
    /// unusable accepts nothing, and says why in the log once.
    pub fn accepts(&self, presented: &str) -> bool {
        let mut loaded = self.loaded.lock().expect("token lock");
        let now = version(&self.path);
        if now != loaded.0 {
            let (version, token) = read(&self.path);
            if let Err(error) = &token {
                tracing::warn!("HTTP requests needing the token are refused: {error}");
            }
            *loaded = (version, token);
        }
        match &loaded.1 {
            Ok(token) => same(token.as_bytes(), presented.as_bytes()),
            Err(_) => false,
        }
    }
}

fn version(path: &Path) -> Option<Version> {
    let meta = std::fs::metadata(path).ok()?;
    Some((
        meta.dev(),
        meta.ino(),
        meta.modified().ok(),
        meta.len(),
        (meta.ctime(), meta.ctime_nsec()),
    ))
}

fn read(path: &Path) -> (Option<Version>, Result<String, TokenError>) {
    let shown = path.display().to_string();
    let version = version(path);
    let result = std::fs::metadata(path)
        .and_then(|meta| std::fs::read_to_string(path).map(|text| (meta.mode(), text)))
        .map_err(|error| TokenError::Unreadable {
            path: shown.clone(),
            reason: error.to_string(),
        })
        .and_then(|(mode, text)| {
            if mode & 0o027 != 0 {
                return Err(TokenError::Exposed {
                    path: shown.clone(),
                    mode: mode & 0o7777,
                });
            }
            let token = text.trim().to_string();
            if token.chars().count() < MIN_TOKEN_CHARS {
                return Err(TokenError::TooShort {
                    path: shown.clone(),
                });
            }
            Ok(token)
        });
    (version, result)
}

/// Compares in time that depends on the lengths only, not on where they differ.
fn same(expected: &[u8], presented: &[u8]) -> bool {
    let mut difference = expected.len() ^ presented.len();
    for (index, byte) in expected.iter().enumerate() {
        difference |= usize::from(byte ^ presented.get(index).copied().unwrap_or(!byte));
    }
    difference == 0
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn write(dir: &Path, text: &str, mode: u32) -> PathBuf {
        let path = dir.join("token");
        std::fs::write(&path, text).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
        path
    }

    #[test]
    fn accepts_the_token_only() {
        let dir = tempfile::tempdir().unwrap();
        let path = write(dir.path(), "0123456789abcdef-secret\n", 0o600);
        let token = TokenFile::open(&path).unwrap();
        assert!(token.accepts("0123456789abcdef-secret"));
        assert!(!token.accepts("0123456789abcdef-secreT"));
        assert!(!token.accepts("0123456789abcdef-secret-and-more"));
        assert!(!token.accepts(""));
    }

    #[test]
    fn refuses_a_file_others_may_read_and_a_short_token() {
        let dir = tempfile::tempdir().unwrap();
        let path = write(dir.path(), "0123456789abcdef-secret", 0o644);
        let error = TokenFile::open(&path).unwrap_err();
        assert!(matches!(error, TokenError::Exposed { mode: 0o644, .. }));
        assert!(!error.to_string().contains("secret"), "{error}");
        let path = write(dir.path(), "short", 0o600);
        assert!(matches!(
            TokenFile::open(&path),
            Err(TokenError::TooShort { .. })
        ));
        assert!(matches!(
            TokenFile::open(&dir.path().join("absent")),
            Err(TokenError::Unreadable { .. })
        ));
    }

    #[test]
    fn reads_a_rotated_token() {
        let dir = tempfile::tempdir().unwrap();
        let path = write(dir.path(), "first-token-0123456789", 0o600);
        let token = TokenFile::open(&path).unwrap();
        assert!(token.accepts("first-token-0123456789"));
        // A new file in its place, as `install -m 600` or an atomic rename leaves it.
        let next = dir.path().join("next");
        std::fs::write(&next, "second-token-0123456789").unwrap();
        std::fs::set_permissions(&next, std::fs::Permissions::from_mode(0o600)).unwrap();
        std::fs::rename(&next, &path).unwrap();
        assert!(token.accepts("second-token-0123456789"));
        assert!(!token.accepts("first-token-0123456789"));
        // Made readable by all: nothing is accepted until it is fixed.
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        std::fs::write(&path, "second-token-0123456789x").unwrap();
        assert!(!token.accepts("second-token-0123456789x"));
    }
}
