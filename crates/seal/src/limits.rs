//! The limits of an age header recd reads, and so of the headers it writes.

/// The longest header read: far beyond any header of X25519 stanzas.
pub(crate) const MAX_HEADER: u64 = 1 << 20;

/// The most recipient stanzas a header may have; a header with more is refused (and a
/// recipients list longer than this is refused before recd seals a file to it).
///
/// A fleet seals to a handful of keys (its own, an escrow key, a key being rotated in), so
/// 64 is far above any real header. The cap bounds what a hostile header costs: each
/// stanza is one X25519 exchange per identity tried (a header of [`MAX_HEADER`] bytes
/// could hold over 10,000), and each is one more key an attacker tests against the
/// payload in a multi-key attack on ChaCha20-Poly1305. age itself sets no cap (it once
/// had 20); `age -r` given more than 64 recipients writes a file recd refuses.
pub const MAX_STANZAS: usize = 64;
