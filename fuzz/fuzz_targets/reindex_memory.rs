//! `rec reindex` in memory: the reindexer (recovery, chunking, zstd, summary) over a file
//! of any bytes held in memory into memory, so that a campaign reaches millions of runs
//! (the `reindex` target writes, renames and reads back a file per run).
#![no_main]

use std::io::Cursor;
use std::path::Path;

use libfuzzer_sys::fuzz_target;
use recd_storage::{Compression, ReindexOptions};

fuzz_target!(|data: &[u8]| {
    let options = ReindexOptions {
        compression: Compression::Zstd,
        threads: 1,
        ..ReindexOptions::default()
    };
    if let Ok((output, messages)) = recd_storage::reindex_in_memory(data, &options) {
        // What reindex wrote must read back as a whole file holding every message.
        let size = output.len() as u64;
        let info = recd_storage::summarize_from(&mut Cursor::new(output), size, Path::new("out"))
            .expect("a reindexed file summarizes");
        assert!(info.closed_cleanly, "a reindexed file is closed cleanly");
        assert_eq!(info.message_count, messages, "every message is counted");
    }
});
