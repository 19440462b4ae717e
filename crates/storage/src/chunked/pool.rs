//! Threads that encode chunks while the reader goes on; results come back in the order
//! the chunks were handed over, because each carries its own reply channel.

use std::io;
use std::sync::{mpsc, Arc, Mutex};
use std::thread::JoinHandle;

use super::builder::RawChunk;
use super::encode::{ChunkEncoder, EncodedChunk};
use crate::compression::Compression;

type Reply = io::Result<EncodedChunk>;

struct Job {
    chunk: RawChunk,
    reply: mpsc::SyncSender<Reply>,
}

/// A chunk handed to [`EncoderPool::submit`]: encoded already, or still on a thread.
pub(super) enum Encoding {
    Done(Reply),
    Running(mpsc::Receiver<Reply>),
}

impl Encoding {
    /// The encoded chunk, once its thread is done with it.
    pub fn wait(self) -> Reply {
        match self {
            Encoding::Done(reply) => reply,
            Encoding::Running(receiver) => receiver
                .recv()
                .unwrap_or_else(|_| Err(io::Error::other("a chunk compression thread stopped"))),
        }
    }
}

/// Encodes chunks on `threads` threads, or on the caller's when one would do.
pub(super) struct EncoderPool {
    jobs: Option<mpsc::Sender<Job>>,
    workers: Vec<JoinHandle<()>>,
    inline: Option<ChunkEncoder>,
}

impl EncoderPool {
    /// A pool for `compression` at `level`. Uncompressed chunks only need a CRC, so they
    /// are encoded inline whatever `threads` says, as they are with `threads` ≤ 1.
    pub fn new(compression: Compression, level: u32, threads: usize) -> io::Result<Self> {
        if threads <= 1 || compression == Compression::None {
            return Ok(Self {
                jobs: None,
                workers: Vec::new(),
                inline: Some(ChunkEncoder::new(compression, level)?),
            });
        }
        let (sender, receiver) = mpsc::channel::<Job>();
        let receiver = Arc::new(Mutex::new(receiver));
        let mut workers = Vec::with_capacity(threads);
        for _ in 0..threads {
            let mut encoder = ChunkEncoder::new(compression, level)?;
            let receiver = Arc::clone(&receiver);
            let worker = std::thread::Builder::new()
                .name("recd-compress".into())
                .spawn(move || loop {
                    let job = match receiver.lock() {
                        Ok(jobs) => jobs.recv(),
                        Err(_) => return,
                    };
                    let Ok(job) = job else { return };
                    // The writer may have given up on this chunk (an earlier one failed).
                    let _ = job.reply.send(encoder.encode(job.chunk));
                })?;
            workers.push(worker);
        }
        Ok(Self {
            jobs: Some(sender),
            workers,
            inline: None,
        })
    }

    /// How many chunks may be in flight before the writer waits for the oldest: enough to
    /// keep every thread busy while the reader waits for the disk.
    pub fn capacity(&self) -> usize {
        (self.workers.len() * 4).max(1)
    }

    /// Starts encoding `chunk`.
    pub fn submit(&mut self, chunk: RawChunk) -> Encoding {
        if let Some(encoder) = &mut self.inline {
            return Encoding::Done(encoder.encode(chunk));
        }
        let (reply, receiver) = mpsc::sync_channel(1);
        let job = Job { chunk, reply };
        match self.jobs.as_ref().map(|jobs| jobs.send(job)) {
            Some(Ok(())) => Encoding::Running(receiver),
            _ => Encoding::Done(Err(io::Error::other(
                "the chunk compression threads stopped",
            ))),
        }
    }
}

impl Drop for EncoderPool {
    fn drop(&mut self) {
        self.jobs = None;
        for worker in self.workers.drain(..) {
            let _ = worker.join();
        }
    }
}
