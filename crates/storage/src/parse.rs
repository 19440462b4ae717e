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

/// The records laid end to end in `bytes` (a chunk's content, a summary section), as
/// opcode and body, each checked to lie within `bytes`; an error ends the sequence.
pub(crate) fn framed_records(
    mut bytes: &[u8],
) -> impl Iterator<Item = Result<(u8, &[u8]), String>> {
    std::iter::from_fn(move || {
        if bytes.is_empty() {
            return None;
        }
        let Some((prefix, after)) = bytes.split_first_chunk::<9>() else {
            let error = format!("ends {} bytes into a record's header", bytes.len());
            bytes = &[];
            return Some(Err(error));
        };
        let len = u64::from_le_bytes(prefix[1..].try_into().expect("8 bytes"));
        if len > after.len() as u64 {
            let error = format!("a record claims {len} bytes, but {} are left", after.len());
            bytes = &[];
            return Some(Err(error));
        }
        let (body, rest) = after.split_at(len as usize);
        bytes = rest;
        Some(Ok((prefix[0], body)))
    })
}

/// Whether `section` (a summary section, from its start to the Footer) is whole records
/// of the kinds a summary holds, each within the section: what `mcap`'s summary reader
/// may be given without tripping over a length or an Attachment.
pub(crate) fn is_summary_section(section: &[u8]) -> bool {
    framed_records(section).all(|record| {
        record.is_ok_and(|(opcode, _)| {
            matches!(
                opcode,
                op::SCHEMA
                    | op::CHANNEL
                    | op::CHUNK_INDEX
                    | op::ATTACHMENT_INDEX
                    | op::METADATA_INDEX
                    | op::STATISTICS
                    | op::SUMMARY_OFFSET
            ) || opcode >= 0x80
        })
    })
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

    #[test]
    fn a_summary_section_is_whole_summary_records() {
        let mut section = vec![op::STATISTICS];
        section.extend_from_slice(&2u64.to_le_bytes());
        section.extend_from_slice(&[0, 0]);
        assert!(is_summary_section(&section));
        assert!(!is_summary_section(&section[..10]), "a record cut short");
        let mut attachment = section.clone();
        attachment[0] = op::ATTACHMENT;
        assert!(!is_summary_section(&attachment), "not a summary record");
        section.push(op::CHANNEL);
        assert!(!is_summary_section(&section), "a header cut short");
    }
}
