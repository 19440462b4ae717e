//! The cutter: a thread (SCHED_BATCH, idle I/O class, held and paced by the background
//! policy like finishing) that cuts each incident's window out of its session's files
//! into one file per source family, once the window has been written to its end, then
//! queues them for upload first. It also ends the pins whose keep is over or whose cut
//! was uploaded (`release_after_upload`). An incident whose cut was interrupted (a crash,
//! a stop) is still waiting in the catalog and is cut after the next start.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use recd_catalog::{Catalog, IncidentKey};
use recd_control::{CutState, FileState, FinishMode, Incident};
use recd_storage::window::nanos;
use recd_storage::{CutOptions, IncidentRecord, LogWindow};
use recd_upload::Yielding;

use super::naming;
use crate::background::Worker;
use crate::clock::now_ns;
use crate::config::DaemonConfig;
use crate::files::{CutFile, FileLife};
use crate::finishing::FinishGate;
use crate::locks::lock;
use crate::sessions::registry::Registry;

/// How often the cutter looks for work.
const LOOK_EVERY: Duration = Duration::from_millis(250);
/// After a window's end, how long the cutter waits for its session's writers to say
/// they wrote past it before it cuts anyway (a source that fell silent says nothing).
const QUIET_WAIT: Duration = Duration::from_secs(10);

/// The thread that cuts incidents.
pub struct Cutter(Worker);

/// What the cutter works with.
pub struct CutterParts {
    /// Where incidents are kept.
    pub catalog: Arc<Mutex<Catalog>>,
    /// Where the cut files' life goes on.
    pub files: Arc<FileLife>,
    /// The running sessions: how far each has written.
    pub registry: Arc<Registry>,
    /// When background work may run, and at what pace.
    pub gate: Arc<FinishGate>,
    /// The data directory, and what finishing does by default.
    pub config: Arc<DaemonConfig>,
    /// What files are sealed with, when `[encryption]` is set.
    pub sealing: Option<recd_storage::Sealing>,
    /// The checkpoints of the files being written: a cut scans a growing file from the
    /// last one before its window.
    pub checkpoints: recd_storage::CheckpointBook,
}

impl Cutter {
    /// Starts cutting the incidents `parts.catalog` keeps.
    pub fn start(parts: CutterParts) -> Self {
        Self(Worker::start(
            "recd-incidents",
            "cutting incidents",
            move |stop| Cutting { parts, stop }.run(),
        ))
    }

    /// Stops cutting; a cut under way leaves nothing and is made after the next start.
    pub fn stop(self) {
        self.0.stop();
    }
}

struct Cutting {
    parts: CutterParts,
    stop: Arc<AtomicBool>,
}

/// How far an incident's session has written, as the cutter sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Written {
    /// The session stopped: everything it wrote is in its files.
    Stopped,
    /// The session is stopping: its files are being closed.
    Stopping,
    /// It runs, and its files hold every message up to this log time (`None` before
    /// any).
    Until(Option<u64>),
}

/// Whether an incident whose window ends at `end_ns` is due to be cut at `now_ns`: its
/// end has passed, and its session stopped, or wrote past it, or has been quiet for
/// [`QUIET_WAIT`] since (a source that fell silent says nothing).
pub fn is_due(now_ns: u64, end_ns: u64, written: Written) -> bool {
    if now_ns < end_ns {
        return false;
    }
    match written {
        Written::Stopped => true,
        Written::Stopping => false,
        Written::Until(until) => {
            until.is_some_and(|until| until >= end_ns)
                || now_ns >= end_ns.saturating_add(recd_storage::window::nanos(QUIET_WAIT))
        }
    }
}

