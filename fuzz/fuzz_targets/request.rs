//! recd's control socket: a request line of any bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = recd_control::decode_request(data);
});
