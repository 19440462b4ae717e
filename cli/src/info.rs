//! `rec info`: what an MCAP file, or all files of a session, hold.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Args;
use recd_storage::FileInfo;

use crate::format;
use crate::output::out;

mod interfaces;
mod sealed;

pub use interfaces::Interfaces;
use recd_ros2::names::Interface;

/// Summarize MCAP files or a session.
///
/// The summary gives the profile, duration, messages, channels, chunks and metadata.
/// ROS 2 services and actions are listed apart from topics, as `ros2 bag info` does: a
/// service with its requests and responses (distinct calls, read from its recorded
/// introspection events), an action with its feedback and status messages and its
/// send_goal, get_result and cancel_goal calls.
/// One file gets its full summary. A session (its directory, or its name when recd
/// answers) or several files get one summary over all of them, like `ros2 bag info`,
/// then a line per file. A cleanly closed file is summarized from its footer and summary
/// alone, however large it is. A file without a summary (a crash left it open) is
/// scanned; `rec reindex` fixes it.
///
/// A sealed recording (.mcap.age) shows what it can without a key:
/// its recipients, chunks and whether it was cut short; with -i, its
/// summary, decrypted in memory (nothing is written to disk).
///
/// Exit status: 0, or 3 when a file is damaged (a crash cut it inside a record; `rec
/// reindex` recovers what is readable), as `rec reindex` exits.
#[derive(Debug, Args)]
pub struct InfoArgs {
    /// MCAP files, session directories or names of recd's sessions.
    #[arg(required = true, value_name = "FILE|DIR|SESSION", add = crate::complete::sessions_or_paths())]
    paths: Vec<PathBuf>,
    /// Print one JSON object instead of text: a file's summary for one file, else the
    /// totals with every file's summary under `files`.
    #[arg(long)]
    json: bool,
    /// Also list each topic's gaps (silences longer than its max_gap) from the files'
    /// health records.
    #[arg(long)]
    gaps: bool,
    /// For a sealed file (.age): a file of age private keys to read it
    /// with (as age-keygen writes it); repeatable.
    #[arg(short, long = "identity", value_name = "IDENTITY")]
    identity: Vec<PathBuf>,
    #[command(flatten)]
    pub socket: crate::socket::SocketArg,
}

pub fn run(socket: &Path, args: &InfoArgs) -> Result<ExitCode, String> {
    if let [single] = args.paths.as_slice() {
        if single.is_file() && crate::identity::is_sealed(single) {
            return sealed::run(single, args);
        }
    }
    if !args.identity.is_empty() {
        return Err("-i is for one sealed file (.age)".into());
    }
    if let [single] = args.paths.as_slice() {
        if single.is_file() {
            let info = summarize(single)?;
            let interfaces = interfaces::of(std::slice::from_ref(&info))?;
            let text = render(&info, &interfaces);
            return print_one(&info, &interfaces, &text, args);
        }
    }
    let mut files = Vec::new();
    for path in &args.paths {
        files.extend(crate::files::files_of(socket, path)?);
    }
    let infos = files
        .iter()
        .map(|file| summarize(file))
        .collect::<Result<Vec<_>, _>>()?;
    let totals = Totals::of(infos)?;
    if args.json {
        crate::output::print_json(&totals)?;
    } else {
        out!("{}", render_totals(&totals));
        totals
            .files
            .iter()
            .for_each(|file| print_gaps(file, args.gaps));
    }
    Ok(exit_code(&totals.files))
}

/// Prints one file's summary: as JSON, or `text` and the file's gaps; its exit status.
fn print_one(
    info: &FileInfo,
    interfaces: &Interfaces,
    text: &str,
    args: &InfoArgs,
) -> Result<ExitCode, String> {
    if args.json {
        crate::output::print_json(&FileJson { info, interfaces })?;
    } else {
        out!("{text}");
        print_gaps(info, args.gaps);
    }
    Ok(exit_code(std::slice::from_ref(info)))
}

/// Exit status when a file is damaged (a crash cut it inside a record): as `rec reindex`.
const EXIT_DAMAGED: u8 = 3;

