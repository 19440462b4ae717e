//! `recd-cut-bench`: what `scripts/bench-cut` runs. `make` writes a recording of a given
//! size, finished (chunked, indexed), streamed and closed, or streamed and left open;
//! `plan` prints the byte range a cut of a window must read (the chunks that overlap it,
//! or the window's message records in an unfinished file), which `dd` is timed on; `cut`
//! cuts the window and prints what it read; `hold` keeps an open file's writer and its
//! checkpoints, as recd does while recording, and cuts it on request.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use clap::{Parser, Subcommand, ValueEnum};
use recd_storage::{
    CheckpointBook, CutOptions, LogWindow, MessageHeader, ReindexOptions, StreamWriter,
    WriterOptions,
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
    /// map, streamed, then as `layout` says.
    Make {
        file: PathBuf,
        mib: u64,
        #[arg(long, value_enum, default_value_t = Layout::Finished)]
        layout: Layout,
    },
    /// The window from `from` to `to` (fractions of the recording's span) and the byte
    /// range a cut of it must read: `START_NS END_NS FIRST_BYTE BYTES WINDOW_BYTES`, the
    /// last the bytes of the chunks that overlap it (a finished file) or of its message
    /// records (an unfinished one).
    Plan { file: PathBuf, from: f64, to: f64 },
    /// Write FILE as `make --layout open` does, keeping its writer's checkpoints in a
    /// checkpoint book as recd does, and stay: answer each line `OUT START_NS END_NS
    /// book|scan` read from stdin with a cut of FILE (with the book, or without it) as
    /// `cut` does, until stdin closes. Prints `ready` once FILE is written.
    Hold { file: PathBuf, mib: u64 },
    /// Cut [start_ns, end_ns] of FILE into OUT: `BYTES_READ MESSAGES SECONDS`.
    Cut {
        file: PathBuf,
        out: PathBuf,
        start_ns: u64,
        end_ns: u64,
    },
}

/// What `make` leaves.
#[derive(Clone, Copy, Debug, ValueEnum)]
enum Layout {
    /// Reindexed in place: uncompressed, 4 MiB chunks, with chunk and message indexes.
    Finished,
    /// Closed as recorded: unchunked, with a summary but no chunk indexes.
    Streamed,
    /// Left open, as the file still being recorded: no DataEnd, no summary.
    Open,
}

const T0: u64 = 1_700_000_000_000_000_000;

fn main() -> ExitCode {
    let result = match Cli::parse().command {
        Cmd::Make { file, mib, layout } => make(&file, mib, layout, None).map(drop),
        Cmd::Hold { file, mib } => hold(&file, mib),
        Cmd::Plan { file, from, to } => plan(&file, from, to),
        Cmd::Cut {
            file,
            out,
            start_ns,
            end_ns,
        } => cut(file, &out, start_ns, end_ns, None),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("recd-cut-bench: {error}");
            ExitCode::FAILURE
        }
    }
}

/// Writes the recording; gives back the writer of a file left open.
fn make(
    file: &std::path::Path,
    mib: u64,
    layout: Layout,
    checkpoints: Option<CheckpointBook>,
) -> Result<Option<StreamWriter>, Box<dyn std::error::Error>> {
    let options = WriterOptions {
        checkpoints,
        ..WriterOptions::default()
    };
    let mut writer = StreamWriter::create(file, options)?;
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
    if let Layout::Open = layout {
        writer.flush()?;
        return Ok(Some(writer));
    }
    writer.close()?;
    if let Layout::Finished = layout {
        let options = ReindexOptions::default();
        let cancel = std::sync::atomic::AtomicBool::new(false);
        recd_storage::reindex(file, file, &options, &mut |_, _| {}, &cancel)?;
    }
    Ok(None)
}

fn hold(file: &std::path::Path, mib: u64) -> Result<(), Box<dyn std::error::Error>> {
    let book = CheckpointBook::default();
    let _writer = make(file, mib, Layout::Open, Some(book.clone()))?;
    println!("ready");
    for line in std::io::stdin().lines() {
        let line = line?;
        let words: Vec<&str> = line.split_whitespace().collect();
        let [out, start_ns, end_ns, how] = words[..] else {
            return Err(format!("expected OUT START_NS END_NS book|scan, got {line:?}").into());
        };
        let book = (how == "book").then(|| book.clone());
        cut(
            file.to_path_buf(),
            out.as_ref(),
            start_ns.parse()?,
            end_ns.parse()?,
            book,
        )?;
    }
    Ok(())
}

fn plan(file: &std::path::Path, from: f64, to: f64) -> Result<(), Box<dyn std::error::Error>> {
    let bytes = std::fs::read(file)?;
    let summary = match mcap::Summary::read(&bytes) {
        Ok(Some(summary)) if !summary.chunk_indexes.is_empty() => summary,
        _ => return plan_unfinished(&bytes, from, to),
    };
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

/// [`plan`] of an unfinished file: the range from the first to the last message record of
/// the window, found by walking the records.
fn plan_unfinished(bytes: &[u8], from: f64, to: f64) -> Result<(), Box<dyn std::error::Error>> {
    // (record offset, record end, log time) of each message
    let mut messages = Vec::new();
    let mut at = 8usize;
    while let Some(prefix) = bytes.get(at..at + 9) {
        let len = u64::from_le_bytes(prefix[1..].try_into()?) as usize;
        let end = at + 9 + len;
        let Some(body) = bytes.get(at + 9..end) else {
            break;
        };
        match prefix[0] {
            mcap::records::op::MESSAGE => {
                let log_time = u64::from_le_bytes(body[6..14].try_into()?);
                messages.push((at as u64, end as u64, log_time));
            }
            mcap::records::op::DATA_END => break,
            _ => {}
        }
        at = end;
    }
    let first = messages.iter().map(|m| m.2).min().ok_or("no message")?;
    let last = messages.iter().map(|m| m.2).max().ok_or("no message")?;
    let span = (last - first) as f64;
    let start = first + (span * from) as u64;
    let end = first + (span * to) as u64;
    let window: Vec<_> = messages
        .iter()
        .filter(|m| (start..=end).contains(&m.2))
        .collect();
    let range_start = window.iter().map(|m| m.0).min().ok_or("no message")?;
    let range_end = window.iter().map(|m| m.1).max().ok_or("no message")?;
    let window_bytes: u64 = window.iter().map(|m| m.1 - m.0).sum();
    println!(
        "{start} {end} {range_start} {} {window_bytes}",
        range_end - range_start
    );
    Ok(())
}

fn cut(
    file: PathBuf,
    out: &std::path::Path,
    start_ns: u64,
    end_ns: u64,
    checkpoints: Option<CheckpointBook>,
) -> Result<(), Box<dyn std::error::Error>> {
    let began = Instant::now();
    let window = LogWindow { start_ns, end_ns };
    let options = CutOptions {
        checkpoints,
        ..CutOptions::default()
    };
    let report = recd_storage::cut(&[file], window, out, &options)?;
    let seconds = began.elapsed().as_secs_f64();
    println!(
        "{} {} {seconds:.3}",
        report.inputs[0].bytes_read, report.messages
    );
    Ok(())
}
