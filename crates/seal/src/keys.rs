//! The keys an age file derives from its file key (HKDF-SHA256, as the age specification
//! says): the header's MAC key and the payload key.
//!
//! The payload key is held for as long as the file is written or read, so it lives in a
//! [`Locked`] page (out of swap and core dumps, wiped when dropped). ring builds it by
//! value: the HKDF state and the key schedule pass through this function's stack before
//! they are moved into the page, and those stack bytes are not wiped (ring gives no way
//! to build a key in place). The header's MAC key is used once, right where it is
//! derived, and dropped: it is not locked, and ring does not wipe it.

use age_core::format::FILE_KEY_BYTES;
use recd_locked::{LockError, Locked};
use ring::{aead, hkdf, hmac};

/// The label of the header MAC key.
const HEADER_INFO: &[u8] = b"header";
/// The label of the payload key.
const PAYLOAD_INFO: &[u8] = b"payload";

/// HMAC-SHA256 key over the header: HKDF-SHA256(ikm = file key, salt = empty, info =
/// "header"). Used once and dropped by the caller.
pub(crate) fn header_mac_key(file_key: &[u8; FILE_KEY_BYTES]) -> hmac::Key {
    let prk = hkdf::Salt::new(hkdf::HKDF_SHA256, &[]).extract(file_key);
    let okm = prk
        .expand(&[HEADER_INFO], hmac::HMAC_SHA256)
        .expect("32 bytes is within HKDF-SHA256's output limit");
    hmac::Key::from(okm)
}

/// ChaCha20-Poly1305 payload key: HKDF-SHA256(ikm = file key, salt = the payload nonce,
/// info = "payload"), in a locked page. `LessSafeKey` holds its key inline (no heap), so
/// the page holds all of it.
pub(crate) fn payload_key(
    file_key: &[u8; FILE_KEY_BYTES],
    nonce: &[u8],
) -> Result<Locked<aead::LessSafeKey>, LockError> {
    let prk = hkdf::Salt::new(hkdf::HKDF_SHA256, nonce).extract(file_key);
    let okm = prk
        .expand(&[PAYLOAD_INFO], &aead::CHACHA20_POLY1305)
        .expect("32 bytes is within HKDF-SHA256's output limit");
    Locked::new(aead::LessSafeKey::new(aead::UnboundKey::from(okm)))
}
