//! Byte layout of the MCAP records the streaming writer emits.
//!
//! The Message record header is encoded by hand because it is on the hot path; every other
//! record is serialized with the `mcap` crate's record types, so their layout has a single
//! source of truth.

use std::io::{self, Cursor};

use binrw::BinWrite;
use mcap::records::op;

/// Bytes before a Message record's payload: opcode, record length, channel id, sequence,
/// log time, publish time.
pub(crate) const MESSAGE_PREFIX_LEN: usize = 1 + 8 + 2 + 4 + 8 + 8;

/// Bytes of a record's opcode and length.
pub(crate) const RECORD_PREFIX_LEN: usize = 1 + 8;

/// Encodes the header of a Message record whose payload is `payload_len` bytes long.
pub(crate) fn message_prefix(
    channel_id: u16,
    sequence: u32,
    log_time: u64,
    publish_time: u64,
    payload_len: u64,
) -> [u8; MESSAGE_PREFIX_LEN] {
    let record_len = (MESSAGE_PREFIX_LEN - RECORD_PREFIX_LEN) as u64 + payload_len;
    let mut prefix = [0u8; MESSAGE_PREFIX_LEN];
    prefix[0] = op::MESSAGE;
    prefix[1..9].copy_from_slice(&record_len.to_le_bytes());
    prefix[9..11].copy_from_slice(&channel_id.to_le_bytes());
    prefix[11..15].copy_from_slice(&sequence.to_le_bytes());
    prefix[15..23].copy_from_slice(&log_time.to_le_bytes());
    prefix[23..31].copy_from_slice(&publish_time.to_le_bytes());
    prefix
}

/// Appends a whole record (opcode, length, body) to `out`, the body serialized by binrw.
pub(crate) fn append_record<T>(out: &mut Vec<u8>, opcode: u8, body: &T) -> io::Result<()>
where
    T: for<'a> BinWrite<Args<'a> = ()>,
{
    let start = out.len();
    out.push(opcode);
    out.extend_from_slice(&[0; 8]);
    let mut cursor = Cursor::new(&mut *out);
    cursor.set_position((start + RECORD_PREFIX_LEN) as u64);
    body.write_le(&mut cursor).map_err(io::Error::other)?;
    patch_length(out, start);
    Ok(())
}

/// The start of a record whose body is `fields` followed by `trailing` more bytes the
/// caller writes itself (a Chunk record's data).
pub(crate) fn record_head<T>(opcode: u8, fields: &T, trailing: u64) -> io::Result<Vec<u8>>
where
    T: for<'a> BinWrite<Args<'a> = ()>,
{
    let mut head = Vec::with_capacity(64);
    append_record(&mut head, opcode, fields)?;
    let body_len = (head.len() - RECORD_PREFIX_LEN) as u64 + trailing;
    head[1..RECORD_PREFIX_LEN].copy_from_slice(&body_len.to_le_bytes());
    Ok(head)
}

/// Appends a Schema record; its data is a length-prefixed blob that binrw's header type
/// leaves out.
pub(crate) fn append_schema(
    out: &mut Vec<u8>,
    header: &mcap::records::SchemaHeader,
    data: &[u8],
) -> io::Result<()> {
    let start = out.len();
    append_record(out, op::SCHEMA, header)?;
    let data_len = u32::try_from(data.len())
        .map_err(|_| io::Error::other("schema data is larger than 4 GiB"))?;
    out.extend_from_slice(&data_len.to_le_bytes());
    out.extend_from_slice(data);
    patch_length(out, start);
    Ok(())
}

/// Appends an Attachment record: the header binrw writes, then the length-prefixed data
/// and a CRC-32 of everything before it in the record's body.
pub(crate) fn append_attachment(
    out: &mut Vec<u8>,
    header: &mcap::records::AttachmentHeader,
    data: &[u8],
) -> io::Result<()> {
    let start = out.len();
    append_record(out, op::ATTACHMENT, header)?;
    out.extend_from_slice(&(data.len() as u64).to_le_bytes());
    out.extend_from_slice(data);
    let crc = crc32fast::hash(&out[start + RECORD_PREFIX_LEN..]);
    out.extend_from_slice(&crc.to_le_bytes());
    patch_length(out, start);
    Ok(())
}

fn patch_length(out: &mut [u8], record_start: usize) {
    let body_len = (out.len() - record_start - RECORD_PREFIX_LEN) as u64;
    out[record_start + 1..record_start + RECORD_PREFIX_LEN]
        .copy_from_slice(&body_len.to_le_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn message_prefix_parses_back_with_the_mcap_crate() {
        let prefix = message_prefix(7, 42, 1_000, 999, 3);
        let mut record = prefix.to_vec();
        record.extend_from_slice(b"abc");
        let len = u64::from_le_bytes(record[1..9].try_into().unwrap());
        assert_eq!(len as usize, record.len() - RECORD_PREFIX_LEN);
        match mcap::parse_record(record[0], &record[RECORD_PREFIX_LEN..]).unwrap() {
            mcap::records::Record::Message { header, data } => {
                assert_eq!(header.channel_id, 7);
                assert_eq!(header.sequence, 42);
                assert_eq!(header.log_time, 1_000);
                assert_eq!(header.publish_time, 999);
                assert_eq!(&*data, b"abc");
            }
            other => panic!("parsed as {other:?}"),
        }
    }

    #[test]
    fn schema_record_parses_back_with_the_mcap_crate() {
        let mut out = Vec::new();
        let header = mcap::records::SchemaHeader {
            id: 3,
            name: "pkg/msg/T".into(),
            encoding: "ros2msg".into(),
        };
        append_schema(&mut out, &header, b"int32 x").unwrap();
        match mcap::parse_record(out[0], &out[RECORD_PREFIX_LEN..]).unwrap() {
            mcap::records::Record::Schema {
                header: parsed,
                data,
            } => {
                assert_eq!(parsed, header);
                assert_eq!(&*data, b"int32 x");
            }
            other => panic!("parsed as {other:?}"),
        }
    }
}
