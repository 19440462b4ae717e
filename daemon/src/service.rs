//! Life under systemd (readiness, status line, watchdog) and logging; all of it is
//! harmless outside systemd.

use std::time::Duration;

use sd_notify::NotifyState;

use crate::sessions::Load;

/// Whether systemd started us (it sets these for every service it runs).
fn under_systemd() -> bool {
    std::env::var_os("INVOCATION_ID").is_some() || std::env::var_os("JOURNAL_STREAM").is_some()
}

/// What is logged when `RUST_LOG` does not say: recd's own crates (every target starting
/// with `recd`) at INFO, which is nothing per sample or packet; dependencies at WARN
/// (rustdds logs INFO lines per RTPS message under load). rustdds' RTPS writers at ERROR:
/// for a remote reader it can reach only through loopback rustdds warns "No locators" at
/// every discovery send, over ten lines a second. Its UDP sender at ERROR: it warns of
/// every datagram over 1500 bytes, which discovery sends every few seconds. ros2-client's
/// check of `ROS_DISTRO` at ERROR: recd serves rosbag2's services without a ROS install.
pub const DEFAULT_LOG_FILTER: &str = "warn,recd=info,rustdds::rtps::writer=error,rustdds::network::udp_sender=error,ros2_client::distributions=error";

/// Logs to the journal under systemd, to stderr otherwise; `RUST_LOG` filters (default
/// [`DEFAULT_LOG_FILTER`]).
pub fn init_logging() {
    use tracing_subscriber::prelude::*;
    use tracing_subscriber::EnvFilter;
    let filter =
        EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(DEFAULT_LOG_FILTER));
    if under_systemd() {
        if let Ok(journald) = tracing_journald::layer() {
            tracing_subscriber::registry()
                .with(filter)
                .with(journald)
                .init();
            return;
        }
    }
    tracing_subscriber::registry()
        .with(filter)
        .with(
            tracing_subscriber::fmt::layer()
                .with_writer(std::io::stderr)
                .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr())),
        )
        .init();
}

/// Tells systemd that recd is ready (its socket listens).
pub fn ready() {
    let _ = sd_notify::notify(&[NotifyState::Ready]);
}

/// Tells systemd that recd is stopping.
pub fn stopping() {
    let _ = sd_notify::notify(&[NotifyState::Stopping]);
}

/// How often to ping the watchdog, if systemd asked for pings.
pub fn watchdog_period() -> Option<Duration> {
    sd_notify::watchdog_enabled().map(|timeout| timeout / 2)
}

/// Updates the one-line status `systemctl status` shows, and pings the watchdog when
/// every session's threads are alive (systemd restarts a recd whose pings stop).
pub fn heartbeat(load: &Load, watchdog: bool) {
    let status = format!(
        "{} session{} recording, {:.1} MB/s, {} dropped or lost",
        load.sessions,
        if load.sessions == 1 { "" } else { "s" },
        load.bytes_per_s / 1e6,
        load.dropped
    );
    let mut states = vec![NotifyState::Status(&status)];
    if watchdog && load.healthy {
        states.push(NotifyState::Watchdog);
    }
    let _ = sd_notify::notify(&states);
}
