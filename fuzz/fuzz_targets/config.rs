//! recd.toml of any text, and the recording configuration recd derives from it.
#![no_main]

use libfuzzer_sys::fuzz_target;
use recd_daemon::config::DaemonConfig;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(config) = DaemonConfig::parse(text) {
        let _ = config.to_toml();
    }
});
