//! Whether a new incident fits beside those pinning files already: the bytes it will pin
//! estimated, against the bound on pinned bytes (`[incidents] max_pinned_size`); and
//! whether its cut can read a sealed session's files (recd still holds their keys).

use std::path::PathBuf;
use std::time::Duration;

use recd_storage::LogWindow;

/// What incidents pin now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pinned {
    /// Bytes on disk.
    pub bytes: u64,
    /// Incidents not released.
    pub incidents: u64,
}

/// What a new incident over `window` will pin beyond what is pinned: the `unpinned`
/// bytes of the files its window overlaps that no incident pins yet, what its session
/// writes until the window's end at `bytes_per_s` from `now_ns`, and its cut files (as
/// much as the window).
pub fn estimate(unpinned: u64, bytes_per_s: f64, window: LogWindow, now_ns: u64) -> u64 {
    let ahead_s = window.end_ns.saturating_sub(now_ns.max(window.start_ns)) as f64 / 1e9;
    let window_s = window.span().as_secs_f64();
    unpinned.saturating_add((bytes_per_s.max(0.0) * (ahead_s + window_s)) as u64)
}

/// Why an incident does not fit, in words naming the bound and the way out; `None` when
/// `estimate` more bytes fit beside `pinned` within `bound`. `default_bound` says the
/// bound is `max_pinned_size`'s default.
pub fn refusal(pinned: Pinned, estimate: u64, bound: u64, default_bound: bool) -> Option<String> {
    let total = pinned.bytes.saturating_add(estimate);
    (total > bound).then(|| {
        format!(
            "incident refused: the files incidents pin would take {} ({} pinned now by {} incident(s), about {} for this one), more than max_pinned_size {}{}; release one (rec incidents release ID) or raise [incidents] max_pinned_size",
            bytesize::ByteSize::b(total),
            bytesize::ByteSize::b(pinned.bytes),
            pinned.incidents,
            bytesize::ByteSize::b(estimate),
            bytesize::ByteSize::b(bound),
            if default_bound {
                " (its default: half of max_total_size, or a quarter of the disk)"
            } else {
                ""
            }
        )
    })
}

/// Why an incident of sealed session `session` cannot be cut, in words naming the files
/// whose keys recd no longer holds (`keyless`, of those its window overlaps) and the
/// rule; `None` when it holds every key. `key_reach` is `[encryption] key_reach`.
pub fn keyless_refusal(session: &str, keyless: &[PathBuf], key_reach: Duration) -> Option<String> {
    let first = keyless.first()?;
    let name = |path: &PathBuf| {
        (path.file_name()).map_or_else(String::new, |name| name.to_string_lossy().into_owned())
    };
    let more = match keyless.len() {
        1 => String::new(),
        n => format!(" and {} more", n - 1),
    };
    Some(format!(
        "incident refused: session {session:?} is sealed and recd no longer holds the key of {}{more}, which the window reaches, so it cannot cut it: recd forgets a finished file's key once its newest message is older than [encryption] key_reach ({}) and no incident pins it, and a restart forgets every key; start the window within key_reach of now (the files stay on the disk, sealed to the fleet, for an upload whole)",
        name(first),
        humantime::format_duration(key_reach)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_window_reaching_a_file_without_its_key_is_refused_naming_it_and_the_rule() {
        let reach = Duration::from_secs(3600);
        assert_eq!(keyless_refusal("drive", &[], reach), None);
        let files = [
            PathBuf::from("/d/drive/drive_0000.mcap.age"),
            PathBuf::from("/d/drive/drive_0001.mcap.age"),
        ];
        let reason = keyless_refusal("drive", &files, reach).unwrap();
        for part in [
            "\"drive\"",
            "drive_0000.mcap.age and 1 more",
            "key_reach (1h)",
            "restart",
        ] {
            assert!(reason.contains(part), "{part:?} in {reason}");
        }
        let one = keyless_refusal("drive", &files[1..], reach).unwrap();
        assert!(one.contains("key of drive_0001.mcap.age, which"), "{one}");
    }

    const S: u64 = 1_000_000_000;

    fn window(start_s: u64, end_s: u64) -> LogWindow {
        LogWindow {
            start_ns: start_s * S,
            end_ns: end_s * S,
        }
    }

    #[test]
    fn the_estimate_adds_what_is_still_to_be_written_and_the_cut() {
        // A window of 40 s ending 10 s from now at 1 MB/s: 10 s to write, 40 s to cut.
        assert_eq!(
            estimate(500, 1e6, window(60, 110), 100 * S),
            500 + 60_000_000
        );
        // All written: the cut alone.
        assert_eq!(estimate(0, 1e6, window(10, 20), 100 * S), 10_000_000);
        // A window ahead of now counts from its start.
        assert_eq!(estimate(0, 1e6, window(200, 201), 100 * S), 2_000_000);
        assert_eq!(estimate(7, -5.0, window(0, 1000), 0), 7, "no negative rate");
        assert_eq!(estimate(u64::MAX, 1e9, window(0, 10), 0), u64::MAX);
    }

    #[test]
    fn an_incident_beyond_the_bound_is_refused_naming_it_and_the_way_out() {
        let pinned = Pinned {
            bytes: 600,
            incidents: 2,
        };
        assert_eq!(
            refusal(pinned, 400, 1000, false),
            None,
            "exactly the bound fits"
        );
        let refused = refusal(pinned, 401, 1000, true).unwrap();
        assert!(refused.contains("would take 1001 B (600 B pinned now by 2 incident(s), about 401 B for this one), more than max_pinned_size 1000 B (its default"), "{refused}");
        assert!(refused.contains("rec incidents release ID"), "{refused}");
    }
}
