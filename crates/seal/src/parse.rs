//! Reads an age v1 header: the version line, the recipient stanzas (`-> TYPE ARGS…` and a
//! base64 body in 64-column lines, the last one shorter), and the MAC line (`--- MAC`).
//! Stanzas of any type are kept; only the identities decide which they can open.

use std::io::{self, BufRead, BufReader, Read, Seek, SeekFrom};

use age_core::format::Stanza;
use base64::prelude::{Engine, BASE64_STANDARD_NO_PAD};

use crate::header::VERSION_LINE;
use crate::limits::{MAX_HEADER, MAX_STANZAS};

/// The first line of every age v1 file, without its newline.
const VERSION: &[u8] = VERSION_LINE.split_last().expect("a line").1;
/// The start of the first line of any age file, whatever its version.
const FORMAT_PREFIX: &[u8] = b"age-encryption.org/";
/// The first line of an ASCII-armored age file.
const ARMOR: &[u8] = b"-----BEGIN AGE ENCRYPTED FILE-----";
/// The columns of a full stanza body line.
const BODY_COLUMNS: usize = 64;
/// Bytes of the header's HMAC-SHA256.
pub(crate) const MAC_SIZE: usize = 32;
/// The tag of age's passphrase stanza, which the age spec allows only alone.
const SCRYPT_TAG: &str = "scrypt";

/// Why a header could not be read.
#[derive(Debug, thiserror::Error)]
pub enum HeaderReadError {
    /// Reading the file failed.
    #[error("reading the age header: {0}")]
    Io(#[source] io::Error),
    /// The file does not start as an age file does.
    #[error("not an age file: it does not start with age-encryption.org/v1")]
    NotAge,
    /// The file is an age file of another version.
    #[error("an age file of a version other than v1 ({version}); recd reads v1 only")]
    UnknownVersion {
        /// The first line, as found.
        version: String,
    },
    /// The file is ASCII-armored.
    #[error(
        "an ASCII-armored age file (-----BEGIN AGE ENCRYPTED FILE-----); recd writes and \
         reads binary ones: `age -d` reads it"
    )]
    Armored,
    /// The file ends inside its header.
    #[error("the file ends inside its age header: it was cut short")]
    Truncated,
    /// A line of the header breaks the format.
    #[error("the age header is malformed at line {line}: {reason}")]
    Malformed {
        /// The line, from 1.
        line: usize,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// The header goes on past [`MAX_HEADER`] bytes.
    #[error("the age header goes on past {MAX_HEADER} bytes: the file is damaged")]
    TooLong,
    /// The header has more than [`MAX_STANZAS`] recipient stanzas.
    #[error(
        "the age header has {stanzas} recipient stanzas, more than the {cap} recd reads: \
         the file was sealed to too many keys (recd never writes such a header); `age -d` \
         reads it"
    )]
    TooManyStanzas {
        /// The stanzas in the header.
        stanzas: usize,
        /// The cap, [`MAX_STANZAS`].
        cap: usize,
    },
    /// The header has an `scrypt` (passphrase) stanza beside others.
    #[error(
        "the age header has an scrypt (passphrase) stanza among {stanzas} stanzas: the age \
         spec allows it only as the one stanza, so the header was not written by age or \
         recd, or was altered; no age implementation may open it"
    )]
    ScryptNotAlone {
        /// The stanzas in the header, the scrypt one included.
        stanzas: usize,
    },
}

/// A header as read, before any key has been tried on it.
pub(crate) struct ParsedHeader {
    /// The recipient stanzas, in order.
    pub(crate) stanzas: Vec<Stanza>,
    /// The header's bytes up to and including `---`: what its MAC covers.
    pub(crate) mac_input: Vec<u8>,
    /// The MAC of the header.
    pub(crate) mac: [u8; MAC_SIZE],
    /// Bytes of the header, up to and including the MAC line's newline.
    pub(crate) len: u64,
}

/// Reads lines of the header, counting them and the bytes read.
struct Lines<R> {
    reader: R,
    line: Vec<u8>,
    number: usize,
    read: u64,
}

impl<R: BufRead> Lines<R> {
    /// The next line, without its newline (which it must have).
    fn next(&mut self) -> Result<&[u8], HeaderReadError> {
        self.line.clear();
        let limit = MAX_HEADER.saturating_sub(self.read) + 1;
        let n = (&mut self.reader)
            .take(limit)
            .read_until(b'\n', &mut self.line)
            .map_err(HeaderReadError::Io)?;
        self.read += n as u64;
        self.number += 1;
        if self.read > MAX_HEADER {
            return Err(HeaderReadError::TooLong);
        }
        if self.line.last() != Some(&b'\n') {
            return Err(HeaderReadError::Truncated);
        }
        self.line.pop();
        Ok(&self.line)
    }

    fn malformed(&self, reason: &'static str) -> HeaderReadError {
        HeaderReadError::Malformed {
            line: self.number,
            reason,
        }
    }
}

