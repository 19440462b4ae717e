//! Large messages on their way to the file, held by the handoff until written.

/// A message whose bytes stay where they are until the writer wrote them.
pub(crate) trait LoanedBytes: Send + 'static {
    /// The user header's bytes.
    fn user_header(&self) -> &[u8];
    /// The payload's bytes.
    fn payload(&self) -> &[u8];
}

/// A large message of either source.
pub(crate) enum Held {
    /// A shared-memory sample: the publisher gets its memory back once it is written.
    Shm(crate::shm::ShmSample),
    /// A DDS sample's complete CDR bytes, received into the heap.
    Dds(Vec<u8>),
}

impl LoanedBytes for Held {
    fn user_header(&self) -> &[u8] {
        match self {
            Held::Shm(sample) => sample.user_header(),
            Held::Dds(_) => &[],
        }
    }

    fn payload(&self) -> &[u8] {
        match self {
            Held::Shm(sample) => sample.payload(),
            Held::Dds(bytes) => bytes,
        }
    }
}
