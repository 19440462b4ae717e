//! The ROS 2 message the DDS load generator publishes, `recd_load/msg/Blob`, and how to
//! find the proven payload inside its CDR bytes.
//!
//! ```text
//! uint32 sequence           # the message's number on its topic (low 32 bits)
//! uint64 publish_time_ns    # CLOCK_REALTIME at publish, ns since the Unix epoch
//! uint8[] data              # a load-generator payload (starts with its proof)
//! ```
//!
//! As a DDS sample (XCDR1, little endian, plain CDR as ROS 2 writes it) one message is:
//!
//! | offset | bytes | what |
//! |-------:|------:|------|
//! | 0  | 4 | encapsulation header `00 01 00 00` (CDR_LE, options 0) |
//! | 4  | 4 | `sequence` |
//! | 8  | 4 | padding (the `uint64` aligns to 8 from the end of the header) |
//! | 12 | 8 | `publish_time_ns` |
//! | 20 | 4 | length of `data` |
//! | 24 | n | `data` |
//!
//! So a message of `len` bytes (what the recorder writes as an MCAP message) carries
//! `len - 24` bytes of data; the load generator's sizes are whole-message sizes.

use std::path::Path;

/// The DDS type name (ROS 2 `pkg::msg::dds_::Type_` convention).
pub const DDS_TYPE_NAME: &str = "recd_load::msg::dds_::Blob_";
/// The ROS 2 type name.
pub const ROS_TYPE_NAME: &str = "recd_load/msg/Blob";
/// The message definition (`recd_load/msg/Blob.msg`).
pub const MESSAGE_DEFINITION: &str =
    "# A load-generator payload, as published by `recd-load dds`.\n\
uint32 sequence\n\
uint64 publish_time_ns\n\
uint8[] data\n";
/// The encapsulation header: CDR little endian (XCDR1), no options.
pub const ENCAPSULATION: [u8; 4] = [0x00, 0x01, 0x00, 0x00];
/// Bytes before `data`: encapsulation, sequence, padding, time stamp and length.
pub const HEADER_LEN: usize = 24;

/// What is wrong with a message that should be a `Blob`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BlobError {
    /// Shorter than the fixed part.
    #[error("CDR message of {0} bytes is shorter than a Blob's header")]
    TooShort(usize),
    /// Not CDR little endian.
    #[error("CDR encapsulation {0:02x?} is not CDR_LE")]
    Encapsulation([u8; 4]),
    /// The sequence length disagrees with the message's length.
    #[error("data length {declared} does not fit a message of {len} bytes")]
    Length {
        /// The length in the message.
        declared: u32,
        /// The message's length.
        len: usize,
    },
}

/// One decoded message; `data` borrows from the message bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Blob<'a> {
    /// The `sequence` field.
    pub sequence: u32,
    /// The `publish_time_ns` field.
    pub publish_time_ns: u64,
    /// The `data` field.
    pub data: &'a [u8],
}

/// A message of `message_len` bytes, all zero but for its encapsulation header and data
/// length; fill `data` with [`data_mut`] and the rest with [`stamp`].
pub fn empty_message(message_len: usize) -> Vec<u8> {
    let message_len = message_len.max(HEADER_LEN);
    let mut message = vec![0u8; message_len];
    message[..4].copy_from_slice(&ENCAPSULATION);
    let data_len = (message_len - HEADER_LEN) as u32;
    message[20..24].copy_from_slice(&data_len.to_le_bytes());
    message
}

/// The `data` of a message made by [`empty_message`].
pub fn data_mut(message: &mut [u8]) -> &mut [u8] {
    &mut message[HEADER_LEN..]
}

/// Writes the sequence number and time stamp of a message made by [`empty_message`].
pub fn stamp(message: &mut [u8], sequence: u64, publish_time_ns: u64) {
    message[4..8].copy_from_slice(&(sequence as u32).to_le_bytes());
    message[12..20].copy_from_slice(&publish_time_ns.to_le_bytes());
}

/// Reads a message (with its encapsulation header, as recorded).
pub fn parse(message: &[u8]) -> Result<Blob<'_>, BlobError> {
    if message.len() < HEADER_LEN {
        return Err(BlobError::TooShort(message.len()));
    }
    let header: [u8; 4] = message[..4].try_into().expect("4 bytes");
    if header[..2] != ENCAPSULATION[..2] {
        return Err(BlobError::Encapsulation(header));
    }
    let word = |at: usize| u32::from_le_bytes(message[at..at + 4].try_into().expect("4 bytes"));
    let declared = word(20);
    let data = &message[HEADER_LEN..];
    // CDR may pad the end of a message to a multiple of 4; the data itself must fit.
    if declared as usize > data.len() || data.len() - declared as usize >= 4 {
        return Err(BlobError::Length {
            declared,
            len: message.len(),
        });
    }
    Ok(Blob {
        sequence: word(4),
        publish_time_ns: u64::from_le_bytes(message[12..20].try_into().expect("8 bytes")),
        data: &data[..declared as usize],
    })
}

/// Writes the message definition as `<dir>/recd_load/msg/Blob.msg`, where a recorder
/// given `dir` as a message directory finds it.
pub fn write_message_definition(dir: &Path) -> std::io::Result<()> {
    let msg = dir.join("recd_load").join("msg");
    std::fs::create_dir_all(&msg)?;
    std::fs::write(msg.join("Blob.msg"), MESSAGE_DEFINITION)
}

/// The DDS topic of ROS 2 topic `name` (`rt/` and the name without its leading slash).
pub fn dds_topic(name: &str) -> String {
    format!("rt/{}", name.trim_start_matches('/'))
}

/// The name the recorder gives a DDS topic (`/x` for `rt/x`, other names kept).
pub fn recorded_topic(dds_topic: &str) -> String {
    recd_ros2::names::ros_topic_name(dds_topic).unwrap_or_else(|| dds_topic.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stamped_message_parses_back() {
        let mut message = empty_message(100);
        data_mut(&mut message).fill(7);
        stamp(&mut message, 5, 1_700_000_000_123_456_789);
        assert_eq!(&message[..4], &[0, 1, 0, 0]);
        let blob = parse(&message).unwrap();
        assert_eq!(blob.sequence, 5);
        assert_eq!(blob.publish_time_ns, 1_700_000_000_123_456_789);
        assert_eq!(blob.data, &[7u8; 76][..]);
        assert_eq!(parse(&message[..10]), Err(BlobError::TooShort(10)));
        assert!(matches!(
            parse(&message[..90]),
            Err(BlobError::Length { .. })
        ));
    }

    #[test]
    fn ros_and_dds_names() {
        assert_eq!(dds_topic("/a/b_0"), "rt/a/b_0");
        assert_eq!(recorded_topic("rt/a/b_0"), "/a/b_0");
        assert_eq!(recorded_topic("Square"), "Square");
    }
}
