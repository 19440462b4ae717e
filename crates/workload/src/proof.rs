//! The first bytes of every load-generator payload: its sequence number and a checksum of
//! the rest, so that a reader can prove each recorded payload intact and in order.

/// Length of the proof at the start of each payload.
pub const PROOF_LEN: usize = 16;
const MAGIC: u32 = u32::from_le_bytes(*b"RECD");

/// What is wrong with a payload.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProofError {
    /// Shorter than the proof itself.
    #[error("payload of {0} bytes is shorter than its proof")]
    TooShort(usize),
    /// Not written by the load generator.
    #[error("payload does not start with the load generator's marker")]
    NoMarker,
    /// The checksum does not match the bytes.
    #[error("payload {sequence} fails its checksum")]
    Checksum {
        /// The payload's sequence number.
        sequence: u64,
    },
}

/// CRC-32 of a payload body (everything after the proof); computed once per pool entry.
pub fn body_checksum(body: &[u8]) -> u32 {
    crc32fast::hash(body)
}

/// Writes the proof of a payload whose body (`payload[PROOF_LEN..]`) has checksum
/// `body_crc`.
pub fn stamp(payload: &mut [u8], sequence: u64, body_crc: u32) {
    payload[0..8].copy_from_slice(&sequence.to_le_bytes());
    payload[8..12].copy_from_slice(&body_crc.to_le_bytes());
    payload[12..16].copy_from_slice(&MAGIC.to_le_bytes());
}

/// Checks a payload; returns its sequence number.
pub fn check(payload: &[u8]) -> Result<u64, ProofError> {
    if payload.len() < PROOF_LEN {
        return Err(ProofError::TooShort(payload.len()));
    }
    let word =
        |range: std::ops::Range<usize>| u32::from_le_bytes(payload[range].try_into().unwrap());
    if word(12..16) != MAGIC {
        return Err(ProofError::NoMarker);
    }
    let sequence = u64::from_le_bytes(payload[0..8].try_into().unwrap());
    if body_checksum(&payload[PROOF_LEN..]) != word(8..12) {
        return Err(ProofError::Checksum { sequence });
    }
    Ok(sequence)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stamped_payload_checks_and_flipped_byte_fails() {
        let mut payload = vec![7u8; 64];
        let crc = body_checksum(&payload[PROOF_LEN..]);
        stamp(&mut payload, 41, crc);
        assert_eq!(check(&payload), Ok(41));
        payload[40] ^= 1;
        assert_eq!(check(&payload), Err(ProofError::Checksum { sequence: 41 }));
        assert_eq!(check(&payload[..3]), Err(ProofError::TooShort(3)));
    }
}
