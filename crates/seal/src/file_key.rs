//! [`SealKey`]: the key of one sealed file, kept in memory by the process that wrote it.

use age_core::format::{FileKey, FILE_KEY_BYTES};
use age_core::secrecy::ExposeSecret;

/// The file key of one sealed file. The recorder keeps it in memory while it still has
/// work on the file (finishing it, cutting an incident out of it), so that it can read
/// back what it wrote although the machine holds no identity; it is never written
/// anywhere, and its memory is wiped when it is dropped.
pub struct SealKey(pub(crate) FileKey);

impl SealKey {
    /// The age file key, for the header's MAC and the payload key.
    pub(crate) fn file_key(&self) -> &FileKey {
        &self.0
    }
}

impl Clone for SealKey {
    fn clone(&self) -> Self {
        Self(FileKey::init_with_mut(|key: &mut [u8; FILE_KEY_BYTES]| {
            key.copy_from_slice(self.0.expose_secret())
        }))
    }
}

impl std::fmt::Debug for SealKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SealKey(…)")
    }
}
