//! The recording measured beside background work (finishing, uploads) and alone: 2 FullHD
//! cameras with iceoryx2's default queues, and what the background policy was doing as it
//! began.

use std::time::Duration;

use crate::{finish_load, stopped_dropped, stopped_spilled, Domain, Recd, RecdLoad};

/// What [`cameras2`] recorded.
#[derive(Debug)]
pub struct Cameras2 {
    /// Messages dropped or lost.
    pub dropped: u64,
    /// Samples its writer was too late for (spilled).
    pub spilled: u64,
    /// The background policy's mode as it began (`running`, `throttled`, `backed off`).
    pub mode_at_start: String,
}

/// Records 2 FullHD cameras (iceoryx2's default queues) for 90 frames each into session
/// `name` of `recd`, started with `start_args` too, and stops it.
pub fn cameras2(recd: &Recd, domain: &Domain, name: &str, start_args: &[&str]) -> Cameras2 {
    let mut args = vec!["start", "--name", name, "--topic", "cam2/*"];
    args.extend_from_slice(start_args);
    recd.rec_json(&args);
    let status = recd.rec_json(&["status", name]);
    let mode_at_start = status[0]["backlog"]["background_mode"]
        .as_str()
        .unwrap_or_else(|| panic!("no background mode in {status}"))
        .to_string();
    let load = domain.load(
        &RecdLoad::new("cam2/")
            .cameras(2)
            .fps(30)
            .count(90)
            .duration(Duration::from_secs(60))
            .wait_subscribers(1),
    );
    finish_load(load);
    std::thread::sleep(Duration::from_millis(500));
    let stopped = recd.rec_json(&["stop", name]);
    Cameras2 {
        dropped: stopped_dropped(&stopped),
        spilled: stopped_spilled(&stopped),
        mode_at_start,
    }
}
