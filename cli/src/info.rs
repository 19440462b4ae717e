//! `rec info`: what an MCAP file holds.

use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use recd_storage::FileInfo;

use crate::format;

/// Summarize an MCAP file: profile, duration, messages, channels, chunks, metadata.
///
/// A cleanly closed file is summarized from its footer and summary alone, however large it
/// is. A file without a summary (a crash left it open) is scanned; `rec reindex` fixes it.
#[derive(Debug, Args)]
pub struct InfoArgs {
    /// The MCAP file.
    file: PathBuf,
    /// Print one JSON object instead of text.
    #[arg(long)]
    json: bool,
}

pub fn run(args: &InfoArgs) -> Result<ExitCode, String> {
    let info = recd_storage::summarize(&args.file).map_err(|e| e.to_string())?;
    if args.json {
        let json = serde_json::to_string_pretty(&info).map_err(|e| e.to_string())?;
        println!("{json}");
    } else {
        print!("{}", render(&info));
    }
    Ok(ExitCode::SUCCESS)
}

/// A channel whose schema should carry a message definition but has none (a DDS topic
/// recorded without finding its `.msg` files).
fn lacks_definition(channel: &recd_storage::ChannelInfo) -> bool {
    matches!(
        channel.schema_encoding.as_deref(),
        Some("ros2msg" | "ros2idl" | "omgidl")
    ) && channel.schema_bytes == Some(0)
}

/// The text form of `rec info`.
pub fn render(info: &FileInfo) -> String {
    let mut out = String::new();
    let duration = info.duration_secs();
    let _ = writeln!(
        out,
        "file:        {} ({})",
        info.path.display(),
        format::bytes(info.size)
    );
    let _ = writeln!(out, "library:     {}", info.library);
    let _ = writeln!(out, "profile:     {}", info.profile);
    let _ = writeln!(out, "messages:    {}", info.message_count);
    let _ = writeln!(out, "duration:    {duration:.3} s");
    if let (Some(start), Some(end)) = (info.start_time, info.end_time) {
        let _ = writeln!(out, "start:       {} ({start})", format::timestamp(start));
        let _ = writeln!(out, "end:         {} ({end})", format::timestamp(end));
    }
    let _ = writeln!(out, "chunks:      {}", info.chunk_count);
    for c in &info.compression {
        let ratio = c.compressed_bytes as f64 / c.uncompressed_bytes.max(1) as f64;
        let name = if c.compression.is_empty() {
            "none"
        } else {
            &c.compression
        };
        let _ = writeln!(
            out,
            "  {name}: {} chunks, {} → {} ({:.1} %)",
            c.chunks,
            format::bytes(c.uncompressed_bytes),
            format::bytes(c.compressed_bytes),
            ratio * 100.0
        );
    }
    let _ = writeln!(out, "schemas:     {}", info.schema_count);
    let _ = writeln!(out, "channels:    {}", info.channels.len());
    let topic_width = info
        .channels
        .iter()
        .map(|c| c.topic.len())
        .max()
        .unwrap_or(0);
    for c in &info.channels {
        let hz = if duration > 0.0 {
            c.message_count as f64 / duration
        } else {
            0.0
        };
        let schema = match (&c.schema_name, &c.schema_encoding) {
            (Some(name), Some(encoding)) => format!("{name} [{encoding}]"),
            _ => "no schema".to_string(),
        };
        let _ = writeln!(
            out,
            "  ({:>3}) {:<topic_width$}  {:>9} msgs ({hz:>9.2} Hz)  {schema}  {}",
            c.id, c.topic, c.message_count, c.message_encoding
        );
    }
    let undefined: Vec<&str> = info
        .channels
        .iter()
        .filter(|c| lacks_definition(c))
        .map(|c| c.topic.as_str())
        .collect();
    if !undefined.is_empty() {
        let _ = writeln!(
            out,
            "topics without message definitions (readers must know their types): {}",
            undefined.join(", ")
        );
    }
    let _ = writeln!(out, "attachments: {}", info.attachment_count);
    let _ = writeln!(out, "metadata:    {}", info.metadata_count);
    if let Some(scan) = &info.scan {
        let _ = writeln!(
            out,
            "\nwarning: {} was not closed cleanly (it has no summary); these figures come from scanning it.",
            info.path.display()
        );
        if let Some(damage) = &scan.damage {
            let _ = writeln!(
                out,
                "warning: readable records end at offset {}: {}; the last {} cannot be used.",
                damage.offset,
                damage.reason,
                format::bytes(scan.unusable_bytes)
            );
        }
        if scan.crc_mismatch {
            let _ = writeln!(
                out,
                "warning: the data section's CRC does not match its bytes."
            );
        }
        let _ = writeln!(
            out,
            "`rec reindex {}` turns it into an indexed file with everything recoverable.",
            info.path.display()
        );
    }
    out
}