impl Cutting {
    fn run(self) {
        if let Err(refused) = recd_priority::lower_to_background() {
            tracing::warn!(
                "cutting incidents runs at normal priority: the kernel refused {refused}"
            );
        }
        self.remove_leftovers();
        let mut told_hold = false;
        while !self.stop.load(Ordering::Relaxed) {
            self.release_due();
            let due = self.due();
            if due.is_empty() {
                std::thread::sleep(LOOK_EVERY);
                continue;
            }
            if let Some(why) = self.parts.gate.background_hold() {
                if !told_hold {
                    tracing::info!("cutting incidents waits: {why}");
                    told_hold = true;
                }
                std::thread::sleep(LOOK_EVERY);
                continue;
            }
            told_hold = false;
            for (key, finish) in due {
                if self.stop.load(Ordering::Relaxed) {
                    return;
                }
                self.cut(&key, finish);
            }
        }
    }

    /// Removes what a cut that recd did not end (killed, power cut) left: hidden files in
    /// the incidents' folder.
    fn remove_leftovers(&self) {
        let dir = super::incidents_dir(&self.parts.config.data_dir);
        let Ok(entries) = std::fs::read_dir(&dir) else {
            return;
        };
        for entry in entries.filter_map(Result::ok) {
            if entry.file_name().to_string_lossy().starts_with('.') {
                match std::fs::remove_file(entry.path()) {
                    Ok(()) => {
                        tracing::info!(file = %entry.path().display(), "removed what an interrupted cut left")
                    }
                    Err(error) => {
                        tracing::warn!(file = %entry.path().display(), "cannot remove what an interrupted cut left: {error}")
                    }
                }
            }
        }
    }

