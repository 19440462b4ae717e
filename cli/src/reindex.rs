//! `rec reindex`: a chunked, indexed copy of an unindexed or damaged MCAP file.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use clap::{Args, ValueEnum};
use recd_ros2::msgdef::MessageDefinitions;
use recd_storage::{Compression, ReindexError, ReindexOptions, ReindexReport};

use crate::format;
use crate::output::outln;

/// Exit status when the input was damaged and the output holds everything recoverable.
const EXIT_DAMAGED: u8 = 3;
/// Exit status after Ctrl-C.
const EXIT_INTERRUPTED: u8 = 130;

/// Index and compress MCAP files; recover cut ones.
///
/// The result is chunked and fully indexed (message and chunk indexes, statistics,
/// CRCs), optionally zstd-compressed.
///
/// Reads the input from its start and keeps every complete record, stopping cleanly at a
/// truncated or corrupt tail (a crash, a cut copy). The result is written beside its
/// destination and renamed into place only once complete: without -o it replaces FILE
/// then, never before. Ctrl-C leaves the input untouched and no stray files.
///
/// Given a session name instead of a file, reindexes every file of that session (from
/// recd's catalog) in place, and recd marks them complete.
///
/// A file recd is still writing (it holds the file's lock), or a session still
/// recording, is refused: stop the session first.
///
/// Exit status: 0 when nothing was lost, 3 when the input was damaged and the output holds
/// everything recoverable, 1 on failure (the input is untouched).
#[derive(Debug, Args)]
pub struct ReindexArgs {
    /// The MCAP file to reindex, or the name of a recd session.
    #[arg(value_name = "FILE|SESSION", add = crate::complete::sessions_or_paths())]
    file: PathBuf,
    /// Write the result here instead of replacing FILE: a file, or a directory to write a
    /// file of FILE's name into (not with a session).
    #[arg(short, long, value_name = "OUT")]
    output: Option<PathBuf>,
    /// How to compress chunks.
    #[arg(long, value_enum, default_value_t = CompressionArg::Zstd)]
    compression: CompressionArg,
    /// The compressor's level (zstd 1-22, lz4 1-12); 0 is its default.
    #[arg(long, value_name = "N", default_value_t = 0)]
    level: u32,
    /// Uncompressed size of a chunk, e.g. 4MiB.
    #[arg(long, value_name = "SIZE", default_value = "4MiB", value_parser = format::parse_size)]
    chunk_size: u64,
    /// Threads that compress chunks, each its own (0: one per core; 1: on the reading
    /// thread). Chunks are written in order whatever the number.
    #[arg(long, value_name = "N", default_value_t = 0)]
    threads: u32,
    /// Fill in ROS 2 message definitions the recording lacks (recorded where no `.msg`
    /// files were) from `.msg` files under DIR (`DIR/<pkg>/msg/<Type>.msg` or
    /// `DIR/share/<pkg>/msg/<Type>.msg`); repeatable, searched in order, then the prefixes
    /// of AMENT_PREFIX_PATH.
    #[arg(long = "msg-path", value_name = "DIR")]
    msg_path: Vec<PathBuf>,
    /// Print the report as one JSON object.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    pub socket: crate::socket::SocketArg,
}

