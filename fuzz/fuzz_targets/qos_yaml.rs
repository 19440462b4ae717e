//! `offered_qos_profiles` of any text, as `rec play` reads it from a recorded channel.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(yaml) = std::str::from_utf8(data) {
        let _ = recd_ros2::qos::parse_offered_qos_profiles(yaml);
    }
});
