//! The cutter: a thread (SCHED_BATCH, idle I/O class, held and paced by the background
//! policy like finishing) that cuts each incident's window out of its session's files
//! into one file per source family, once the window has been written to its end, then
//! queues them for upload first. It also ends the pins whose keep is over or whose cut
//! was uploaded (`release_after_upload`). An incident whose cut was interrupted (a crash,
//! a stop) is still waiting in the catalog and is cut after the next start.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use recd_catalog::IncidentKey;
use recd_control::{CutState, FinishMode, Incident};
use recd_storage::{CutOptions, CutWindow, IncidentRecord};
use recd_upload::Paced;

use super::naming;
use crate::background::Worker;
use crate::clock::now_ns;
use crate::sessions::Sessions;

/// How often the cutter looks for work.
const LOOK_EVERY: Duration = Duration::from_millis(250);
/// After a window's end, how long the cutter waits for its session's writers to say
/// they wrote past it before it cuts anyway (a source that fell silent says nothing).
const QUIET_WAIT: Duration = Duration::from_secs(10);

/// The thread that cuts incidents.
pub struct Cutter(Worker);

impl Cutter {
    /// Starts cutting the incidents of `sessions`' catalog.
    pub fn start(sessions: Arc<Sessions>) -> Self {
        Self(Worker::start(
            "recd-incidents",
            "cutting incidents",
            move |stop| Cutting { sessions, stop }.run(),
        ))
    }

    /// Stops cutting; a cut under way leaves nothing and is made after the next start.
    pub fn stop(self) {
        self.0.stop();
    }
}

struct Cutting {
    sessions: Arc<Sessions>,
    stop: Arc<AtomicBool>,
}

impl Cutting {
    fn run(self) {
        if let Err(refused) = crate::background::lower_to_background() {
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
            if let Some(why) = self.sessions.background_hold() {
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
        let dir = self.sessions.incidents_dir();
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

    /// Ends the pins that are over, and says so.
    fn release_due(&self) {
        let catalog = self.sessions.shared_catalog();
        let released = catalog
            .lock()
            .expect("catalog lock")
            .release_due(now_ns().max(0) as u64);
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
        let waiting = self
            .sessions
            .shared_catalog()
            .lock()
            .expect("catalog lock")
            .incidents_to_cut();
        let waiting = match waiting {
            Ok(waiting) => waiting,
            Err(error) => {
                tracing::error!("cannot read the incidents to cut: {error}");
                return Vec::new();
            }
        };
        let now = now_ns().max(0) as u64;
        waiting
            .into_iter()
            .filter_map(|(key, _, end_ns)| {
                if now < end_ns {
                    return None;
                }
                match self.sessions.written_until(key.session) {
                    // Its session stopped: everything it wrote is in its files.
                    None => Some((key, self.sessions.config().recording.finish)),
                    Some((written, finish)) => {
                        let written = written.is_some_and(|until| until >= end_ns);
                        let quiet = now >= end_ns + QUIET_WAIT.as_nanos() as u64;
                        (written || quiet).then_some((key, finish))
                    }
                }
            })
            .collect()
    }

    /// Cuts incident `key` into one file per source family of its session.
    fn cut(&self, key: &IncidentKey, finish: FinishMode) {
        let catalog = self.sessions.shared_catalog();
        let found = {
            let catalog = catalog.lock().expect("catalog lock");
            catalog.incident(key).and_then(|incident| match incident {
                Some(incident) => {
                    let files = catalog.files_overlapping(
                        key.session,
                        incident.start_ns,
                        incident.end_ns,
                    )?;
                    let config = catalog
                        .session_by_name(&incident.session)?
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
        let mut made = Vec::new();
        for (family, inputs) in &families {
            match self.cut_family(&incident, family, inputs, finish) {
                Ok(Some(file)) => made.push(file),
                Ok(None) => {}
                Err(why) => {
                    for (path, _, _) in &made {
                        let _ = std::fs::remove_file(path);
                    }
                    if self.stop.load(Ordering::Relaxed) {
                        return;
                    }
                    tracing::warn!(
                        id = key.id,
                        session = incident.session,
                        "cannot cut the incident: {why}; its files stay pinned"
                    );
                    let _ = catalog.lock().expect("catalog lock").set_cut(
                        key,
                        CutState::Failed,
                        Some(&why),
                    );
                    return;
                }
            }
        }
        {
            let catalog = catalog.lock().expect("catalog lock");
            let recorded = made.iter().try_for_each(|(path, bytes, messages)| {
                catalog.add_cut_file(
                    key,
                    path,
                    (*bytes, *messages),
                    (incident.start_ns, incident.end_ns),
                )
            });
            let result = recorded.and_then(|()| catalog.set_cut(key, CutState::Cut, None));
            if let Err(error) = result {
                tracing::error!(id = key.id, "cannot record the incident's cut: {error}");
                return;
            }
        }
        for (path, bytes, messages) in &made {
            tracing::info!(
                id = key.id,
                session = incident.session,
                file = %path.display(),
                bytes,
                messages,
                seconds = format!("{:.1}", started.elapsed().as_secs_f64()),
                "incident cut"
            );
            self.sessions.queue_cut_upload(&incident, path, *messages);
            self.sessions.sign_cut(&incident.session, path);
        }
        if made.is_empty() {
            tracing::warn!(
                id = key.id,
                session = incident.session,
                "the incident's window holds no message of its session: no file cut"
            );
        }
    }

    /// Cuts `inputs` (one source family) into the incident's file for `family`: its path,
    /// bytes and messages, or `None` when the window holds none of them.
    fn cut_family(
        &self,
        incident: &Incident,
        family: &str,
        inputs: &[PathBuf],
        finish: FinishMode,
    ) -> Result<Option<(PathBuf, u64, u64)>, String> {
        let data_dir = &self.sessions.config().data_dir;
        let sealing = self.sessions.sealing().cloned();
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
            std::fs::create_dir_all(dir)
                .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        }
        let record = IncidentRecord {
            id: incident.id.clone(),
            note: incident.note.clone(),
            origin: incident.origin.clone(),
            time_ns: incident.time_ns,
            before_ns: incident.time_ns.saturating_sub(incident.start_ns),
            after_ns: incident.end_ns.saturating_sub(incident.time_ns),
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
            ..CutOptions::default()
        };
        let window = CutWindow {
            start_ns: incident.start_ns,
            end_ns: incident.end_ns,
        };
        let report =
            recd_storage::cut(inputs, window, &output, &options).map_err(|e| e.to_string())?;
        for input in &report.inputs {
            if let Some(fallback) = &input.fallback {
                tracing::warn!(file = %input.path.display(), "the incident's cut scanned the file: {fallback}");
            }
        }
        if report.messages == 0 {
            let _ = std::fs::remove_file(&output);
            return Ok(None);
        }
        Ok(Some((
            output,
            report.output_bytes,
            report.messages + report.latched,
        )))
    }

    /// Holds the cut's reads to the background pace, and waits while the background
    /// policy keeps background work off.
    fn pace(&self) -> recd_storage::Pace {
        let sessions = self.sessions.clone();
        let stop = self.stop.clone();
        let paced = Mutex::new(Paced::default());
        Arc::new(move |bytes: u64| {
            let delay = paced
                .lock()
                .expect("pace lock")
                .delay_for(sessions.background_pace(), bytes);
            if let Some(delay) = delay {
                std::thread::sleep(delay);
            }
            while sessions.background_hold().is_some() && !stop.load(Ordering::Relaxed) {
                std::thread::sleep(LOOK_EVERY);
            }
        })
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
