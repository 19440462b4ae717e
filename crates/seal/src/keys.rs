//! The keys an age file derives from its file key (HKDF-SHA256, as the age specification
//! says): the header's MAC key and the payload key.

use age_core::format::FileKey;
use age_core::secrecy::ExposeSecret;
use ring::{aead, hkdf, hmac};

/// The label of the header MAC key.
const HEADER_INFO: &[u8] = b"header";
/// The label of the payload key.
const PAYLOAD_INFO: &[u8] = b"payload";

/// HMAC-SHA256 key over the header: HKDF-SHA256(ikm = file key, salt = empty, info =
/// "header").
pub(crate) fn header_mac_key(file_key: &FileKey) -> hmac::Key {
    let prk = hkdf::Salt::new(hkdf::HKDF_SHA256, &[]).extract(file_key.expose_secret());
    let okm = prk
        .expand(&[HEADER_INFO], hmac::HMAC_SHA256)
        .expect("32 bytes is within HKDF-SHA256's output limit");
    hmac::Key::from(okm)
}

/// ChaCha20-Poly1305 payload key: HKDF-SHA256(ikm = file key, salt = the payload nonce,
/// info = "payload").
pub(crate) fn payload_key(file_key: &FileKey, nonce: &[u8]) -> aead::LessSafeKey {
    let prk = hkdf::Salt::new(hkdf::HKDF_SHA256, nonce).extract(file_key.expose_secret());
    let okm = prk
        .expand(&[PAYLOAD_INFO], &aead::CHACHA20_POLY1305)
        .expect("32 bytes is within HKDF-SHA256's output limit");
    aead::LessSafeKey::new(aead::UnboundKey::from(okm))
}
