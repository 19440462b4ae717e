//! `rec info`: the summary of a file of any bytes (footer, summary section, or a scan).
#![no_main]

use std::io::Cursor;
use std::path::Path;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = recd_storage::summarize_from(
        &mut Cursor::new(data),
        data.len() as u64,
        Path::new("fuzzed.mcap"),
    );
});