    fn catalog(&self) -> MutexGuard<'_, Catalog> {
        lock(&self.parts.catalog)
    }

    /// Ends the pins that are over, and says so.
    fn release_due(&self) {
        let released = self.catalog().release_due(now_ns().max(0) as u64);
        match released {
            Ok(released) => {
                for (key, why) in released {
                    tracing::info!(
                        id = key.id,
                        why,
                        "incident released: retention may take its files again"
                    );
                }
            }
            Err(error) => tracing::error!("cannot release incidents: {error}"),
        }
    }

    /// The incidents whose windows have been written to their end, with what finishing
    /// does to their session's files.
    fn due(&self) -> Vec<(IncidentKey, FinishMode)> {
        let waiting = match self.catalog().incidents_to_cut() {
            Ok(waiting) => waiting,
            Err(error) => {
                tracing::error!("cannot read the incidents to cut: {error}");
                return Vec::new();
            }
        };
        let now = now_ns().max(0) as u64;
        waiting
            .into_iter()
            .filter_map(|(key, window)| {
                let (written, finish) = match self.parts.registry.by_id(key.session) {
                    Some(session) => (
                        Written::Until(session.recording.status().written_until_ns),
                        session.finish,
                    ),
                    None if self.parts.registry.is_stopping(key.session) => {
                        (Written::Stopping, self.parts.config.recording.finish)
                    }
                    None => (Written::Stopped, self.parts.config.recording.finish),
                };
                is_due(now, window.end_ns, written).then_some((key, finish))
            })
            .collect()
    }

    /// Cuts incident `key` into one file per source family of its session.
    fn cut(&self, key: &IncidentKey, finish: FinishMode) {
        let found = {
            let catalog = self.catalog();
            catalog.incident(key).and_then(|incident| match incident {
                Some(incident) => {
                    let files = catalog.files_overlapping(key.session, window_of(&incident))?;
                    // The incident's own session, by id: names repeat.
                    let config = (catalog.session(key.session)?)
                        .map(|s| s.config)
                        .unwrap_or_default();
                    Ok(Some((incident, files, config)))
                }
                None => Ok(None),
            })
        };
        let (incident, files, config) = match found {
            Ok(Some(found)) => found,
            Ok(None) => return,
            Err(error) => {
                tracing::error!(id = key.id, "cannot read the incident to cut: {error}");
                return;
            }
        };
        let started = Instant::now();
        let mut families: BTreeMap<&'static str, Vec<PathBuf>> = BTreeMap::new();
        let single = single_family(&config);
        for file in &files {
            let family = naming::family_of(&file.path).unwrap_or(single);
            families.entry(family).or_default().push(file.path.clone());
        }
        // Only these are read as growing: any other sealed input must authenticate whole.
        let growing: Vec<PathBuf> = (files.iter())
            .filter(|file| file.state == FileState::Recording)
            .map(|file| file.path.clone())
            .collect();
        let mut made = Vec::new();
        for (family, inputs) in &families {
            match self.cut_family(&incident, family, (inputs, &growing), finish) {
                Ok(Some(file)) => made.push(file),
                Ok(None) => {}
                Err(why) => {
                    for file in &made {
                        self.discard(&file.path);
                    }
                    if self.stop.load(Ordering::Relaxed) {
                        return;
                    }
                    tracing::warn!(
                        id = key.id,
                        session = incident.session,
                        "cannot cut the incident: {why}; its files stay pinned"
                    );
                    let why = why.to_string();
                    let _ = self.catalog().set_cut(key, CutState::Failed, Some(&why));
                    return;
                }
            }
        }
        if let Err(error) = self.parts.files.cut(key, &incident, &made) {
            tracing::error!(id = key.id, "cannot record the incident's cut: {error}");
            return;
        }
        for file in &made {
            tracing::info!(
                id = key.id,
                session = incident.session,
                file = %file.path.display(),
                bytes = file.bytes,
                messages = file.messages,
                seconds = format!("{:.1}", started.elapsed().as_secs_f64()),
                "incident cut"
            );
        }
        if made.is_empty() {
            tracing::warn!(
                id = key.id,
                session = incident.session,
                "the incident's window holds no message of its session: no file cut"
            );
        }
    }

    /// Removes a cut file that is not kept (empty, or its incident's cut failed), and
    /// forgets its seal key with it.
    fn discard(&self, path: &std::path::Path) {
        let _ = std::fs::remove_file(path);
        if let Some(sealing) = &self.parts.sealing {
            sealing.keys.forget(path);
        }
    }

    /// Cuts `inputs` (one source family; those `growing` still being written) into the
    /// incident's file for `family`: its path, bytes and messages, or `None` when the
    /// window holds none of them.
    fn cut_family(
        &self,
        incident: &Incident,
        family: &str,
        (inputs, growing): (&[PathBuf], &[PathBuf]),
        finish: FinishMode,
    ) -> Result<Option<CutFile>, CutFailed> {
        let data_dir = &self.parts.config.data_dir;
        let sealing = self.parts.sealing.clone();
        let mut output = naming::cut_path(
            data_dir,
            &incident.id,
            &incident.note,
            &incident.session,
            family,
        );
        if sealing.is_some() {
            output.as_mut_os_string().push(recd_storage::SEALED_SUFFIX);
        }
        if let Some(dir) = output.parent() {
            std::fs::create_dir_all(dir).map_err(|source| CutFailed::Folder {
                dir: dir.to_path_buf(),
                source,
            })?;
        }
        let (before, after) = window_of(incident).sides(incident.time_ns);
        let record = IncidentRecord {
            id: incident.id.clone(),
            note: incident.note.clone(),
            origin: incident.origin.clone(),
            time_ns: incident.time_ns,
            before_ns: nanos(before),
            after_ns: nanos(after),
            host: crate::host::hostname(),
            session: incident.session.clone(),
            clock_sync: crate::clock_sync::evidence(),
            rule: incident
                .rule
                .as_ref()
                .map(|fired| fired.rule.clone())
                .unwrap_or_default(),
            rule_values: incident
                .rule
                .as_ref()
                .map(|fired| serde_json::Value::from_iter(fired.values.clone()).to_string())
                .unwrap_or_default(),
        };
        let topics =
            super::topics::cut_topics(incident.topics.as_deref()).map_err(CutFailed::Topics)?;
        let options = CutOptions {
            compression: crate::finishing::compression_of(finish),
            threads: crate::finishing::compression_threads(),
            metadata: vec![mcap::records::Metadata {
                name: recd_storage::INCIDENT.to_string(),
                metadata: record.record(),
            }],
            cancel: Some(self.stop.clone()),
            pace: Some(self.pace()),
            sealing,
            growing: growing.to_vec(),
            topics,
            checkpoints: Some(self.parts.checkpoints.clone()),
            ..CutOptions::default()
        };
        let report = recd_storage::cut(inputs, window_of(incident), &output, &options)?;
        for input in &report.inputs {
            if let Some(fallback) = &input.fallback {
                tracing::warn!(file = %input.path.display(), "the incident's cut scanned the file: {fallback}");
            }
        }
        if report.messages == 0 {
            self.discard(&output);
            return Ok(None);
        }
        Ok(Some(CutFile {
            path: output,
            bytes: report.output_bytes,
            messages: report.messages + report.latched,
        }))
    }

    /// Holds the cut's reads to the background pace, and waits while the background
    /// policy keeps background work off.
    fn pace(&self) -> recd_storage::Pace {
        let gate = self.parts.gate.clone();
        let stop = self.stop.clone();
        let yielding = Mutex::new(Yielding::default());
        Arc::new(move |bytes: u64| {
            let holds = gate.beside_recordings();
            lock(&yielding).wait_turn(bytes, &holds, &stop, &mut |_| {});
        })
    }
}

