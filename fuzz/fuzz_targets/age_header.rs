//! `rec info FILE` without a key: the age header of a file of any bytes (version line,
//! recipient stanzas up to the cap, the MAC line) and the chunks its length implies.
#![no_main]

use std::io::Cursor;

use libfuzzer_sys::fuzz_target;
use recd_seal::{SealedHeader, MAX_STANZAS};

fuzz_target!(|data: &[u8]| {
    if let Ok(header) = SealedHeader::read(Cursor::new(data)) {
        let types = header.stanza_types();
        assert!(!types.is_empty() && types.len() <= MAX_STANZAS);
        assert!(types.len() == 1 || !types.iter().any(|t| t == "scrypt"));
        assert!(header.header_len() <= header.stored_len());
        assert_eq!(header.stored_len(), data.len() as u64);
        let _ = (header.complete_chunks(), header.plaintext_len());
        let _ = (
            header.can_end_in_last_chunk(),
            header.ends_at_chunk_boundary(),
        );
    }
});
