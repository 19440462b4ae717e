//! Cyclone DDS's own benchmark tool, `ddsperf` (Debian package `cyclonedds-tools`), as a
//! neutral DDS publisher: a reliable, keep-all writer of a keyed topic, none of our code.

use std::process::{Child, Command, Stdio};
use std::time::Duration;

use crate::python::cyclone_loopback_config;
use crate::wait_bounded;

/// The DDS topic `ddsperf pub` writes (type `DDSPerfRDataKS`, keyed).
pub const DDSPERF_TOPIC: &str = "DDSPerfRDataKS";

/// Starts `ddsperf -i DOMAIN -D SECONDS pub RATE size SIZE` on loopback only; `rate` and
/// `size` as ddsperf takes them ("1kHz", "64k").
pub fn ddsperf_publish(domain: u16, seconds: u32, rate: &str, size: &str) -> Child {
    Command::new("ddsperf")
        .args(["-i", &domain.to_string(), "-D", &seconds.to_string()])
        .args(["pub", rate, "size", size])
        .env("CYCLONEDDS_URI", cyclone_loopback_config())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("ddsperf starts (Debian package cyclonedds-tools; .ci/run installs it)")
}

/// Waits (at most `limit`) for a `ddsperf` and asserts it ended well.
pub fn ddsperf_done(child: Child, limit: Duration) {
    let output = wait_bounded(child, limit);
    assert!(
        output.status.success(),
        "ddsperf failed ({}): {}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
}