/// Where missing ROS 2 definitions are looked for: `--msg-path` directories, then
/// AMENT_PREFIX_PATH; none when neither is given.
fn message_definitions(msg_path: &[PathBuf]) -> Option<MessageDefinitions> {
    let definitions = MessageDefinitions::with_ament_prefix_path(msg_path.to_vec());
    (!definitions.dirs().is_empty()).then_some(definitions)
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum CompressionArg {
    /// Chunks stored uncompressed.
    None,
    /// Chunks compressed with zstd.
    Zstd,
    /// Chunks compressed with lz4: faster, larger.
    Lz4,
}

pub fn run(socket: &Path, args: &ReindexArgs) -> Result<ExitCode, String> {
    if args.chunk_size == 0 {
        return Err("--chunk-size must be larger than 0".into());
    }
    let most = match args.compression {
        CompressionArg::None => 0,
        CompressionArg::Zstd => 22,
        CompressionArg::Lz4 => 12,
    };
    if args.level > most {
        return Err(match args.compression {
            CompressionArg::None => "--level needs --compression zstd or lz4".to_string(),
            _ => format!("--level {} is beyond the compressor's {most}", args.level),
        });
    }
    let cancel = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&cancel);
    ctrlc::set_handler(move || flag.store(true, Ordering::Relaxed))
        .map_err(|e| format!("cannot install the Ctrl-C handler: {e}"))?;

    let options = ReindexOptions {
        compression: match args.compression {
            CompressionArg::None => Compression::None,
            CompressionArg::Zstd => Compression::Zstd,
            CompressionArg::Lz4 => Compression::Lz4,
        },
        level: args.level,
        chunk_size: args.chunk_size,
        threads: args.threads,
        message_definitions: message_definitions(&args.msg_path),
    };
    let looks_like_file = args.file.exists() || crate::files::names_a_path(&args.file);
    if looks_like_file {
        crate::files::refuse_sealed(std::slice::from_ref(&args.file))?;
        let output = output_path(&args.file, args.output.as_deref());
        let (code, report) = reindex_file(&args.file, &output, &options, &cancel)?;
        if let Some(report) = report {
            if args.json {
                crate::output::print_json(&report)?;
            } else {
                print_report(&args.file, &report);
            }
            if output == args.file {
                renew_bag_of(&output);
            }
        }
        return Ok(code);
    }
    // Not a file: a session name.
    if args.output.is_some() {
        return Err("-o cannot be used with a session; its files are reindexed in place".into());
    }
    let name = args.file.to_string_lossy();
    let files = crate::files::session_files(socket, &name)?;
    if files.is_empty() {
        return Err(format!("session {name} has no files"));
    }
    // Refuse before touching any file: a recording session's closed files would be
    // reindexed while its current one is still being written.
    if files
        .iter()
        .any(|file| recd_storage::is_being_recorded(file).unwrap_or(false))
    {
        return Err(format!(
            "session {name} is still recording; stop it first (rec stop {name}), then reindex it"
        ));
    }
    let mut worst = ExitCode::SUCCESS;
    // With --json, one document: the reports of every file, in order.
    let mut reports = Vec::new();
    for file in &files {
        let (code, report) = reindex_file(file, file, &options, &cancel)?;
        if let Some(report) = report {
            if !args.json {
                print_report(file, &report);
            }
            crate::request::ask(
                socket,
                &recd_control::Request::Reindexed {
                    path: file.clone(),
                    bytes: report.output_bytes,
                    messages: report.messages,
                },
            )?;
            reports.push(report);
        }
        if code != ExitCode::SUCCESS {
            worst = code;
        }
        if cancel.load(Ordering::Relaxed) {
            break;
        }
    }
    if args.json {
        crate::output::print_json(&reports)?;
    }
    if let Some(dir) = files.first().and_then(|f| f.parent()) {
        renew_bag_metadata(dir, &files);
    }
    Ok(worst)
}

/// After a file was reindexed in place: renews its directory's rosbag2 metadata.yaml, if
/// the directory is a bag (every `.mcap` in it, in name order, as recd names its splits).
fn renew_bag_of(file: &Path) {
    let Some(dir) = file.parent() else { return };
    if !dir.join(recd_ros2::bag::METADATA_FILE).exists() {
        return;
    }
    if let Ok(files) = crate::files::mcap_files_in(dir) {
        renew_bag_metadata(dir, &files);
    }
}

/// Writes `dir`'s metadata.yaml from `files`; a failure is told, not fatal (the files
/// themselves are reindexed).
fn renew_bag_metadata(dir: &Path, files: &[PathBuf]) {
    if let Err(error) = recd_storage::refresh_bag_metadata(dir, files) {
        eprintln!("rec: {error}");
    }
}

