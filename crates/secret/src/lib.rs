//! Files that hold a secret: the HTTP bearer token and the upload credentials. A secret
//! file is read only while others may not read it and its group may not write it (mode &
//! 027 is 0, as `chmod 600` or `640` leaves it); otherwise it is refused with an error that
//! names the file and the `chmod` that fixes it. [`SecretFile::version`] tells when the
//! file changed (content, replacement or mode), so that its users read it again then and a
//! rotated secret needs no restart. The secret itself never reaches an error message.

#![warn(missing_docs)]

use std::fs::File;
use std::io::Read;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// The permission bits a secret file must not have: read or execute for others, write
/// for its group (or others).
pub const EXPOSING_BITS: u32 = 0o027;

/// Why a secret file cannot be used; names the file (and what it holds), never its
/// content.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SecretFileError {
    /// It cannot be opened or read.
    #[error("cannot read the {what} file {path}: {reason}")]
    Unreadable {
        /// What the file holds ("HTTP token", "upload credentials").
        what: &'static str,
        /// The file.
        path: String,
        /// Why.
        reason: String,
    },
    /// Others may read it, or its group may write it.
    #[error("the {what} file {path} has mode {mode:04o}: others must not read it nor its group write it (chmod 600 {path})")]
    Exposed {
        /// What the file holds.
        what: &'static str,
        /// The file.
        path: String,
        /// Its permission bits.
        mode: u32,
    },
}

/// When a file last changed as far as its readers care: its identity (a file renamed into
/// place is another), modification time, length and the change time of its inode (a
/// `chmod` changes only that).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Version {
    dev: u64,
    ino: u64,
    modified: Option<SystemTime>,
    len: u64,
    changed: (i64, i64),
}

impl Version {
    fn of(meta: &std::fs::Metadata) -> Self {
        Self {
            dev: meta.dev(),
            ino: meta.ino(),
            modified: meta.modified().ok(),
            len: meta.len(),
            changed: (meta.ctime(), meta.ctime_nsec()),
        }
    }
}

/// A file holding a secret, and what it holds (for messages).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SecretFile {
    path: PathBuf,
    what: &'static str,
}

impl SecretFile {
    /// The file at `path`, holding `what` ("HTTP token", "upload credentials").
    pub fn new(path: impl Into<PathBuf>, what: &'static str) -> Self {
        Self {
            path: path.into(),
            what,
        }
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The file's version now; `None` when it cannot be looked at.
    pub fn version(&self) -> Option<Version> {
        std::fs::metadata(&self.path)
            .ok()
            .map(|meta| Version::of(&meta))
    }

    /// Reads the file, refused when others may read it or its group write it. The mode
    /// is that of the file read (checked on the open file, not on the path again).
    pub fn read(&self) -> Result<(Version, String), SecretFileError> {
        let unreadable = |error: std::io::Error| SecretFileError::Unreadable {
            what: self.what,
            path: self.path.display().to_string(),
            reason: error.to_string(),
        };
        let mut file = File::open(&self.path).map_err(unreadable)?;
        let meta = file.metadata().map_err(unreadable)?;
        self.check_mode(meta.mode())?;
        let mut text = String::new();
        file.read_to_string(&mut text).map_err(unreadable)?;
        Ok((Version::of(&meta), text))
    }

    /// Checks the mode only: refused when others may read the file or its group write it;
    /// a file that is not there (yet) passes, for a reader that waits for it.
    pub fn check_exposure(&self) -> Result<(), SecretFileError> {
        match std::fs::metadata(&self.path) {
            Ok(meta) => self.check_mode(meta.mode()),
            Err(_) => Ok(()),
        }
    }

    fn check_mode(&self, mode: u32) -> Result<(), SecretFileError> {
        if mode & EXPOSING_BITS != 0 {
            return Err(SecretFileError::Exposed {
                what: self.what,
                path: self.path.display().to_string(),
                mode: mode & 0o7777,
            });
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn write(dir: &Path, text: &str, mode: u32) -> SecretFile {
        let path = dir.join("secret");
        std::fs::write(&path, text).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
        SecretFile::new(path, "test secret")
    }

    #[test]
    fn reads_a_file_only_its_owner_and_group_may_read() {
        let dir = tempfile::tempdir().unwrap();
        for mode in [0o600, 0o400, 0o640, 0o440, 0o700] {
            let file = write(dir.path(), "s3cr3t", mode);
            assert_eq!(file.read().unwrap().1, "s3cr3t", "{mode:o}");
            file.check_exposure().unwrap();
        }
    }

    #[test]
    fn refuses_a_file_others_may_read_or_its_group_write_naming_the_fix_not_the_secret() {
        let dir = tempfile::tempdir().unwrap();
        for mode in [0o644, 0o604, 0o660, 0o620, 0o601, 0o666] {
            let file = write(dir.path(), "s3cr3t", mode);
            let error = file.read().unwrap_err();
            assert_eq!(
                error,
                SecretFileError::Exposed {
                    what: "test secret",
                    path: file.path().display().to_string(),
                    mode,
                }
            );
            let message = error.to_string();
            assert!(
                message.contains(&format!("chmod 600 {}", file.path().display())),
                "{message}"
            );
            assert!(message.contains(&format!("{mode:04o}")), "{message}");
            assert!(!message.contains("s3cr3t"), "{message}");
            assert_eq!(file.check_exposure(), Err(error));
        }
    }

    #[test]
    fn a_missing_file_is_unreadable_but_not_exposed() {
        let dir = tempfile::tempdir().unwrap();
        let file = SecretFile::new(dir.path().join("absent"), "test secret");
        let error = file.read().unwrap_err().to_string();
        assert!(
            error.starts_with("cannot read the test secret file "),
            "{error}"
        );
        assert_eq!(file.check_exposure(), Ok(()));
        assert_eq!(file.version(), None);
    }

    #[test]
    fn a_chmod_or_a_replacement_is_a_new_version() {
        let dir = tempfile::tempdir().unwrap();
        let file = write(dir.path(), "first", 0o600);
        let (version, _) = file.read().unwrap();
        assert_eq!(file.version(), Some(version));
        std::thread::sleep(std::time::Duration::from_millis(20));
        std::fs::set_permissions(file.path(), std::fs::Permissions::from_mode(0o640)).unwrap();
        let chmodded = file.version().unwrap();
        assert_ne!(chmodded, version, "a chmod changes the version");
        let next = dir.path().join("next");
        std::fs::write(&next, "first").unwrap();
        std::fs::rename(&next, file.path()).unwrap();
        assert_ne!(
            file.version().unwrap(),
            chmodded,
            "a file renamed into place"
        );
    }
}
