//! How a file's bytes reach the disk: through the page cache, or around it with
//! `O_DIRECT`.

use std::fmt;
use std::str::FromStr;

/// Which I/O path a [`crate::StreamWriter`] writes with.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum IoMode {
    /// Direct I/O where the file system accepts `O_DIRECT`, buffered where it does not.
    Auto,
    /// `O_DIRECT`: large payloads go from the caller's memory to the disk with no copy
    /// into the page cache (see [`crate::direct`]); a file system that refuses it is an
    /// error.
    Direct,
    /// Through the page cache, handed to the disk in write-back windows.
    #[default]
    Buffered,
}

impl IoMode {
    /// Every mode, in the order `--help` lists them.
    pub const ALL: [IoMode; 3] = [IoMode::Auto, IoMode::Direct, IoMode::Buffered];

    /// The name used in configuration files, flags and metadata.
    pub fn name(self) -> &'static str {
        match self {
            IoMode::Auto => "auto",
            IoMode::Direct => "direct",
            IoMode::Buffered => "buffered",
        }
    }
}

impl fmt::Display for IoMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A name that is not an [`IoMode`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown I/O mode {0:?} (expected auto, direct or buffered)")]
pub struct UnknownIoMode(pub String);

impl FromStr for IoMode {
    type Err = UnknownIoMode;

    fn from_str(name: &str) -> Result<Self, Self::Err> {
        IoMode::ALL
            .into_iter()
            .find(|mode| mode.name() == name)
            .ok_or_else(|| UnknownIoMode(name.to_string()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_parse_back_and_others_are_refused() {
        for mode in IoMode::ALL {
            assert_eq!(mode.name().parse::<IoMode>(), Ok(mode));
        }
        let error = "odirect".parse::<IoMode>().unwrap_err();
        assert!(error.to_string().contains("\"odirect\""), "{error}");
    }
}
