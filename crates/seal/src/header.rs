//! The age header: the version line, one stanza per wrapped copy of the file key, and the
//! MAC over all of it.

use age::Recipient as _;
use age_core::format::{FileKey, Stanza};
use age_core::secrecy::ExposeSecret;
use base64::prelude::{Engine, BASE64_STANDARD_NO_PAD};
use ring::hmac;

use crate::keys::header_mac_key;
use crate::recipients::Recipients;

/// The first line of every age v1 file, its newline included.
pub const VERSION_LINE: &[u8] = b"age-encryption.org/v1\n";
/// The columns of a stanza body line.
const BODY_COLUMNS: usize = 64;

/// Why the header could not be built.
#[derive(Debug, thiserror::Error)]
pub enum HeaderError {
    /// The age crate refused to wrap the file key to a recipient.
    #[error("wrapping the file key to recipient {recipient}: {source}")]
    Wrap {
        /// The recipient, as `age1…`.
        recipient: String,
        /// The age crate's error.
        #[source]
        source: Box<age::EncryptError>,
    },
}

/// The complete header of a file whose key is `file_key`, wrapped to every recipient,
/// ending with the MAC line.
pub(crate) fn build(file_key: &FileKey, recipients: &Recipients) -> Result<Vec<u8>, HeaderError> {
    let mut header = VERSION_LINE.to_vec();
    for recipient in recipients.iter() {
        let (stanzas, _labels) =
            recipient
                .wrap_file_key(file_key)
                .map_err(|source| HeaderError::Wrap {
                    recipient: recipient.to_string(),
                    source: Box::new(source),
                })?;
        for stanza in &stanzas {
            encode_stanza(&mut header, stanza);
        }
    }
    header.extend_from_slice(b"---");
    let mac = hmac::sign(&header_mac_key(file_key.expose_secret()), &header);
    header.push(b' ');
    header.extend_from_slice(BASE64_STANDARD_NO_PAD.encode(mac.as_ref()).as_bytes());
    header.push(b'\n');
    Ok(header)
}

/// Appends a stanza: `-> TAG ARGS…`, then its body in unpadded base64, in lines of 64
/// columns, the last one shorter (empty when the body fills whole lines).
fn encode_stanza(out: &mut Vec<u8>, stanza: &Stanza) {
    out.extend_from_slice(b"-> ");
    out.extend_from_slice(stanza.tag.as_bytes());
    for arg in &stanza.args {
        out.push(b' ');
        out.extend_from_slice(arg.as_bytes());
    }
    out.push(b'\n');
    let body = BASE64_STANDARD_NO_PAD.encode(&stanza.body);
    for line in body.as_bytes().chunks(BODY_COLUMNS) {
        out.extend_from_slice(line);
        out.push(b'\n');
    }
    // The last line must be shorter than 64 columns: an empty one when the body fills
    // whole lines (or is empty).
    if body.len().is_multiple_of(BODY_COLUMNS) {
        out.push(b'\n');
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stanza(body_len: usize) -> Stanza {
        Stanza {
            tag: "X25519".into(),
            args: vec!["arg".into()],
            body: vec![7; body_len],
        }
    }

    fn encoded(body_len: usize) -> String {
        let mut out = Vec::new();
        encode_stanza(&mut out, &stanza(body_len));
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn a_short_body_is_one_short_line() {
        let text = encoded(32);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "-> X25519 arg");
        assert_eq!(lines[1].len(), 43);
        assert_eq!(lines.len(), 2);
    }

    #[test]
    fn a_body_of_whole_lines_ends_with_an_empty_line() {
        // 48 bytes are exactly 64 base64 columns.
        let text = encoded(48);
        assert!(text.ends_with("\n\n"), "{text:?}");
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 3);
        assert_eq!(lines[1].len(), 64);
        assert_eq!(lines[2], "");
    }

    #[test]
    fn an_empty_body_is_one_empty_line() {
        assert_eq!(encoded(0), "-> X25519 arg\n\n");
    }

    #[test]
    fn a_long_body_wraps_at_64_columns() {
        let text = encoded(100);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[1].len(), 64);
        // 100 bytes are 134 base64 columns: 64 + 64 + 6.
        assert_eq!(lines[2].len(), 64);
        assert_eq!(lines[3].len(), 6);
        assert_eq!(lines.len(), 4);
    }
}