/// Why one family's cut was not made.
#[derive(Debug, thiserror::Error)]
enum CutFailed {
    /// The incidents' folder cannot be made.
    #[error("cannot create {}: {source}", dir.display())]
    Folder {
        dir: PathBuf,
        source: std::io::Error,
    },
    /// The incident's topic patterns are not globs (a catalog written by hand).
    #[error("{0}")]
    Topics(String),
    /// The cut itself failed (or was interrupted).
    #[error(transparent)]
    Cut(#[from] recd_storage::CutError),
}

/// The window of `incident`.
fn window_of(incident: &Incident) -> LogWindow {
    LogWindow {
        start_ns: incident.start_ns,
        end_ns: incident.end_ns,
    }
}

/// The source family of a session whose files carry none in their names (it records one
/// source): DDS or Zenoh when it records that without iceoryx2, else iceoryx2 (from its
/// recording configuration).
fn single_family(config: &str) -> &'static str {
    let config: serde_json::Value = serde_json::from_str(config).unwrap_or_default();
    let iceoryx2 = config["iceoryx2"].as_bool().unwrap_or(true);
    if iceoryx2 {
        "iceoryx2"
    } else if !config["zenoh"].is_null() {
        "zenoh"
    } else {
        "dds"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: u64 = 1_000_000_000;

    #[test]
    fn an_incident_is_due_once_its_end_has_passed_and_was_written_or_fell_quiet() {
        let end = 100 * S;
        assert!(!is_due(end - 1, end, Written::Stopped), "before its end");
        assert!(is_due(end, end, Written::Stopped));
        assert!(
            !is_due(end + 3600 * S, end, Written::Stopping),
            "its files are closing"
        );
        assert!(!is_due(end + S, end, Written::Until(Some(end - 1))));
        assert!(is_due(end + S, end, Written::Until(Some(end))));
        assert!(
            !is_due(end + S, end, Written::Until(None)),
            "nothing written yet"
        );
        let quiet = end + recd_storage::window::nanos(QUIET_WAIT);
        assert!(!is_due(quiet - 1, end, Written::Until(None)));
        assert!(is_due(quiet, end, Written::Until(None)));
        assert!(
            !is_due(u64::MAX - 1, u64::MAX, Written::Until(None)),
            "no overflow"
        );
    }

    #[test]
    fn a_single_source_session_is_named_for_what_it_records() {
        assert_eq!(single_family("{}"), "iceoryx2");
        assert_eq!(
            single_family(r#"{"iceoryx2":true,"dds":{"domain":0}}"#),
            "iceoryx2"
        );
        assert_eq!(
            single_family(r#"{"iceoryx2":false,"zenoh":{"domain":0}}"#),
            "zenoh"
        );
        assert_eq!(
            single_family(r#"{"iceoryx2":false,"dds":{"domain":0}}"#),
            "dds"
        );
        assert_eq!(single_family("not json"), "iceoryx2");
    }
}