/// Where a file's reindexed copy goes: `output` itself, or the file's name inside it
/// when it is a directory (or ends with `/`); the file itself without one.
fn output_path(file: &Path, output: Option<&Path>) -> PathBuf {
    match output {
        None => file.to_path_buf(),
        Some(output) => {
            let names_a_directory =
                output.is_dir() || output.as_os_str().as_encoded_bytes().ends_with(b"/");
            match file.file_name() {
                Some(name) if names_a_directory => output.join(name),
                _ => output.to_path_buf(),
            }
        }
    }
}

/// Reindexes one file; returns the exit status and, when the output was written, the
/// report (the caller prints it).
fn reindex_file(
    input: &Path,
    output: &Path,
    options: &ReindexOptions,
    cancel: &AtomicBool,
) -> Result<(ExitCode, Option<ReindexReport>), String> {
    let bar = progress_bar();
    let mut progress = |done: u64, total: u64| {
        if let Some(bar) = &bar {
            bar.set_length(total);
            bar.set_position(done);
        }
    };
    let result = recd_storage::reindex(input, output, options, &mut progress, cancel);
    if let Some(bar) = &bar {
        bar.finish_and_clear();
    }
    match result {
        Ok(report) => {
            let code = if report.lost_nothing() {
                ExitCode::SUCCESS
            } else {
                ExitCode::from(EXIT_DAMAGED)
            };
            Ok((code, Some(report)))
        }
        Err(error @ ReindexError::Interrupted { .. }) => {
            eprintln!("rec: {error}");
            Ok((ExitCode::from(EXIT_INTERRUPTED), None))
        }
        Err(ReindexError::BeingRecorded { path }) => Err(match session_of(&path) {
            Some(session) => format!(
                "{} is still being recorded by session {session}; stop it first (rec stop {session}), then reindex it",
                path.display()
            ),
            None => format!(
                "{} is still being recorded; stop its recording first, then reindex it",
                path.display()
            ),
        }),
        Err(error) => Err(error.to_string()),
    }
}

/// The session a recorded file belongs to: recd writes each session's files into a
/// directory named after it.
fn session_of(file: &Path) -> Option<String> {
    let dir = std::fs::canonicalize(file)
        .ok()?
        .parent()?
        .file_name()?
        .to_owned();
    Some(dir.to_string_lossy().into_owned())
}

fn progress_bar() -> Option<indicatif::ProgressBar> {
    if !std::io::stderr().is_terminal() {
        return None;
    }
    let bar = indicatif::ProgressBar::new(0);
    let style = indicatif::ProgressStyle::with_template(
        "{bar:40} {bytes}/{total_bytes} {bytes_per_sec} eta {eta}",
    )
    .ok()?;
    bar.set_style(style);
    Some(bar)
}

fn print_report(input: &std::path::Path, report: &ReindexReport) {
    outln!(
        "reindexed {} → {}: {} messages, {} → {}",
        input.display(),
        report.output.display(),
        report.messages,
        format::bytes(report.input_bytes),
        format::bytes(report.output_bytes)
    );
    if !report.input_was_closed && report.damage.is_none() {
        outln!("the input had not been closed cleanly, but every record in it was complete");
    }
    if let Some(damage) = &report.damage {
        outln!(
            "damaged input: readable records end at offset {} ({}); the last {} could not be used",
            damage.offset,
            damage.reason,
            format::bytes(report.unusable_bytes)
        );
    }
    if report.crc_mismatch {
        outln!(
            "damaged input: its data-section CRC does not match, so some record was altered in place; all records were kept as found"
        );
    }
    if report.skipped_private_records > 0 {
        outln!(
            "left out {} private records (opcode ≥ 0x80)",
            report.skipped_private_records
        );
    }
    if !report.definitions_added.is_empty() {
        outln!(
            "message definitions added: {}",
            report.definitions_added.join(", ")
        );
    }
    for missing in &report.definitions_missing {
        outln!("still without a message definition: {missing}");
    }
}
