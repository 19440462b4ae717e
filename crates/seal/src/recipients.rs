//! The fleet's public keys a file is sealed to: X25519 recipients (`age1…`), given as
//! strings or in a recipients file.

use std::path::{Path, PathBuf};

use age::x25519::Recipient;

use crate::limits::MAX_STANZAS;

/// The prefix of an age X25519 private key, which must never be given as a recipient.
const IDENTITY_PREFIX: &str = "AGE-SECRET-KEY-";
/// The prefix of an age X25519 public key; an entry without it is never repeated in a
/// message, as it may be anything pasted there (a password, another kind of key).
const RECIPIENT_PREFIX: &str = "age1";
/// The permission bits a recipients file must not have: write for its group or others.
/// Whoever may write it chooses who can read every file sealed; reading it is harmless.
pub const WRITABLE_BITS: u32 = 0o022;

/// The X25519 public keys (`age1…`) every sealed file is encrypted to; never empty.
#[derive(Clone)]
pub struct Recipients(Vec<Recipient>);

/// Why a list of recipients was refused.
#[derive(Debug, thiserror::Error)]
pub enum RecipientsError {
    /// No recipient was given: nobody could read the files.
    #[error("no recipients: give at least one X25519 public key (age1…)")]
    Empty,
    /// An entry is a private key; it is not repeated here.
    #[error(
        "recipient {index} is an age private key (AGE-SECRET-KEY-…), not a public key: \
         give its public key (age1…, as `age-keygen -y` prints it) and keep the private key \
         off this machine"
    )]
    PrivateKey {
        /// The entry's place in the list, from 1.
        index: usize,
    },
    /// An entry is not an X25519 public key.
    #[error("recipient {index} ({entry}) is not an age X25519 public key (age1…): {reason}")]
    Invalid {
        /// The entry's place in the list, from 1.
        index: usize,
        /// The entry as given, quoted, where it starts with `age1`; otherwise a note that
        /// it is not shown.
        entry: Shown,
        /// What the age crate said.
        reason: String,
    },
    /// More recipients than a header recd reads may have stanzas.
    #[error(
        "{count} recipients, more than the {cap} recd seals a file to (it refuses to read \
         a header with more stanzas): give at most {cap} keys"
    )]
    TooMany {
        /// The recipients given (each key once, where lists were joined).
        count: usize,
        /// The cap, [`MAX_STANZAS`].
        cap: usize,
    },
}

/// Why a recipients file was refused.
#[derive(Debug, thiserror::Error)]
pub enum RecipientsFileError {
    /// The file could not be read.
    #[error("reading the recipients file {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// The error reading it.
        #[source]
        source: std::io::Error,
    },
    /// Its group or others may write it.
    #[error(
        "the recipients file {path} has mode {mode:04o}: whoever may write it chooses who can \
         read every file recd seals, so only its owner may (chmod go-w {path})"
    )]
    Writable {
        /// The file.
        path: PathBuf,
        /// Its permission bits.
        mode: u32,
    },
    /// The file holds no recipient.
    #[error("the recipients file {path} holds no recipient (age1…, one a line)")]
    Empty {
        /// The file.
        path: PathBuf,
    },
    /// A line of the file is a private key; it is not repeated here.
    #[error(
        "{path}:{line} is an age private key (AGE-SECRET-KEY-…), not a public key: give its \
         public key (age1…) and keep the private key off this machine"
    )]
    PrivateKey {
        /// The file.
        path: PathBuf,
        /// The line, from 1.
        line: usize,
    },
    /// A line of the file is not an X25519 public key.
    #[error("{path}:{line} ({entry}) is not an age X25519 public key (age1…): {reason}")]
    Invalid {
        /// The file.
        path: PathBuf,
        /// The line, from 1.
        line: usize,
        /// The line as written, trimmed, where it starts with `age1`.
        entry: Shown,
        /// What the age crate said.
        reason: String,
    },
    /// The file holds more recipients than a header recd reads may have stanzas.
    #[error(
        "the recipients file {path} holds {count} recipients, more than the {cap} recd \
         seals a file to (it refuses to read a header with more stanzas): keep at most \
         {cap} keys in it"
    )]
    TooMany {
        /// The file.
        path: PathBuf,
        /// The recipients it holds.
        count: usize,
        /// The cap, [`MAX_STANZAS`].
        cap: usize,
    },
}

/// An entry that is not a recipient as a message may show it: quoted where it starts
/// with `age1` (a mistyped public key), otherwise not at all.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shown(Option<String>);

impl Shown {
    fn of(entry: &str) -> Self {
        let looks_public = (entry.get(..RECIPIENT_PREFIX.len()))
            .is_some_and(|start| start.eq_ignore_ascii_case(RECIPIENT_PREFIX));
        Self(looks_public.then(|| entry.to_owned()))
    }
}

