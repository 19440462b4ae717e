//! What the listener asks of the daemon: the control protocol's answers, a few facts the
//! protocol does not carry, and the probes' checks.

use std::path::PathBuf;

use recd_control::{ErrorReply, IncidentsOverview, Request, Response, StartRequest};

/// The daemon behind the listener. Every method may block (they run on the listener's
/// blocking threads, never on a recording thread).
pub trait Backend: Send + Sync + 'static {
    /// Carries out a control-protocol request, as the Unix socket and remote control do.
    fn answer(&self, request: Request) -> Result<Response, ErrorReply>;
    /// Facts of the daemon that the control protocol does not carry.
    fn facts(&self) -> DaemonFacts;
    /// The incidents counted, the bytes they pin, and the `newest` newest of them.
    fn incidents(&self, newest: usize) -> Result<IncidentsOverview, String>;
    /// Whether the daemon's threads are alive: the facts the systemd watchdog is pinged on.
    fn alive(&self) -> Result<(), String>;
    /// The readiness checks, each passed or failed with the reason.
    fn readiness(&self) -> Vec<Check>;
}

/// Facts of the daemon for the metrics and the page.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct DaemonFacts {
    /// The host's name.
    pub hostname: String,
    /// Where recordings go.
    pub data_dir: PathBuf,
    /// Bytes free there (for unprivileged users); `None` when it cannot be read.
    pub free_bytes: Option<u64>,
    /// `min_free_space`.
    pub min_free_space: u64,
    /// What the host knows of its clock's synchronisation (`unknown (…)` when nothing
    /// says it is synchronised).
    pub clock_sync: Option<String>,
    /// File keys of sealed files recd holds in memory (to cut those files); `None` when
    /// sealing is off.
    pub seal_keys: Option<u64>,
    /// What the fleet's requests over MQTT did; `None` when `[fleet]` is off.
    pub fleet_requests: Option<FleetRequests>,
}

/// What the fleet's requests did since recd started.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct FleetRequests {
    /// Requests taken, by kind (`window`, `release`, `uploads`, `status`).
    pub taken: std::collections::BTreeMap<String, u64>,
    /// Requests refused before anything was done, by reason (`unsigned`, `wrong_key`,
    /// `other_vehicle`, `stale`, `replayed`, …).
    pub refused: std::collections::BTreeMap<String, u64>,
}

/// One readiness check.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Check {
    /// Its name, as `/readyz?verbose` lists it.
    pub name: &'static str,
    /// Passed, or failed with the reason.
    pub outcome: Result<(), String>,
}

/// A named way to start a session from the web page (`[[preset]]` in recd.toml).
#[derive(Debug, Clone, PartialEq)]
pub struct Preset {
    /// Its name: the button's label, and the session's name.
    pub name: String,
    /// How the session records.
    pub start: StartRequest,
    /// A trigger's milliseconds before now to keep; `None` keeps the whole buffer.
    pub trigger_before_ms: Option<u64>,
    /// A trigger's milliseconds after now.
    pub trigger_after_ms: u64,
}
