//! Record bodies parsed with the `mcap` crate, after the checks it leaves to its caller.

use std::io::Cursor;

use binrw::BinReaderExt;
use mcap::records::{op, AttachmentHeader, Record};

/// The record of `opcode` in `body` (the bytes after its opcode and length), or why not.
pub(crate) fn parse_record(opcode: u8, body: &[u8]) -> Result<Record<'_>, mcap::McapError> {
    if opcode == op::ATTACHMENT && !attachment_holds_its_crc(body) {
        return Err(mcap::McapError::BadAttachmentLength {
            header: 0,
            available: body.len() as u64,
        });
    }
    mcap::parse_record(opcode, body)
}

/// Whether an Attachment body has room for its CRC after its header and data length:
/// `mcap::parse_record` slices up to four bytes before the end without looking.
fn attachment_holds_its_crc(body: &[u8]) -> bool {
    let mut cursor = Cursor::new(body);
    let header: Result<AttachmentHeader, _> = cursor.read_le();
    let data_len: Result<u64, _> = cursor.read_le();
    match (header, data_len) {
        (Ok(_), Ok(_)) => body.len() as u64 >= cursor.position() + 4,
        // mcap::parse_record reports a header it cannot read.
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_attachment_too_short_for_its_crc_is_an_error_not_a_panic() {
        // log_time, create_time, name "", media_type "", data length 0: no room for a CRC.
        let mut body = Vec::new();
        body.extend_from_slice(&[0; 16]);
        body.extend_from_slice(&[0; 8]);
        body.extend_from_slice(&0u64.to_le_bytes());
        assert!(parse_record(op::ATTACHMENT, &body).is_err());
        body.extend_from_slice(&0u32.to_le_bytes());
        assert!(matches!(
            parse_record(op::ATTACHMENT, &body),
            Ok(Record::Attachment { .. })
        ));
    }
}