/// Reads the header from the start of `inner`.
pub(crate) fn read<R: Read + Seek>(inner: &mut R) -> Result<ParsedHeader, HeaderReadError> {
    inner
        .seek(SeekFrom::Start(0))
        .map_err(HeaderReadError::Io)?;
    let mut lines = Lines {
        reader: BufReader::with_capacity(4096, inner),
        line: Vec::new(),
        number: 0,
        read: 0,
    };
    let mut mac_input = Vec::new();
    let version = first_line(&mut lines)?;
    mac_input.extend_from_slice(&version);
    mac_input.push(b'\n');
    let mut stanzas = Vec::new();
    // Stanzas past the cap are read (to count them and find the header's end) but not
    // kept.
    let mut count = 0;
    let mut scrypt = false;
    loop {
        let line = lines.next()?.to_vec();
        if let Some(args) = line.strip_prefix(b"-> ") {
            let (tag, args) = stanza_args(args).map_err(|reason| lines.malformed(reason))?;
            mac_input.extend_from_slice(&line);
            mac_input.push(b'\n');
            let body = stanza_body(&mut lines, &mut mac_input)?;
            count += 1;
            scrypt |= tag == SCRYPT_TAG;
            if count <= MAX_STANZAS {
                stanzas.push(Stanza { tag, args, body });
            }
        } else if let Some(encoded) = line.strip_prefix(b"--- ") {
            let mac = decode_mac(encoded).map_err(|reason| lines.malformed(reason))?;
            mac_input.extend_from_slice(b"---");
            if stanzas.is_empty() {
                return Err(lines.malformed("the header has no recipient stanza"));
            }
            if scrypt && count > 1 {
                return Err(HeaderReadError::ScryptNotAlone { stanzas: count });
            }
            if count > MAX_STANZAS {
                return Err(HeaderReadError::TooManyStanzas {
                    stanzas: count,
                    cap: MAX_STANZAS,
                });
            }
            return Ok(ParsedHeader {
                stanzas,
                mac_input,
                mac,
                len: lines.read,
            });
        } else {
            return Err(lines.malformed("expected a stanza (-> …) or the MAC line (--- …)"));
        }
    }
}

/// The version line, checked; a file that is not age v1 is told apart.
fn first_line<R: BufRead>(lines: &mut Lines<R>) -> Result<Vec<u8>, HeaderReadError> {
    let complete = match lines.next() {
        Ok(_) => true,
        Err(HeaderReadError::Truncated | HeaderReadError::TooLong) => false,
        Err(e) => return Err(e),
    };
    let line = lines.line.as_slice();
    if complete && line == VERSION {
        return Ok(line.to_vec());
    }
    if line.starts_with(ARMOR) {
        return Err(HeaderReadError::Armored);
    }
    if !complete && !line.is_empty() && VERSION.starts_with(line) {
        return Err(HeaderReadError::Truncated);
    }
    if complete && line.starts_with(FORMAT_PREFIX) && line.len() < 64 {
        return Err(HeaderReadError::UnknownVersion {
            version: String::from_utf8_lossy(line).into_owned(),
        });
    }
    Err(HeaderReadError::NotAge)
}

/// The tag and arguments of a stanza line (after `-> `): non-empty strings of visible
/// ASCII, one space apart.
fn stanza_args(text: &[u8]) -> Result<(String, Vec<String>), &'static str> {
    let mut args = Vec::new();
    for arg in text.split(|&b| b == b' ') {
        if arg.is_empty() {
            return Err("a stanza argument is empty (two spaces, or a space at the end)");
        }
        if !arg.iter().all(|b| (33..=126).contains(b)) {
            return Err("a stanza argument holds a character other than visible ASCII");
        }
        args.push(String::from_utf8(arg.to_vec()).expect("visible ASCII is UTF-8"));
    }
    let tag = args.remove(0);
    Ok((tag, args))
}

/// A stanza's body: lines of canonical unpadded base64, every one of 64 columns but the
/// last, which is shorter (possibly empty).
fn stanza_body<R: BufRead>(
    lines: &mut Lines<R>,
    mac_input: &mut Vec<u8>,
) -> Result<Vec<u8>, HeaderReadError> {
    let mut encoded = Vec::new();
    loop {
        let line = lines.next()?.to_vec();
        if line.len() > BODY_COLUMNS {
            return Err(lines.malformed("a stanza body line is longer than 64 columns"));
        }
        let last = line.len() < BODY_COLUMNS;
        encoded.extend_from_slice(&line);
        mac_input.extend_from_slice(&line);
        mac_input.push(b'\n');
        if last {
            break;
        }
    }
    BASE64_STANDARD_NO_PAD
        .decode(&encoded)
        .map_err(|_| lines.malformed("a stanza body is not canonical unpadded base64"))
}

