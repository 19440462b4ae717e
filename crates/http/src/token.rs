//! The bearer token: read from its file, read again whenever the file changes (so that
//! rotating it needs no restart), refused when others may read it (a [`SecretFile`]). Its
//! value never reaches an error message or the log.

use std::path::Path;
use std::sync::Mutex;

use recd_secret::{SecretFile, SecretFileError, Version};

/// Tokens shorter than this are refused as guessable.
pub const MIN_TOKEN_CHARS: usize = 16;

/// What the token file holds, for messages.
const WHAT: &str = "HTTP token";

/// Why the token file cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TokenError {
    /// It cannot be read, or others may read it.
    #[error(transparent)]
    File(#[from] SecretFileError),
    /// It holds fewer than [`MIN_TOKEN_CHARS`] characters.
    #[error("the HTTP token in {path} is shorter than {MIN_TOKEN_CHARS} characters")]
    TooShort {
        /// The file.
        path: String,
    },
}

/// A token file, read again when it changes.
#[derive(Debug)]
pub struct TokenFile {
    file: SecretFile,
    loaded: Mutex<(Option<Version>, Result<String, TokenError>)>,
}

impl TokenFile {
    /// Reads the token file; an unusable one is refused.
    pub fn open(path: &Path) -> Result<Self, TokenError> {
        let file = SecretFile::new(path, WHAT);
        let (version, token) = read(&file);
        token.as_ref().map_err(Clone::clone)?;
        Ok(Self {
            file,
            loaded: Mutex::new((version, token)),
        })
    }

    /// Whether `presented` is the token (compared in constant time); a file that became
    /// unusable accepts nothing, and says why in the log once.
    pub fn accepts(&self, presented: &str) -> bool {
        let mut loaded = self.loaded.lock().expect("token lock");
        let now = self.file.version();
        if now != loaded.0 {
            let (version, token) = read(&self.file);
            if let Err(error) = &token {
                tracing::warn!("HTTP requests needing the token are refused: {error}");
            }
            // An unusable file is read (and logged) again only once it changes.
            *loaded = (version.or(now), token);
        }
        match &loaded.1 {
            Ok(token) => same(token.as_bytes(), presented.as_bytes()),
            Err(_) => false,
        }
    }
}

fn read(file: &SecretFile) -> (Option<Version>, Result<String, TokenError>) {
    match file.read() {
        Ok((version, text)) => {
            let token = text.trim().to_string();
            if token.chars().count() < MIN_TOKEN_CHARS {
                let path = file.path().display().to_string();
                return (Some(version), Err(TokenError::TooShort { path }));
            }
            (Some(version), Ok(token))
        }
        Err(error) => (None, Err(error.into())),
    }
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
    use std::path::PathBuf;

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
        assert!(matches!(
            error,
            TokenError::File(SecretFileError::Exposed { mode: 0o644, .. })
        ));
        assert!(!error.to_string().contains("secret"), "{error}");
        let path = write(dir.path(), "short", 0o600);
        assert!(matches!(
            TokenFile::open(&path),
            Err(TokenError::TooShort { .. })
        ));
        assert!(matches!(
            TokenFile::open(&dir.path().join("absent")),
            Err(TokenError::File(SecretFileError::Unreadable { .. }))
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
