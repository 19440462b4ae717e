//! Pass-through "deserialization": a sample stays the serialized CDR it came as.
//!
//! rustdds hands a deserializer adapter the payload after the 4-byte encapsulation
//! header, and the header's representation identifier. The adapter rebuilds the header
//! in front (the two option bytes are not passed on; they are zero for all but padded
//! XCDR2 data, where they only say how much padding ends the payload), so that the stored
//! message is the complete CDR a ROS 2 reader expects. Keyed topics get one instance for
//! all keys: the recorder cannot compute a key without knowing the type, and needs none.

use rustdds::{no_key, with_key, Keyed, RepresentationIdentifier};

/// One sample's complete serialized CDR (encapsulation header included).
#[derive(Debug, Clone)]
pub(crate) struct RawSample {
    pub cdr: Vec<u8>,
}

impl Keyed for RawSample {
    type K = ();
    fn key(&self) {}
}

/// The adapter that keeps samples serialized.
pub(crate) struct PassThrough;

/// Decoding bytes into a [`RawSample`] cannot fail.
#[derive(Debug, thiserror::Error)]
#[error("unreachable: pass-through decoding does not fail")]
pub(crate) struct Infallible;

/// Every representation identifier rustdds knows; a sample of any other is refused by
/// rustdds before it reaches the adapter.
static EVERY_REPRESENTATION: [RepresentationIdentifier; 17] = [
    RepresentationIdentifier::CDR_BE,
    RepresentationIdentifier::CDR_LE,
    RepresentationIdentifier::PL_CDR_BE,
    RepresentationIdentifier::PL_CDR_LE,
    RepresentationIdentifier::XML,
    RepresentationIdentifier::XCDR2_BE,
    RepresentationIdentifier::XCDR2_LE,
    RepresentationIdentifier::D_CDR2_BE,
    RepresentationIdentifier::D_CDR2_LE,
    RepresentationIdentifier::PL_XCDR2_BE,
    RepresentationIdentifier::PL_XCDR2_LE,
    RepresentationIdentifier::CDR2_BE,
    RepresentationIdentifier::CDR2_LE,
    RepresentationIdentifier::PL_CDR2_BE,
    RepresentationIdentifier::PL_CDR2_LE,
    RepresentationIdentifier::D_CDR_BE,
    RepresentationIdentifier::D_CDR_LE,
];

impl no_key::DeserializerAdapter<RawSample> for PassThrough {
    type Error = Infallible;
    type Decoded = RawSample;

    fn supported_encodings() -> &'static [RepresentationIdentifier] {
        &EVERY_REPRESENTATION
    }

    fn transform_decoded(decoded: RawSample) -> RawSample {
        decoded
    }
}

/// The decoder the adapter uses.
#[derive(Clone)]
pub(crate) struct CdrCopy;

impl<'de> no_key::Decode<'de, RawSample> for CdrCopy {
    type Error = Infallible;

    fn decode_bytes(
        self,
        payload: &'de [u8],
        encoding: RepresentationIdentifier,
    ) -> Result<RawSample, Infallible> {
        // The one copy of a DDS sample: out of rustdds' receive buffer.
        let mut cdr = Vec::with_capacity(4 + payload.len());
        cdr.extend_from_slice(&encoding.to_bytes());
        cdr.extend_from_slice(&[0, 0]);
        cdr.extend_from_slice(payload);
        Ok(RawSample { cdr })
    }
}

impl no_key::DefaultDecoder<RawSample> for PassThrough {
    type Decoder = CdrCopy;
    const DECODER: CdrCopy = CdrCopy;
}

impl with_key::DeserializerAdapter<RawSample> for PassThrough {
    type DecodedKey = ();

    fn transform_decoded_key(_key: ()) {}
}

impl<'de> with_key::Decode<'de, RawSample, ()> for CdrCopy {
    fn decode_key_bytes(
        self,
        _key: &'de [u8],
        _encoding: RepresentationIdentifier,
    ) -> Result<(), Infallible> {
        Ok(())
    }
}

impl with_key::DefaultDecoder<RawSample> for PassThrough {
    type Decoder = CdrCopy;
    const DECODER: CdrCopy = CdrCopy;
}

#[cfg(test)]
mod tests {
    use super::*;
    use rustdds::no_key::Decode;

    #[test]
    fn the_encapsulation_header_is_rebuilt_in_front() {
        let xcdr1 = CdrCopy
            .decode_bytes(&[5, 0, 0, 0], RepresentationIdentifier::CDR_LE)
            .unwrap();
        assert_eq!(xcdr1.cdr, [0, 1, 0, 0, 5, 0, 0, 0]);
        let xcdr2 = CdrCopy
            .decode_bytes(&[7], RepresentationIdentifier::XCDR2_LE)
            .unwrap();
        assert_eq!(xcdr2.cdr, [0, 7, 0, 0, 7]);
    }
}
