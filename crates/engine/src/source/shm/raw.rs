//! The one shape every iceoryx2 service is opened with, whatever its payload type: bytes
//! with a custom user header (type details come from the service's static config), and
//! the byte view of such a sample.

use iceoryx2::port::subscriber::Subscriber;
use iceoryx2::sample::Sample;
use iceoryx2::service::marker::{CustomHeaderMarker, CustomPayloadMarker};
use iceoryx2::service::port_factory::publish_subscribe;

use super::Flavor;

/// A received sample, held zero-copy until the writer is done with it.
pub(super) type RawSample = Sample<Flavor, [CustomPayloadMarker], CustomHeaderMarker>;
/// A subscriber of any service.
pub(super) type RawSubscriber = Subscriber<Flavor, [CustomPayloadMarker], CustomHeaderMarker>;
/// An opened service of any payload type.
pub(super) type RawService =
    publish_subscribe::PortFactory<Flavor, [CustomPayloadMarker], CustomHeaderMarker>;

/// The user header and payload bytes of a sample whose user header is `header_len` long.
pub(super) fn split_sample(sample: &RawSample, header_len: usize) -> (&[u8], &[u8]) {
    let header = sample.user_header() as *const _ as *const u8;
    let payload = sample.payload();
    // SAFETY: the user header occupies `header_len` bytes (its size in the service's
    // static config) and the payload is sized in bytes (CustomPayloadMarker is one byte);
    // both live as long as the sample.
    unsafe {
        (
            std::slice::from_raw_parts(header, header_len),
            std::slice::from_raw_parts(payload.as_ptr().cast::<u8>(), payload.len()),
        )
    }
}
