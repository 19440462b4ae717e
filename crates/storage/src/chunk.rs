//! A chunk's records, decoded with every length the file claims checked against what is
//! really there: the decompressed size against the claim (and never allocated from it),
//! each inner record's length against the bytes left in the chunk. A claim that does not
//! fit is damage, named in the error.

use std::borrow::Cow;
use std::io::Read;

use mcap::records::{op, Record};

/// The most bytes a chunk may claim to hold uncompressed. Writers cut chunks at a few MiB;
/// a chunk holding one very large message (a point cloud) stays far below.
pub(crate) const MAX_CHUNK_BYTES: u64 = 1 << 30;

/// The content of a chunk compressed with `compression` (`""`, `"zstd"` or `"lz4"`) that
/// claims `claimed` bytes uncompressed and a CRC-32 of `crc` (0: none).
pub(crate) fn decompress<'a>(
    compression: &str,
    data: &'a [u8],
    claimed: u64,
    crc: u32,
) -> Result<Cow<'a, [u8]>, String> {
    if claimed > MAX_CHUNK_BYTES {
        return Err(format!(
            "a chunk claims {claimed} bytes uncompressed, more than a chunk may hold ({MAX_CHUNK_BYTES})"
        ));
    }
    let content = match compression {
        "" if data.len() as u64 == claimed => Cow::Borrowed(data),
        "" => {
            return Err(format!(
                "an uncompressed chunk of {} bytes claims {claimed}",
                data.len()
            ))
        }
        "zstd" => Cow::Owned(read_at_most(
            zstd::stream::read::Decoder::with_buffer(data).map_err(|e| e.to_string())?,
            compression,
            claimed,
        )?),
        "lz4" => Cow::Owned(read_at_most(
            lz4::Decoder::new(data).map_err(|e| format!("corrupt lz4 chunk: {e}"))?,
            compression,
            claimed,
        )?),
        other => return Err(format!("a chunk compressed with unknown {other:?}")),
    };
    if crc != 0 && crc32fast::hash(&content) != crc {
        return Err("a chunk whose content does not match its CRC".into());
    }
    Ok(content)
}

/// What `decoder` produces, which must be `claimed` bytes: memory grows with what really
/// comes out, so a false claim costs nothing.
fn read_at_most(decoder: impl Read, compression: &str, claimed: u64) -> Result<Vec<u8>, String> {
    let mut content = Vec::new();
    decoder
        .take(claimed + 1)
        .read_to_end(&mut content)
        .map_err(|e| format!("corrupt {compression} chunk: {e}"))?;
    if content.len() as u64 > claimed {
        return Err(format!(
            "a {compression} chunk decompresses to more than the {claimed} bytes it claims"
        ));
    }
    if (content.len() as u64) < claimed {
        return Err(format!(
            "a {compression} chunk decompresses to {} bytes, not the {claimed} it claims",
            content.len()
        ));
    }
    Ok(content)
}

/// The Schema, Channel and Message records in a chunk's `content`, in order (private
/// records, opcode ≥ 0x80, are passed over).
pub(crate) fn records(content: &[u8]) -> Result<Vec<Record<'_>>, String> {
    let mut records = Vec::new();
    for framed in crate::parse::framed_records(content) {
        let (opcode, body) = framed.map_err(|e| format!("in a chunk, {e}"))?;
        match opcode {
            op::SCHEMA | op::CHANNEL | op::MESSAGE => records.push(
                crate::parse::parse_record(opcode, body)
                    .map_err(|e| format!("unreadable record in a chunk: {e}"))?,
            ),
            private if private >= 0x80 => {}
            other => return Err(format!("a record of opcode 0x{other:02x} inside a chunk")),
        }
    }
    Ok(records)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(opcode: u8, body: &[u8]) -> Vec<u8> {
        let mut bytes = vec![opcode];
        bytes.extend_from_slice(&(body.len() as u64).to_le_bytes());
        bytes.extend_from_slice(body);
        bytes
    }

    #[test]
    fn a_size_claim_beyond_the_data_is_damage_not_an_allocation() {
        let compressed = zstd::encode_all(&b"twelve bytes"[..], 3).unwrap();
        let claimed_huge = decompress("zstd", &compressed, 844_424_930_131_977, 0);
        assert!(claimed_huge
            .unwrap_err()
            .contains("more than a chunk may hold"));
        let claimed_more = decompress("zstd", &compressed, 1 << 20, 0);
        assert!(claimed_more
            .unwrap_err()
            .contains("decompresses to 12 bytes"));
        let claimed_less = decompress("zstd", &compressed, 5, 0);
        assert!(claimed_less.unwrap_err().contains("more than the 5 bytes"));
        assert_eq!(
            decompress("zstd", &compressed, 12, crc32fast::hash(b"twelve bytes")).unwrap(),
            &b"twelve bytes"[..]
        );
        assert!(decompress("zstd", &compressed, 12, 7)
            .unwrap_err()
            .contains("CRC"));
        assert!(decompress("", b"abc", 4, 0)
            .unwrap_err()
            .contains("claims 4"));
        assert!(decompress("brotli", b"abc", 3, 0)
            .unwrap_err()
            .contains("unknown"));
    }

    #[test]
    fn an_inner_record_longer_than_the_chunk_is_damage() {
        let mut content = record(0x80, b"private");
        content.extend_from_slice(&[op::MESSAGE]);
        content.extend_from_slice(&u64::MAX.to_le_bytes());
        let error = records(&content).unwrap_err();
        assert!(
            error.contains("claims 18446744073709551615 bytes"),
            "{error}"
        );
        assert!(records(&content[..content.len() - 3])
            .unwrap_err()
            .contains("into a record's header"));
        let nested = record(op::CHUNK, &[]);
        assert!(records(&nested).unwrap_err().contains("opcode 0x06"));
        assert!(records(&record(0x80, b"x")).unwrap().is_empty());
    }
}
