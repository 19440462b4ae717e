//! Finishing files in the background (`[recording] finish`): each closed file of a session
//! that asks for it is reindexed in place — chunked, indexed, compressed if asked — on
//! one thread in SCHED_BATCH and the idle I/O class, one file at a time in the order they
//! closed, as the background policy allows ([`FinishGate`]).

mod gate;
mod job;

pub use gate::FinishGate;
pub use job::{compression_of, compression_threads};

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use recd_catalog::{Catalog, File};
use recd_control::FinishMode;
use recd_upload::Yielding;

use crate::background::Worker;
use crate::files::FileLife;
use crate::locks::lock;
use crate::signing::Signing;
use job::Outcome;

/// How long finishing sleeps when there is nothing to do or it must wait.
const IDLE: Duration = Duration::from_millis(250);
/// Bytes read between two turns at giving way (the pace, a hold).
const PACED_STEP: u64 = 1 << 20;
/// How often a reindex under way gives way at least (asks the gate whether to pause).
const CHECK_EVERY: Duration = Duration::from_millis(100);

/// The thread that finishes files.
pub struct Finisher(Worker);

impl Finisher {
    /// Starts finishing the files `catalog` has waiting, as `gate` allows, keeping
    /// `min_free_space` free beside the copy it writes, each put in its file's place
    /// through `files`; sealed files are read with the keys `sealing` kept and sealed
    /// again under fresh ones. A file is finished only once it entered its session's
    /// chain through `signing`, if any.
    pub fn start(
        catalog: Arc<Mutex<Catalog>>,
        files: Arc<FileLife>,
        gate: Arc<FinishGate>,
        min_free_space: u64,
        sealing: Option<recd_storage::Sealing>,
        signing: Option<Arc<Signing>>,
    ) -> Self {
        Self(Worker::start(
            "recd-finish",
            "finishing files",
            move |stop| {
                Finishing {
                    catalog,
                    files,
                    gate,
                    min_free_space,
                    sealing,
                    stop,
                    told_space: false,
                    signing,
                }
                .run()
            },
        ))
    }

    /// Stops finishing; a file under way is left as it was and is finished after the
    /// next start.
    pub fn stop(self) {
        self.0.stop();
    }
}

struct Finishing {
    catalog: Arc<Mutex<Catalog>>,
    files: Arc<FileLife>,
    gate: Arc<FinishGate>,
    min_free_space: u64,
    sealing: Option<recd_storage::Sealing>,
    stop: Arc<AtomicBool>,
    told_space: bool,
    signing: Option<Arc<Signing>>,
}

impl Finishing {
    fn run(mut self) {
        if let Err(refused) = recd_priority::lower_to_background() {
            tracing::warn!("finishing runs at normal priority: the kernel refused {refused}");
        }
        for (file, _) in self.waiting() {
            job::remove_leftovers(&file.path);
        }
        let mut told_hold = false;
        // Whether files were finished since the memory was last given back.
        let mut finished_some = false;
        while !self.stopping() {
            if let Some(why) = self.gate.hold() {
                if !told_hold && !self.waiting().is_empty() {
                    tracing::info!("finishing files waits: {why}");
                    told_hold = true;
                }
                std::thread::sleep(IDLE);
                continue;
            }
            told_hold = false;
            let Some((file, mode)) = self.waiting().into_iter().next() else {
                if std::mem::take(&mut finished_some) {
                    // A file's index and compression buffers, freed, stay resident else.
                    recd_engine::give_back_freed_memory();
                }
                std::thread::sleep(IDLE);
                continue;
            };
            if !self.room_for(&file) {
                std::thread::sleep(IDLE * 8);
                continue;
            }
            if !self.finish(&file, mode) {
                return;
            }
            finished_some = true;
        }
    }

    fn stopping(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }

    fn waiting(&self) -> Vec<(File, FinishMode)> {
        let waiting = lock(&self.catalog).waiting_to_finish();
        waiting.unwrap_or_else(|error| {
            tracing::error!("finishing cannot read the catalog: {error}");
            Vec::new()
        })
    }

    /// Whether the file system has room for the copy beside `min_free_space`.
    fn room_for(&mut self, file: &File) -> bool {
        let dir = file.path.parent().unwrap_or(&file.path);
        let Ok(space) = recd_storage::space_of(dir) else {
            return true;
        };
        let needed = self.min_free_space + file.bytes;
        let room = space.available >= needed;
        if !room && !self.told_space {
            tracing::warn!(
                file = %file.path.display(),
                "finishing waits for space: {} free, {} needed (min_free_space plus the file)",
                bytesize::ByteSize::b(space.available),
                bytesize::ByteSize::b(needed)
            );
        }
        self.told_space = !room;
        room
    }

    /// Finishes `file`; false when recd is stopping.
    fn finish(&self, file: &File, mode: FinishMode) -> bool {
        tracing::info!(file = %file.path.display(), mode = %mode, "finishing the file");
        let started = Instant::now();
        let mut paused = Duration::ZERO;
        let mut turned = Instant::now();
        let mut yielding = Yielding::default();
        let mut read = 0;
        let mut progress = |done: u64, _: u64| {
            // A turn a MiB at a time, or every so often: progress comes with every message.
            let since = done.saturating_sub(read);
            if since < PACED_STEP && turned.elapsed() < CHECK_EVERY {
                return;
            }
            read = done;
            turned = Instant::now();
            paused += yielding.wait_turn(since, &*self.gate, &self.stop, &mut |told| match told {
                Some(why) => {
                    tracing::info!(file = %file.path.display(), "finishing paused: {why}")
                }
                None => tracing::info!(file = %file.path.display(), "finishing goes on"),
            });
        };
        if let Some(signing) = &self.signing {
            signing.settle(&file.path, &self.stop);
        }
        let outcome = job::finish(
            &self.files,
            file,
            mode,
            self.sealing.as_ref(),
            &mut progress,
            &self.stop,
        );
        let catalog = lock(&self.catalog);
        match outcome {
            Outcome::Indexed { bytes } => {
                let working = started.elapsed().saturating_sub(paused).as_secs_f64();
                tracing::info!(
                    file = %file.path.display(),
                    mode = %mode,
                    bytes,
                    seconds = format!("{working:.1}"),
                    mb_per_s = format!("{:.0}", file.bytes as f64 / working.max(1e-3) / 1e6),
                    "finished: indexed in place"
                );
            }
            Outcome::Gone => {
                let _ = catalog.set_finish(&file.path, None, crate::clock::now_ns());
            }
            Outcome::Interrupted => return false,
            Outcome::Failed(why) => {
                tracing::warn!(file = %file.path.display(), "cannot finish the file; it stays as recorded: {why}");
                let _ = catalog.set_finish(&file.path, None, crate::clock::now_ns());
            }
        }
        true
    }
}
