//! `rec reindex`: a file of any bytes rewritten chunked, indexed and zstd-compressed.
#![no_main]

#[path = "common.rs"]
mod common;

use std::sync::atomic::AtomicBool;

use libfuzzer_sys::fuzz_target;
use recd_storage::{Compression, ReindexOptions};

fuzz_target!(|data: &[u8]| {
    let input = common::file_with("reindex-in.mcap", data);
    let output = common::scratch().join("reindex-out.mcap");
    let options = ReindexOptions {
        compression: Compression::Zstd,
        ..ReindexOptions::default()
    };
    let reindexed = recd_storage::reindex(
        &input,
        &output,
        &options,
        &mut |_, _| {},
        &AtomicBool::new(false),
    );
    if reindexed.is_ok() {
        // What reindex wrote must read back as a whole file.
        let info = recd_storage::summarize(&output).expect("a reindexed file summarizes");
        assert!(info.closed_cleanly, "a reindexed file is closed cleanly");
    }
});
