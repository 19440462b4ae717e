//! Pass-through "deserialization": a sample stays the serialized CDR it came as.
//!
//! rustdds hands a deserializer adapter the payload after the 4-byte encapsulation
//! header, and the header's representation identifier. The adapter rebuilds the header
//! in front (the two option bytes are not passed on; they are zero for all but padded
//! XCDR2 data, where they only say how much padding ends the payload), so that the stored
//! message is the complete CDR a ROS 2 reader expects. Keyed topics get one instance for
//! all keys: the recorder cannot compute a key without knowing the type, and needs none.
//!
//! rustdds lends the payload only for the decoder's call, so its bytes are copied once,
//! straight to where the writer takes them from: [`IntoHandoff`] puts a small sample into
//! the handoff's byte ring, a large one into a buffer of its own that is lent to the
//! writer. Keyed topics are read through rustdds' `DataReader`, which only knows the
//! default decoder [`CdrCopy`] (always a buffer of its own).

use std::cell::RefCell;

use rustdds::{no_key, with_key, Keyed, RepresentationIdentifier};

use crate::handoff::Sender;
use crate::source::Held;

/// Where a sample's complete serialized CDR (encapsulation header included) went.
#[derive(Debug, Clone)]
pub(crate) enum RawSample {
    /// Into a buffer of its own.
    Heap(Vec<u8>),
    /// Into the handoff's byte ring, `len` bytes, ahead of its item.
    Staged { len: usize },
    /// Nowhere: the handoff was full.
    Dropped,
    /// Nowhere: the topic's rate limit or downsampling does not keep it.
    Filtered,
}

/// The encapsulation header rustdds took off, rebuilt.
fn encapsulation(encoding: RepresentationIdentifier) -> [u8; 4] {
    let id = encoding.to_bytes();
    [id[0], id[1], 0, 0]
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

/// The default decoder: every sample into a buffer of its own.
#[derive(Clone)]
pub(crate) struct CdrCopy;

impl<'de> no_key::Decode<'de, RawSample> for CdrCopy {
    type Error = Infallible;

    fn decode_bytes(
        self,
        payload: &'de [u8],
        encoding: RepresentationIdentifier,
    ) -> Result<RawSample, Infallible> {
        Ok(RawSample::Heap(heap_copy(payload, encoding)))
    }
}

fn heap_copy(payload: &[u8], encoding: RepresentationIdentifier) -> Vec<u8> {
    let mut cdr = Vec::with_capacity(4 + payload.len());
    cdr.extend_from_slice(&encapsulation(encoding));
    cdr.extend_from_slice(payload);
    cdr
}

/// The decoder of no-key readers: a sample not kept is not copied; one smaller than `zero_copy_threshold` is copied
/// straight into the handoff's byte ring (its item follows once the caller knows its
/// stamps), a larger one into a buffer of its own.
#[derive(Clone)]
pub(crate) struct IntoHandoff<'a, 'tx> {
    pub tx: &'a RefCell<&'tx mut Sender<Held>>,
    pub zero_copy_threshold: usize,
    /// False: the sample is filtered, and its bytes are not copied at all.
    pub keep: bool,
}

impl<'de> no_key::Decode<'de, RawSample> for IntoHandoff<'_, '_> {
    type Error = Infallible;

    fn decode_bytes(
        self,
        payload: &'de [u8],
        encoding: RepresentationIdentifier,
    ) -> Result<RawSample, Infallible> {
        if !self.keep {
            return Ok(RawSample::Filtered);
        }
        if 4 + payload.len() >= self.zero_copy_threshold {
            return Ok(RawSample::Heap(heap_copy(payload, encoding)));
        }
        let header = encapsulation(encoding);
        Ok(
            match self.tx.borrow_mut().stage_copied(&[&header, payload]) {
                Some(len) => RawSample::Staged { len },
                None => RawSample::Dropped,
            },
        )
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
        assert!(matches!(xcdr1, RawSample::Heap(cdr) if cdr == [0, 1, 0, 0, 5, 0, 0, 0]));
        let xcdr2 = CdrCopy
            .decode_bytes(&[7], RepresentationIdentifier::XCDR2_LE)
            .unwrap();
        assert!(matches!(xcdr2, RawSample::Heap(cdr) if cdr == [0, 7, 0, 0, 7]));
    }
}
