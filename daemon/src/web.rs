//! The daemon behind the HTTP listener: the sessions' answers, the data directory's space,
//! the clock's synchronisation, and the heartbeat the systemd watchdog is pinged on.

use std::io::Write;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use recd_control::{ErrorReply, IncidentsOverview, Request, Response};
use recd_http::{Backend, Check, DaemonFacts};

use crate::locks::lock;
use crate::sessions::Sessions;

/// A heartbeat older than this means the sessions are stuck (it comes every second).
const HEARTBEAT_STALE: Duration = Duration::from_secs(5);

/// How long the clock's synchronisation is taken as known (asking runs chronyc and pmc).
const CLOCK_FRESH_FOR: Duration = Duration::from_secs(10);

/// The daemon's once-a-second sample: when it last came, and whether every session's
/// threads were alive then; what the watchdog is pinged on.
#[derive(Debug)]
pub struct Heartbeat {
    last: Mutex<(Instant, bool)>,
}

impl Heartbeat {
    /// A heartbeat counted from now: a starting recd is alive until its first sample is
    /// [`HEARTBEAT_STALE`] late.
    pub fn new() -> Self {
        Self {
            last: Mutex::new((Instant::now(), true)),
        }
    }

    /// Notes a sample.
    pub fn beat(&self, threads_alive: bool) {
        *lock(&self.last) = (Instant::now(), threads_alive);
    }

    /// Alive: a sample came lately and found every thread running.
    pub fn alive(&self) -> Result<(), String> {
        match *lock(&self.last) {
            (at, _) if at.elapsed() > HEARTBEAT_STALE => Err(format!(
                "no sample of the sessions for {:.0} s: they are stuck",
                at.elapsed().as_secs_f64()
            )),
            (_, false) => Err("a recording thread ended unexpectedly".into()),
            (_, true) => Ok(()),
        }
    }
}

/// The sessions as the listener sees them.
pub struct WebBackend {
    sessions: Arc<Sessions>,
    heartbeat: Arc<Heartbeat>,
    hostname: String,
    clock: Mutex<Option<(Instant, String)>>,
    /// What the fleet's requests did, when `[fleet]` is on.
    fleet: Option<Arc<Mutex<crate::fleet::Tally>>>,
}

impl WebBackend {
    /// The backend of `sessions`, alive while `heartbeat` beats; `fleet` counts the
    /// fleet's requests.
    pub fn new(
        sessions: Arc<Sessions>,
        heartbeat: Arc<Heartbeat>,
        fleet: Option<Arc<Mutex<crate::fleet::Tally>>>,
    ) -> Self {
        Self {
            sessions,
            heartbeat,
            hostname: crate::host::hostname(),
            clock: Mutex::new(None),
            fleet,
        }
    }

    fn clock_sync(&self) -> String {
        let mut clock = lock(&self.clock);
        match &*clock {
            Some((at, evidence)) if at.elapsed() < CLOCK_FRESH_FOR => evidence.clone(),
            _ => {
                let evidence = crate::clock_sync::evidence();
                *clock = Some((Instant::now(), evidence.clone()));
                evidence
            }
        }
    }
}

impl Backend for WebBackend {
    fn answer(&self, request: Request) -> Result<Response, ErrorReply> {
        self.sessions.answer(request)
    }

    fn facts(&self) -> DaemonFacts {
        let data_dir = self.sessions.data_dir();
        DaemonFacts {
            hostname: self.hostname.clone(),
            data_dir: data_dir.to_path_buf(),
            free_bytes: recd_storage::space_of(data_dir).ok().map(|s| s.available),
            min_free_space: self.sessions.config().min_free_space.as_u64(),
            clock_sync: Some(self.clock_sync()),
            seal_keys: self.sessions.seal_keys_held().map(|held| held as u64),
            fleet_requests: self.fleet.as_ref().map(|tally| lock(tally).clone()),
        }
    }

    fn incidents(&self, newest: usize) -> Result<IncidentsOverview, String> {
        (self.sessions.incidents().overview(newest)).map_err(|error| error.message)
    }

    fn alive(&self) -> Result<(), String> {
        self.heartbeat.alive()
    }

    fn readiness(&self) -> Vec<Check> {
        let data_dir = self.sessions.data_dir();
        vec![
            Check {
                name: "catalog",
                outcome: self.sessions.check_catalog(),
            },
            Check {
                name: "data_dir",
                outcome: writable(data_dir),
            },
            Check {
                name: "free_space",
                outcome: free_space(data_dir, self.sessions.config().min_free_space.as_u64()),
            },
        ]
    }
}

/// Whether a byte can be written to a new file in `dir` (and the file removed again).
fn writable(dir: &Path) -> Result<(), String> {
    let probe = dir.join(format!(".recd-ready-{}", std::process::id()));
    let written = std::fs::File::create(&probe).and_then(|mut file| {
        file.write_all(b"r")?;
        file.sync_data()
    });
    let _ = std::fs::remove_file(&probe);
    written.map_err(|error| format!("cannot write in {}: {error}", dir.display()))
}

/// Whether the free space under `dir` is above `minimum`.
fn free_space(dir: &Path, minimum: u64) -> Result<(), String> {
    let space = recd_storage::space_of(dir)
        .map_err(|error| format!("cannot read the free space of {}: {error}", dir.display()))?;
    if space.available > minimum || minimum == 0 {
        Ok(())
    } else {
        Err(format!(
            "{} free under {}, not above min_free_space {}",
            bytesize::ByteSize::b(space.available),
            dir.display(),
            bytesize::ByteSize::b(minimum)
        ))
    }
}