/// The MAC of the `---` line: 32 bytes in canonical unpadded base64.
fn decode_mac(encoded: &[u8]) -> Result<[u8; MAC_SIZE], &'static str> {
    let bytes = BASE64_STANDARD_NO_PAD
        .decode(encoded)
        .map_err(|_| "the MAC is not canonical unpadded base64")?;
    bytes.try_into().map_err(|_| "the MAC is not 32 bytes long")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Cursor;

    fn parse(text: &str) -> Result<ParsedHeader, HeaderReadError> {
        read(&mut Cursor::new(text.as_bytes().to_vec()))
    }

    const MAC: &str = "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA";

    #[test]
    fn stanzas_of_any_type_and_the_mac_are_read() {
        let body = "A".repeat(64);
        let text = format!(
            "age-encryption.org/v1\n-> X25519 abc\nAAAA\n-> other-type x y\n{body}\n\n--- {MAC}\npayload"
        );
        let header = parse(&text).unwrap();
        assert_eq!(header.stanzas.len(), 2);
        assert_eq!(header.stanzas[0].tag, "X25519");
        assert_eq!(header.stanzas[0].args, ["abc"]);
        assert_eq!(header.stanzas[0].body, [0, 0, 0]);
        assert_eq!(header.stanzas[1].tag, "other-type");
        assert_eq!(header.stanzas[1].body.len(), 48);
        assert_eq!(header.len as usize, text.len() - "payload".len());
        assert!(header.mac_input.ends_with(b"\n---"));
        assert_eq!(header.mac, [0; 32]);
    }

    #[test]
    fn other_files_are_told_apart() {
        assert!(matches!(parse(""), Err(HeaderReadError::NotAge)));
        assert!(matches!(
            parse("\u{89}MCAP0\r\n"),
            Err(HeaderReadError::NotAge)
        ));
        assert!(matches!(
            parse("-----BEGIN AGE ENCRYPTED FILE-----\n"),
            Err(HeaderReadError::Armored)
        ));
        assert!(matches!(
            parse("age-encryption.org/v2\n"),
            Err(HeaderReadError::UnknownVersion { .. })
        ));
        assert!(matches!(
            parse("age-encryption.org/v1\n-> X25519 abc\n"),
            Err(HeaderReadError::Truncated)
        ));
    }

    #[test]
    fn malformed_lines_are_named() {
        let cases = [
            ("age-encryption.org/v1\n->  X25519\n\n--- {MAC}\n", 2),
            ("age-encryption.org/v1\n-> X25519 a\nA===\n--- {MAC}\n", 3),
            ("age-encryption.org/v1\n-> X25519 a\n\n--- short\n", 4),
            ("age-encryption.org/v1\n--- {MAC}\n", 2),
            ("age-encryption.org/v1\nhello\n", 2),
        ];
        for (text, at) in cases {
            let text = text.replace("{MAC}", MAC);
            match parse(&text) {
                Err(HeaderReadError::Malformed { line, .. }) => assert_eq!(line, at, "{text}"),
                other => panic!("{text:?}: {:?}", other.err()),
            }
        }
    }

    /// A header of `stanzas`, each `-> TAG x` with an empty body.
    fn header_of(tags: &[&str]) -> String {
        let mut text = String::from("age-encryption.org/v1\n");
        for tag in tags {
            text.push_str(&format!("-> {tag} x\n\n"));
        }
        text + &format!("--- {MAC}\n")
    }

    #[test]
    fn stanzas_up_to_the_cap_are_read_and_more_refused_with_their_count() {
        let at_cap = parse(&header_of(&["X25519"; MAX_STANZAS])).unwrap();
        assert_eq!(at_cap.stanzas.len(), MAX_STANZAS);
        let over = vec!["X25519"; 1000];
        match parse(&header_of(&over)) {
            Err(error @ HeaderReadError::TooManyStanzas { .. }) => {
                assert!(
                    matches!(
                        error,
                        HeaderReadError::TooManyStanzas {
                            stanzas: 1000,
                            cap: 64
                        }
                    ),
                    "{error:?}"
                );
                let message = error.to_string();
                assert!(
                    message.contains("has 1000 recipient stanzas, more than the 64 recd reads"),
                    "{message}"
                );
            }
            other => panic!("{:?}", other.err()),
        }
    }

    #[test]
    fn an_scrypt_stanza_beside_another_is_refused() {
        assert_eq!(parse(&header_of(&["scrypt"])).unwrap().stanzas.len(), 1);
        for tags in [
            &["scrypt", "X25519"][..],
            &["X25519", "scrypt"],
            &["scrypt", "scrypt"],
        ] {
            match parse(&header_of(tags)) {
                Err(error @ HeaderReadError::ScryptNotAlone { stanzas: 2 }) => {
                    let message = error.to_string();
                    assert!(
                        message.contains("scrypt (passphrase) stanza among 2"),
                        "{message}"
                    );
                }
                other => panic!("{tags:?}: {:?}", other.err()),
            }
        }
        // A tag that only starts with scrypt is another type.
        assert_eq!(
            parse(&header_of(&["scrypt2", "X25519"]))
                .unwrap()
                .stanzas
                .len(),
            2
        );
    }
}
