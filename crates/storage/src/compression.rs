//! The compression a chunked file is written with: chosen by `rec reindex` and recd's
//! finishing, applied by the chunk encoder.

/// How chunks are compressed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Compression {
    /// Chunks stored as they are.
    #[default]
    None,
    /// Chunks compressed with zstd.
    Zstd,
    /// Chunks compressed with lz4 (faster, larger than zstd).
    Lz4,
}