/// 3 when a file is damaged, so that scripts can tell; else 0.
fn exit_code(files: &[FileInfo]) -> ExitCode {
    if files
        .iter()
        .any(|f| f.scan.as_ref().is_some_and(|s| s.damage.is_some()))
    {
        ExitCode::from(EXIT_DAMAGED)
    } else {
        ExitCode::SUCCESS
    }
}

/// With `--gaps`, the gaps of `info`'s health record.
fn print_gaps(info: &FileInfo, gaps: bool) {
    if let (true, Some(health)) = (gaps, &info.health) {
        out!("{}", crate::health::gap_lines(health));
    }
}

fn summarize(file: &Path) -> Result<FileInfo, String> {
    recd_storage::summarize(file).map_err(|e| e.to_string())
}

/// One file's summary with its services and actions, as `rec info --json` prints it.
#[derive(Debug, serde::Serialize)]
struct FileJson<'a> {
    #[serde(flatten)]
    info: &'a FileInfo,
    #[serde(flatten)]
    interfaces: &'a Interfaces,
}

/// A summary over several files.
#[derive(Debug, serde::Serialize)]
struct Totals {
    size: u64,
    message_count: u64,
    start_time: Option<u64>,
    end_time: Option<u64>,
    topics: Vec<TopicTotal>,
    #[serde(flatten)]
    interfaces: Interfaces,
    files: Vec<FileInfo>,
}

/// A topic over several files.
#[derive(Debug, serde::Serialize)]
struct TopicTotal {
    topic: String,
    message_count: u64,
    message_encoding: String,
    schema_name: Option<String>,
    schema_encoding: Option<String>,
    /// Some file's channel of the topic has no message definition.
    lacks_definition: bool,
}

impl Totals {
    fn of(files: Vec<FileInfo>) -> Result<Self, String> {
        let mut topics: BTreeMap<String, TopicTotal> = BTreeMap::new();
        let topic_channels = (files.iter().flat_map(|f| &f.channels))
            .filter(|channel| interfaces::interface_of(channel) == Interface::Topic);
        for channel in topic_channels {
            let total = topics
                .entry(channel.topic.clone())
                .or_insert_with(|| TopicTotal {
                    topic: channel.topic.clone(),
                    message_count: 0,
                    message_encoding: channel.message_encoding.clone(),
                    schema_name: channel.schema_name.clone(),
                    schema_encoding: channel.schema_encoding.clone(),
                    lacks_definition: false,
                });
            total.message_count += channel.message_count;
            total.lacks_definition |= lacks_definition(channel);
        }
        let mut topics: Vec<TopicTotal> = topics.into_values().collect();
        topics.sort_by(|a, b| crate::table::natural_cmp(&a.topic, &b.topic));
        Ok(Self {
            size: files.iter().map(|f| f.size).sum(),
            message_count: files.iter().map(|f| f.message_count).sum(),
            start_time: files.iter().filter_map(|f| f.start_time).min(),
            end_time: files.iter().filter_map(|f| f.end_time).max(),
            topics,
            interfaces: interfaces::of(&files)?,
            files,
        })
    }

    fn duration_secs(&self) -> f64 {
        match (self.start_time, self.end_time) {
            (Some(start), Some(end)) => end.saturating_sub(start) as f64 / 1e9,
            _ => 0.0,
        }
    }
}

