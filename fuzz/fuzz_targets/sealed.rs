//! `rec decrypt` and `rec decrypt --recover`: a file of any bytes opened with a fixed
//! identity (the seeds are sealed to it), its plaintext read whole and from a seek, then
//! recovered. What the reader returns in full, recovery must return too.
#![no_main]

mod keys;

use std::io::{Cursor, Read, Seek, SeekFrom};
use std::sync::LazyLock;

use libfuzzer_sys::fuzz_target;
use recd_seal::{recover, Identities, SealedReader};

static IDENTITIES: LazyLock<Identities> =
    LazyLock::new(|| Identities::parse(&[keys::AGE_IDENTITY.to_string()]).expect("test key"));

fuzz_target!(|data: &[u8]| {
    let whole = SealedReader::open(Cursor::new(data), &*IDENTITIES)
        .ok()
        .and_then(|mut reader| {
            let mut plaintext = Vec::new();
            let read = reader.read_to_end(&mut plaintext);
            let len = reader.plaintext_len();
            let middle = len / 2;
            if reader.seek(SeekFrom::Start(middle)).is_ok() {
                let mut tail = Vec::new();
                if reader.read_to_end(&mut tail).is_ok() && read.is_ok() {
                    assert_eq!(
                        tail,
                        plaintext[middle as usize..],
                        "a seek reads what a scan read"
                    );
                }
            }
            read.ok().map(|_| {
                assert_eq!(
                    plaintext.len() as u64,
                    len,
                    "a whole file is its stored length's plaintext"
                );
                plaintext
            })
        });
    let mut out = Vec::new();
    if let Ok(recovered) = recover(Cursor::new(data), &*IDENTITIES, &mut out) {
        assert_eq!(recovered.plaintext_bytes, out.len() as u64);
        if let Some(plaintext) = whole {
            assert!(recovered.complete, "a file read whole is recovered whole");
            assert!(out == plaintext, "recovery writes what the reader read");
        }
    } else {
        assert!(whole.is_none(), "a file read whole opens for recovery");
    }
});
