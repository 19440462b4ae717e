//! `rec play`: every message of a file of any bytes, in file order.
#![no_main]

#[path = "common.rs"]
mod common;

use std::ops::ControlFlow;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let path = common::file_with("messages.mcap", data);
    let _ = recd_storage::for_each_message(&path, |message| {
        std::hint::black_box(message.data.len());
        ControlFlow::Continue(())
    });
});
