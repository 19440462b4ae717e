//! [`SealKey`]: the key of one sealed file, kept in memory by the process that wrote it.

use age_core::format::{FileKey, FILE_KEY_BYTES};
use recd_locked::{LockError, Locked};

/// The file key of one sealed file. The recorder keeps it in memory while it still has
/// work on the file (finishing it, cutting an incident out of it), so that it can read
/// back what it wrote although the machine holds no identity; it is never written
/// anywhere. Its 16 bytes live in a page of their own, locked into memory (never
/// swapped, where `LimitMEMLOCK` allows) and left out of core dumps, and are wiped when
/// it is dropped ([`Locked`]).
pub struct SealKey(Locked<[u8; FILE_KEY_BYTES]>);

impl SealKey {
    /// A key of zeros in a new locked page, for the caller to fill in place (so that the
    /// key's bytes are never on the stack).
    pub(crate) fn zeroed() -> Result<Self, LockError> {
        Locked::new([0; FILE_KEY_BYTES]).map(Self)
    }

    /// The key's bytes, for deriving the header's MAC key and the payload key.
    pub(crate) fn bytes(&self) -> &[u8; FILE_KEY_BYTES] {
        &self.0
    }

    /// The key's bytes, to fill them in place.
    pub(crate) fn bytes_mut(&mut self) -> &mut [u8; FILE_KEY_BYTES] {
        &mut self.0
    }

    /// Whether its page is locked into memory.
    #[cfg(test)]
    pub(crate) fn is_locked(&self) -> bool {
        self.0.is_locked()
    }

    /// The key as the age crate takes it, for wrapping it to recipients: a copy on the
    /// heap, not locked, which age wipes when it is dropped; drop it as soon as it is used.
    pub(crate) fn to_age(&self) -> FileKey {
        FileKey::init_with_mut(|key: &mut [u8; FILE_KEY_BYTES]| key.copy_from_slice(self.bytes()))
    }
}

impl Clone for SealKey {
    /// A copy in a new locked page of its own.
    ///
    /// # Panics
    ///
    /// When no page can be allocated for it: out of memory, as any allocation that fails.
    fn clone(&self) -> Self {
        let mut copy = Self::zeroed().unwrap_or_else(|error| panic!("copying a SealKey: {error}"));
        copy.bytes_mut().copy_from_slice(self.bytes());
        copy
    }
}

impl std::fmt::Debug for SealKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SealKey(…)")
    }
}