/// The text form of `rec info` over several files.
fn render_totals(totals: &Totals) -> String {
    let mut out = String::new();
    let duration = totals.duration_secs();
    let _ = writeln!(
        out,
        "files:       {} ({})",
        totals.files.len(),
        format::bytes(totals.size)
    );
    write_span(
        &mut out,
        totals.message_count,
        duration,
        totals.start_time.zip(totals.end_time),
    );
    let _ = writeln!(out, "topics:      {}", totals.topics.len());
    let topic_width = totals
        .topics
        .iter()
        .map(|t| t.topic.len())
        .max()
        .unwrap_or(0);
    for t in &totals.topics {
        let _ = writeln!(
            out,
            "  {:<topic_width$}  {}",
            t.topic,
            topic_counts(
                t.message_count,
                duration,
                &t.schema_name,
                &t.schema_encoding,
                &t.message_encoding
            )
        );
    }
    write_undefined(
        &mut out,
        (totals.topics.iter())
            .filter(|t| t.lacks_definition)
            .map(|t| t.topic.as_str()),
    );
    out += &totals.interfaces.render();
    let _ = writeln!(out, "per file:");
    for file in &totals.files {
        let state = if file.scan.is_some() {
            "  not closed cleanly: rec reindex it"
        } else {
            ""
        };
        let health = file
            .health
            .as_ref()
            .map_or(String::new(), |h| format!("  health {}", h.verdict));
        let _ = writeln!(
            out,
            "  {}  {}  {} msgs  {:.3} s{health}{state}",
            file.path.display(),
            format::bytes(file.size),
            file.message_count,
            file.duration_secs()
        );
    }
    for file in &totals.files {
        if let Some(health) = &file.health {
            let _ = writeln!(out, "{}:", file.path.display());
            out += &crate::health::file_health(health);
        }
    }
    out
}

/// The message count, duration and time span lines of both summaries.
fn write_span(out: &mut String, messages: u64, duration: f64, span: Option<(u64, u64)>) {
    let _ = writeln!(out, "messages:    {messages}");
    let _ = writeln!(out, "duration:    {duration:.3} s");
    if let Some((start, end)) = span {
        let _ = writeln!(out, "start:       {} ({start})", format::timestamp(start));
        let _ = writeln!(out, "end:         {} ({end})", format::timestamp(end));
    }
}

/// A topic's line after its name: messages, their rate over `duration`, schema and
/// message encoding.
fn topic_counts(
    messages: u64,
    duration: f64,
    schema_name: &Option<String>,
    schema_encoding: &Option<String>,
    message_encoding: &str,
) -> String {
    let hz = if duration > 0.0 {
        messages as f64 / duration
    } else {
        0.0
    };
    let schema = match (schema_name, schema_encoding) {
        (Some(name), Some(encoding)) => format!("{name} [{encoding}]"),
        _ => "no schema".to_string(),
    };
    format!("{messages:>9} msgs ({hz:>9.2} Hz)  {schema}  {message_encoding}")
}

/// The line naming topics whose schema lacks its message definition, if any.
fn write_undefined<'a>(out: &mut String, topics: impl Iterator<Item = &'a str>) {
    let undefined: Vec<&str> = topics.collect();
    if !undefined.is_empty() {
        let _ = writeln!(
            out,
            "topics without message definitions (readers must know their types): {}",
            undefined.join(", ")
        );
    }
}

/// A channel whose schema should carry a message definition but has none (a DDS topic
/// recorded without finding its `.msg` files).
fn lacks_definition(channel: &recd_storage::ChannelInfo) -> bool {
    matches!(
        channel.schema_encoding.as_deref(),
        Some("ros2msg" | "ros2idl" | "omgidl")
    ) && channel.schema_bytes == Some(0)
}

/// How large an unindexed file Foxglove and Lichtblick still open (they load it whole).
const VIEWER_UNINDEXED_LIMIT: u64 = 1 << 30;

/// What an unindexed file means for the people who open it.
fn unindexed_note(info: &FileInfo) -> String {
    let foxglove = if info.size > VIEWER_UNINDEXED_LIMIT {
        "Foxglove and Lichtblick refuse it (they open unindexed files only up to 1 GiB)"
    } else {
        "Foxglove and Lichtblick open unindexed files only up to 1 GiB, loading them whole"
    };
    format!(
        "note: {} is not indexed (recd streams files unindexed): tools that read it as a stream (rec play, mcap cat, Python mcap) see every message, but readers that seek by the index (@mcap/core's indexed reader) find none, and {foxglove}. `rec reindex {}` indexes it (recd does so by itself once a file is closed, unless its [recording] finish is \"none\").",
        info.path.display(),
        info.path.display()
    )
}