impl std::fmt::Display for Shown {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.0 {
            Some(entry) => write!(f, "{entry:?}"),
            None => f.write_str("not shown: it does not start with age1"),
        }
    }
}

/// One entry that is not a recipient.
enum EntryError {
    PrivateKey,
    Invalid(&'static str),
}

/// Parses one entry, trimmed of surrounding white space.
fn parse_entry(entry: &str) -> Result<Recipient, EntryError> {
    if entry.to_ascii_uppercase().starts_with(IDENTITY_PREFIX) {
        return Err(EntryError::PrivateKey);
    }
    entry.parse::<Recipient>().map_err(EntryError::Invalid)
}

impl Recipients {
    /// Parses X25519 public keys (`age1…`), each trimmed of surrounding white space.
    pub fn parse(entries: &[String]) -> Result<Self, RecipientsError> {
        let mut recipients = Vec::with_capacity(entries.len());
        for (i, entry) in entries.iter().enumerate() {
            let entry = entry.trim();
            let parsed = parse_entry(entry).map_err(|e| match e {
                EntryError::PrivateKey => RecipientsError::PrivateKey { index: i + 1 },
                EntryError::Invalid(reason) => RecipientsError::Invalid {
                    index: i + 1,
                    entry: Shown::of(entry),
                    reason: reason.to_owned(),
                },
            })?;
            recipients.push(parsed);
        }
        if recipients.is_empty() {
            return Err(RecipientsError::Empty);
        }
        if recipients.len() > MAX_STANZAS {
            return Err(RecipientsError::TooMany {
                count: recipients.len(),
                cap: MAX_STANZAS,
            });
        }
        Ok(Self(recipients))
    }

    /// Reads a recipients file: one `age1…` a line; blank lines and lines starting with
    /// `#` are ignored. Refused where its group or others may write it.
    pub fn read_file(path: &Path) -> Result<Self, RecipientsFileError> {
        use std::os::unix::fs::PermissionsExt;
        let read_error = |source| RecipientsFileError::Read {
            path: path.to_owned(),
            source,
        };
        // The mode of the file read, not of whatever the path names a moment before.
        let mut file = std::fs::File::open(path).map_err(read_error)?;
        let mode = file.metadata().map_err(read_error)?.permissions().mode() & 0o7777;
        if mode & WRITABLE_BITS != 0 {
            return Err(RecipientsFileError::Writable {
                path: path.to_owned(),
                mode,
            });
        }
        let mut text = String::new();
        std::io::Read::read_to_string(&mut file, &mut text).map_err(read_error)?;
        let mut recipients = Vec::new();
        for (i, line) in text.lines().enumerate() {
            let entry = line.trim();
            if entry.is_empty() || entry.starts_with('#') {
                continue;
            }
            let parsed = parse_entry(entry).map_err(|e| match e {
                EntryError::PrivateKey => RecipientsFileError::PrivateKey {
                    path: path.to_owned(),
                    line: i + 1,
                },
                EntryError::Invalid(reason) => RecipientsFileError::Invalid {
                    path: path.to_owned(),
                    line: i + 1,
                    entry: Shown::of(entry),
                    reason: reason.to_owned(),
                },
            })?;
            recipients.push(parsed);
        }
        if recipients.is_empty() {
            return Err(RecipientsFileError::Empty {
                path: path.to_owned(),
            });
        }
        if recipients.len() > MAX_STANZAS {
            return Err(RecipientsFileError::TooMany {
                path: path.to_owned(),
                count: recipients.len(),
                cap: MAX_STANZAS,
            });
        }
        Ok(Self(recipients))
    }

    /// These recipients followed by `other`'s (each key once); refused where they are
    /// more than [`MAX_STANZAS`] together.
    pub fn join(mut self, other: Recipients) -> Result<Self, RecipientsError> {
        for recipient in other.0 {
            let key = recipient.to_string();
            if !self.0.iter().any(|r| r.to_string() == key) {
                self.0.push(recipient);
            }
        }
        if self.0.len() > MAX_STANZAS {
            return Err(RecipientsError::TooMany {
                count: self.0.len(),
                cap: MAX_STANZAS,
            });
        }
        Ok(self)
    }

    /// The recipients, in the order given.
    pub fn iter(&self) -> impl Iterator<Item = &Recipient> {
        self.0.iter()
    }

    /// The recipients as `age1…` strings, in the order given.
    pub fn to_strings(&self) -> Vec<String> {
        self.0.iter().map(ToString::to_string).collect()
    }

    /// How many recipients there are (at least one).
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Always false: a `Recipients` holds at least one recipient.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl std::fmt::Debug for Recipients {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.to_strings()).finish()
    }
}

#[cfg(test)]
mod tests;
