//! `recd-cut-bench`: what `scripts/bench-cut` runs. `make` writes a finished (chunked,
//! indexed) recording of a given size; `plan` prints the byte range of the chunks that
//! overlap a window (what a cut of it must read, and what `dd` is timed on); `cut` cuts
//! the window and prints what it read.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use clap::{Parser, Subcommand};
use recd_storage::{
    CutOptions, CutWindow, MessageHeader, ReindexOptions, StreamWriter, WriterOptions,
};

/// Makes a finished file, plans a window of it, cuts it.
#[derive(Parser, Debug)]
#[command(name = "recd-cut-bench")]
struct Cli {
    #[command(subcommand)]
    command: Cmd,
}

#[derive(Subcommand, Debug)]
enum Cmd {
    /// Write FILE: `mib` MiB of a 30 Hz camera (1 MiB frames), a 1 kHz IMU and a latched
    /// map, streamed, then reindexed in place (uncompressed, 4 MiB chunks).
    Make { file: PathBuf, mib: u64 },
    /// The window from `from` to `to` (fractions of the recording's span) and the chunks
    /// that overlap it: `START_NS END_NS FIRST_BYTE BYTES CHUNK_BYTES`.
    Plan { file: PathBuf, from: f64, to: f64 },
    /// Cut [start_ns, end_ns] of FILE into OUT: `BYTES_READ MESSAGES SECONDS`.
    Cut {
        file: PathBuf,
        out: PathBuf,
        start_ns: u64,
        end_ns: u64,
    },
}

const T0: u64 = 1_700_000_000_000_000_000;

fn main() -> ExitCode {
    let result = match Cli::parse().command {
        Cmd::Make { file, mib } => make(&file, mib),
        Cmd::Plan { file, from, to } => plan(&file, from, to),
        Cmd::Cut {
            file,
            out,
            start_ns,
            end_ns,
        } => cut(file, &out, start_ns, end_ns),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("recd-cut-bench: {error}");
            ExitCode::FAILURE
        }
    }
}

fn make(file: &std::path::Path, mib: u64) -> Result<(), Box<dyn std::error::Error>> {
    let mut writer = StreamWriter::create(file, WriterOptions::default())?;
    let none = BTreeMap::new();
    let camera = writer.add_channel(None, "/camera", "raw", &none)?;
    let imu = writer.add_channel(None, "/imu", "raw", &none)?;
    let latched = BTreeMap::from([(
        recd_storage::iceoryx2::HISTORY_SIZE.to_string(),
        "1".to_string(),
    )]);
    let map = writer.add_channel(None, "/map", "raw", &latched)?;
    let frame: Vec<u8> = (0..1 << 20)
        .map(|i: u32| (i.wrapping_mul(2_654_435_761) >> 24) as u8)
        .collect();
    let sample = [7u8; 256];
    let ms = 1_000_000u64;
    let mut t = 0u64;
    let mut frames = 0u32;
    while writer.bytes_written() < mib << 20 {
        t += 1;
        let log_time = T0 + t * ms;
        let header = |channel, sequence| MessageHeader {
            channel,
            sequence,
            log_time,
            publish_time: log_time,
        };
        writer.write_message(&header(imu, t as u32), &sample)?;
        if t.is_multiple_of(33) {
            writer.write_message(&header(camera, frames), &frame)?;
            frames += 1;
        }
        if t.is_multiple_of(5000) {
            writer.write_message(&header(map, (t / 5000) as u32), &sample)?;
        }
    }
    writer.close()?;
    let options = ReindexOptions::default();
    let cancel = std::sync::atomic::AtomicBool::new(false);
    recd_storage::reindex(file, file, &options, &mut |_, _| {}, &cancel)?;
    Ok(())
}

fn plan(file: &std::path::Path, from: f64, to: f64) -> Result<(), Box<dyn std::error::Error>> {
    let bytes = std::fs::read(file)?;
    let summary = mcap::Summary::read(&bytes)?.ok_or("no summary")?;
    let stats = summary.stats.as_ref().ok_or("no statistics")?;
    let span = (stats.message_end_time - stats.message_start_time) as f64;
    let start = stats.message_start_time + (span * from) as u64;
    let end = stats.message_start_time + (span * to) as u64;
    let chunks: Vec<_> = summary
        .chunk_indexes
        .iter()
        .filter(|c| c.message_start_time <= end && c.message_end_time >= start)
        .collect();
    let first = chunks
        .iter()
        .map(|c| c.chunk_start_offset)
        .min()
        .ok_or("no chunk")?;
    let last = chunks
        .iter()
        .map(|c| c.chunk_start_offset + c.chunk_length)
        .max()
        .ok_or("no chunk")?;
    let chunk_bytes: u64 = chunks.iter().map(|c| c.chunk_length).sum();
    println!("{start} {end} {first} {} {chunk_bytes}", last - first);
    Ok(())
}

fn cut(
    file: PathBuf,
    out: &std::path::Path,
    start_ns: u64,
    end_ns: u64,
) -> Result<(), Box<dyn std::error::Error>> {
    let began = Instant::now();
    let window = CutWindow { start_ns, end_ns };
    let report = recd_storage::cut(&[file], window, out, &CutOptions::default())?;
    let seconds = began.elapsed().as_secs_f64();
    println!(
        "{} {} {seconds:.3}",
        report.inputs[0].bytes_read, report.messages
    );
    Ok(())
}