/// Where the file's channels were recorded from, each source once: iceoryx2 shared
/// memory, DDS, or Zenoh (rmw_zenoh) and its domain.
fn sources(info: &FileInfo) -> Vec<String> {
    let mut sources: Vec<String> = Vec::new();
    for channel in &info.channels {
        let metadata = &channel.metadata;
        let source = if let Some(domain) = metadata.get(recd_storage::zenoh::DOMAIN) {
            format!("Zenoh (rmw_zenoh, ROS 2 domain {domain})")
        } else if metadata.contains_key(recd_storage::dds::TOPIC) {
            "DDS".to_string()
        } else if channel.message_encoding == recd_storage::iceoryx2::MESSAGE_ENCODING {
            "iceoryx2 shared memory".to_string()
        } else {
            continue;
        };
        if !sources.contains(&source) {
            sources.push(source);
        }
    }
    sources
}

/// The text form of `rec info`: the file's topics, then its ROS 2 services and actions
/// (`interfaces`) apart.
pub fn render(info: &FileInfo, interfaces: &Interfaces) -> String {
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
    let sources = sources(info);
    if !sources.is_empty() {
        let _ = writeln!(out, "source:      {}", sources.join(", "));
    }
    write_span(
        &mut out,
        info.message_count,
        duration,
        info.start_time.zip(info.end_time),
    );
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
    let topic_channels: Vec<_> = (info.channels.iter())
        .filter(|c| interfaces::interface_of(c) == Interface::Topic)
        .collect();
    let topic_width = (topic_channels.iter())
        .map(|c| c.topic.len())
        .max()
        .unwrap_or(0);
    for c in topic_channels {
        let _ = writeln!(
            out,
            "  ({:>3}) {:<topic_width$}  {}",
            c.id,
            c.topic,
            topic_counts(
                c.message_count,
                duration,
                &c.schema_name,
                &c.schema_encoding,
                &c.message_encoding
            )
        );
    }
    write_undefined(
        &mut out,
        (info.channels.iter())
            .filter(|c| lacks_definition(c))
            .map(|c| c.topic.as_str()),
    );
    out += &interfaces.render();
    let _ = writeln!(out, "attachments: {}", info.attachment_count);
    let _ = writeln!(out, "metadata:    {}", info.metadata_count);
    if !info.markers.is_empty() {
        let _ = writeln!(out, "markers:");
        for marker in &info.markers {
            let _ = writeln!(
                out,
                "  {}  {}",
                format::timestamp(marker.time_ns),
                marker.text
            );
        }
    }
    if let Some(incident) = &info.incident {
        let _ = writeln!(
            out,
            "incident: {}  origin {}  session {} on {}  T {}  ({:.1} s before, {:.1} s after)  {}",
            incident.id,
            incident.origin,
            incident.session,
            incident.host,
            format::timestamp(incident.time_ns),
            incident.before_ns as f64 / 1e9,
            incident.after_ns as f64 / 1e9,
            incident.note
        );
    }
    if !info.triggers.is_empty() {
        let _ = writeln!(out, "triggers:");
        for trigger in &info.triggers {
            let _ = writeln!(
                out,
                "  {}  window {} to {}  {}",
                format::timestamp(trigger.time_ns),
                format::timestamp(trigger.start_ns),
                format::timestamp(trigger.end_ns),
                trigger.note
            );
            if !trigger.id.is_empty() {
                let _ = writeln!(out, "    id: {}", trigger.id);
            }
            if !trigger.clock_sync.is_empty() {
                let _ = writeln!(out, "    clock sync: {}", trigger.clock_sync);
            }
        }
    }
    write_parameters(&mut out, &info.parameters);
    if let Some(health) = &info.health {
        out += &crate::health::file_health(health);
    }
    if info.scan.is_none() && !info.indexed {
        let _ = writeln!(out, "\n{}", unindexed_note(info));
    }
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

/// The parameters each node started the file with (`rec start --parameters`), a line per
/// parameter: `  /talker  gain: 1.5`.
fn write_parameters(out: &mut String, parameters: &BTreeMap<String, BTreeMap<String, String>>) {
    if parameters.is_empty() {
        return;
    }
    let _ = writeln!(out, "parameters (at the file's start):");
    for (node, values) in parameters {
        if values.is_empty() {
            let _ = writeln!(out, "  {node}  (none)");
        }
        for (name, value) in values {
            let _ = writeln!(out, "  {node}  {name}: {value}");
        }
    }
}
