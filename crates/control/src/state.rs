//! Where a session and a file are in their lives (and on their way to object storage), as
//! recd reports them and the catalog stores them.

use serde::{Deserialize, Serialize};

/// Where a session is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum SessionState {
    /// Recording now (or when recd last ran).
    Recording,
    /// Stopped; its files were finalized.
    Stopped,
    /// Stopped after a write error.
    Failed,
    /// recd ended without stopping it (crash, kill, power loss).
    Interrupted,
}

/// Where a file is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum FileState {
    /// Being written.
    Recording,
    /// Finalized with its summary.
    Complete,
    /// Complete, then chunked and indexed in place in the background (`[recording]
    /// finish`), so that every viewer opens it.
    Indexed,
    /// Left open by a crash, or ended by a write error without its summary; `rec
    /// reindex` recovers what it holds.
    NeedsReindex,
    /// Deleted by recd to keep the recordings within `max_total_size`.
    Deleted,
    /// Gone from the disk, though recd did not delete it.
    Missing,
}

/// Where a file is on its way to object storage.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum UploadState {
    /// Waiting its turn.
    Queued,
    /// Parts of it are being sent (or were, before a restart: it resumes).
    Uploading,
    /// In the bucket, its size and checksum verified against the local file.
    Uploaded,
    /// Given up for a reason that retrying cannot fix (the local file changed or is gone,
    /// another object holds its key); `rec upload` queues it again.
    Failed,
}

impl UploadState {
    /// Every state, for parsing.
    const ALL: [Self; 4] = [Self::Queued, Self::Uploading, Self::Uploaded, Self::Failed];

    /// The state's name on the wire, in `rec upload --status` and in the catalog.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Queued => "queued",
            Self::Uploading => "uploading",
            Self::Uploaded => "uploaded",
            Self::Failed => "failed",
        }
    }
}

/// A state name that is not one of the known states.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown state {0:?}")]
pub struct UnknownState(pub String);

impl SessionState {
    /// Every state, for parsing.
    const ALL: [Self; 4] = [
        Self::Recording,
        Self::Stopped,
        Self::Failed,
        Self::Interrupted,
    ];

    /// The state's name on the wire, in `rec list` and in the catalog.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Recording => "recording",
            Self::Stopped => "stopped",
            Self::Failed => "failed",
            Self::Interrupted => "interrupted",
        }
    }
}

impl FileState {
    /// Whether the file was closed with its summary (and perhaps indexed since): one that
    /// is uploaded, and that `rec info` reads from its summary.
    pub const fn is_finished(self) -> bool {
        matches!(self, Self::Complete | Self::Indexed)
    }

    /// Every state, for parsing.
    const ALL: [Self; 6] = [
        Self::Recording,
        Self::Complete,
        Self::Indexed,
        Self::NeedsReindex,
        Self::Deleted,
        Self::Missing,
    ];

    /// The state's name on the wire, in `rec list` and in the catalog.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::Recording => "recording",
            Self::Complete => "complete",
            Self::Indexed => "indexed",
            Self::NeedsReindex => "needs-reindex",
            Self::Deleted => "deleted",
            Self::Missing => "missing",
        }
    }
}

/// What recd does to a session's files once they are closed (`[recording] finish`, `rec
/// start --finish`): reindex them in place in the background, so that viewers which need
/// an index (Foxglove) open them, or leave them as recorded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FinishMode {
    /// Leave files as recorded (unchunked; `rec reindex` indexes one by hand).
    None,
    /// Chunk and index, uncompressed: costs a read and a write of the file, no CPU.
    #[default]
    Index,
    /// Chunk, index and compress with zstd (about a quarter of the size of camera
    /// frames, at a core's worth of CPU per ~200 MB/s).
    Zstd,
    /// Chunk, index and compress with lz4 (larger than zstd, faster).
    Lz4,
}

impl FinishMode {
    /// Every mode, for parsing.
    const ALL: [Self; 4] = [Self::None, Self::Index, Self::Zstd, Self::Lz4];

    /// The mode's name in the configuration, on the wire and in the catalog.
    pub const fn as_str(self) -> &'static str {
        match self {
            Self::None => "none",
            Self::Index => "index",
            Self::Zstd => "zstd",
            Self::Lz4 => "lz4",
        }
    }
}

macro_rules! display_and_parse_by_name {
    ($state:ty) => {
        impl std::fmt::Display for $state {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl std::str::FromStr for $state {
            type Err = UnknownState;

            fn from_str(text: &str) -> Result<Self, UnknownState> {
                Self::ALL
                    .into_iter()
                    .find(|state| state.as_str() == text)
                    .ok_or_else(|| UnknownState(text.to_string()))
            }
        }
    };
}

display_and_parse_by_name!(SessionState);
display_and_parse_by_name!(FileState);
display_and_parse_by_name!(UploadState);
display_and_parse_by_name!(FinishMode);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_the_same_on_the_wire_in_text_and_when_parsed() {
        fn check<T>(states: &[T], names: &[&str])
        where
            T: Serialize + std::fmt::Display + std::str::FromStr + PartialEq + std::fmt::Debug,
            T::Err: std::fmt::Debug,
        {
            for (state, name) in states.iter().zip(names) {
                assert_eq!(serde_json::to_string(state).unwrap(), format!("\"{name}\""));
                assert_eq!(state.to_string(), *name);
                assert_eq!(name.parse::<T>().unwrap(), *state);
            }
        }
        check(
            &SessionState::ALL,
            &["recording", "stopped", "failed", "interrupted"],
        );
        check(
            &FileState::ALL,
            &[
                "recording",
                "complete",
                "indexed",
                "needs-reindex",
                "deleted",
                "missing",
            ],
        );
        check(
            &UploadState::ALL,
            &["queued", "uploading", "uploaded", "failed"],
        );
        check(&FinishMode::ALL, &["none", "index", "zstd", "lz4"]);
        assert!("paused".parse::<SessionState>().is_err());
        assert_eq!(
            serde_json::from_str::<FileState>("\"needs-reindex\"").unwrap(),
            FileState::NeedsReindex
        );
    }
}

/// What the uploads may carry now (the fleet's `uploads` request, kept in the catalog
/// across restarts, shown by `rec status`): the uploader takes only files the mode allows.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum UploadsMode {
    /// Everything `[upload]` queues (the default).
    #[default]
    All,
    /// Only incidents' files; the rest waits.
    Incidents,
    /// Nothing; everything waits.
    None,
}

impl UploadsMode {
    /// The mode's name on the wire.
    pub fn name(self) -> &'static str {
        match self {
            Self::All => "all",
            Self::Incidents => "incidents",
            Self::None => "none",
        }
    }

    /// The mode a name means.
    pub fn parse(name: &str) -> Result<Self, String> {
        [Self::All, Self::Incidents, Self::None]
            .into_iter()
            .find(|mode| mode.name() == name)
            .ok_or_else(|| format!("unknown uploads mode {name:?}: all, incidents or none"))
    }
}
