//! `rec start`: a new recording session.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use clap::Args;
use recd_control::{FinishMode, Request, Response, StartRequest};
use recd_storage::IoMode;

use crate::format;
use crate::output::outln;
use crate::request::ask;

/// Start recording a session.
///
/// With no --topic every topic is recorded. Files go to recd's data directory, in a
/// directory named after the session. Shared-memory (iceoryx2) topics are recorded
/// unless --no-iceoryx2; with --dds-domain (or `dds_domain` in recd's configuration)
/// DDS / ROS 2 topics of that domain are recorded too, as ROS 2 MCAP (CDR as received),
/// into files of their own (`…_dds_NNNN.mcap` beside `…_iceoryx2_NNNN.mcap`), listed in
/// the directory's rosbag2 metadata.yaml. With --zenoh-domain (or `[zenoh] domain`) ROS 2
/// topics over Zenoh (rmw_zenoh) are recorded the same way, into `…_zenoh_NNNN.mcap`.
#[derive(Debug, Args)]
pub struct StartArgs {
    /// The session's name (letters, digits, '-', '_', '.'); recd picks one when left out.
    #[arg(long)]
    name: Option<String>,
    /// Record topics matching this glob; repeatable. Globs match iceoryx2 service names,
    /// ROS 2 topic names (`/chatter` for DDS topic `rt/chatter`) and other DDS topic
    /// names. ROS's internal topics (/parameter_events, ros_discovery_info) are recorded
    /// only when a --topic selects them.
    #[arg(long = "topic", value_name = "GLOB")]
    topics: Vec<String>,
    /// Never record topics matching this glob; repeatable.
    #[arg(long = "exclude", value_name = "GLOB")]
    exclude: Vec<String>,
    /// Record only topics whose message type matches this glob; repeatable. DDS topics
    /// by their ROS 2 type (`sensor_msgs/msg/Image`, `sensor_msgs/msg/*`), iceoryx2
    /// services by iceoryx2's payload type name. `rec topics --topic-type` shows what
    /// a filter takes.
    #[arg(long = "topic-type", value_name = "GLOB")]
    topic_types: Vec<String>,
    /// Never record topics whose message type matches this glob; repeatable.
    #[arg(long = "exclude-topic-type", value_name = "GLOB")]
    exclude_topic_types: Vec<String>,
    /// Record the introspection events (`<service>/_service_event`, as ROS 2 MCAP with a
    /// decodable `<Srv>_Event` schema) of the ROS 2 services matching these globs, e.g.
    /// '/add_two_ints' (the leading '/' may be left out). Topics are then recorded only
    /// as --topic or --topic-type ask; without any of --topic, --topic-type, --services,
    /// --all-services, --actions, --all-actions, everything is recorded.
    #[arg(long = "services", value_name = "GLOB", num_args = 1..)]
    services: Vec<String>,
    /// Record the introspection events of every ROS 2 service (but --exclude-services).
    #[arg(long)]
    all_services: bool,
    /// Never record the ROS 2 services matching this glob; repeatable.
    #[arg(long = "exclude-services", value_name = "GLOB", num_args = 1..)]
    exclude_services: Vec<String>,
    /// Record the ROS 2 actions matching these globs, e.g. '/fibonacci': their feedback
    /// and status topics and the events of their send_goal, get_result and cancel_goal
    /// services.
    #[arg(long = "actions", value_name = "GLOB", num_args = 1..)]
    actions: Vec<String>,
    /// Record every ROS 2 action (but --exclude-actions).
    #[arg(long)]
    all_actions: bool,
    /// Never record the ROS 2 actions matching this glob; repeatable.
    #[arg(long = "exclude-actions", value_name = "GLOB", num_args = 1..)]
    exclude_actions: Vec<String>,
    /// Put every ROS 2 node's parameters into each file as it starts (read with the
    /// node's ~/list_parameters and ~/get_parameters; one Metadata record per node,
    /// `rec info` shows them) and record /parameter_events, so every change is in the
    /// file too. DDS only (with --dds-domain or recd.toml's dds_domain); recd.toml's
    /// [recording] parameters = true does it for every session.
    #[arg(long)]
    parameters: bool,
    /// Keep at most HZ samples per second of the topics matching GLOB, e.g.
    /// 'camera/*=5'; repeatable, the first matching rule wins, before recd.toml's
    /// [[topic]] rules. The first sample is kept, then one per 1/HZ slot (never two
    /// closer than 95 % of it); the others are released unwritten and counted as
    /// filtered.
    #[arg(long = "max-rate", value_name = "GLOB=HZ", value_parser = parse_max_rate)]
    max_rate: Vec<String>,
    /// Keep one sample in N of the topics matching GLOB (the 1st, N+1th, …), e.g.
    /// '/points=3'; repeatable, applied before --max-rate; the others are counted as
    /// filtered.
    #[arg(long = "downsample", value_name = "GLOB=N", value_parser = parse_downsample)]
    downsample: Vec<String>,
    /// Start a new file once one holds this much, e.g. 4GiB; 0 is no splitting (also
    /// when recd.toml sets a size); at least 1MiB otherwise.
    #[arg(long, value_name = "SIZE", value_parser = format::parse_size)]
    max_file_size: Option<u64>,
    /// Start a new file after this long, e.g. 10min; 0s is no splitting (also when
    /// recd.toml sets a duration); at least 1s otherwise.
    #[arg(long, value_name = "DURATION", value_parser = recd_control::units::parse_duration)]
    max_duration: Option<Duration>,
    /// Keep a CRC-32 of each file's data section.
    #[arg(long)]
    crc: bool,
    /// Record DDS / ROS 2 topics of this domain too (0 to 232, ROS_DOMAIN_ID).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(0..=232))]
    dds_domain: Option<u16>,
    /// Record ROS 2 topics over Zenoh (rmw_zenoh) of this domain
    /// too (0 to 232, ROS_DOMAIN_ID); how recd joins Zenoh is
    /// `[zenoh]` in recd's configuration.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(0..=232))]
    zenoh_domain: Option<u16>,
    /// Record DDS or Zenoh topics only, no iceoryx2 shared memory.
    #[arg(long)]
    no_iceoryx2: bool,
    /// Start paused: subscribe and count, write nothing until `rec resume`.
    #[arg(long)]
    paused: bool,
    /// Keep the last DURATION (e.g. 30s) of every selected topic in memory and write
    /// nothing until `rec trigger`, which writes the window around its moment into a
    /// file of its own.
    #[arg(long, value_name = "DURATION", value_parser = recd_control::units::parse_duration)]
    pre_trigger: Option<Duration>,
    /// The pre-trigger buffer's memory, e.g. 512MiB (default 1GiB, at least 1MiB): when
    /// full, the oldest messages are let go before DURATION has passed (counted as
    /// evicted). A session recording iceoryx2 and DDS gives each half.
    #[arg(long, value_name = "SIZE", value_parser = format::parse_size, requires = "pre_trigger")]
    buffer_size: Option<u64>,
    /// How to write the files (overrides recd's `io_mode`): auto uses direct I/O
    /// (O_DIRECT, no copy through the page cache) where the file system accepts it and
    /// buffered I/O elsewhere; direct fails where it is refused; buffered goes through
    /// the page cache.
    #[arg(long, value_name = "MODE")]
    io_mode: Option<IoMode>,
    /// Keep only the newest N files of this session (the one being written included):
    /// with --max-file-size or --max-duration, a ring of the last N files. Older ones
    /// are deleted and marked deleted in `rec list`.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    max_files: Option<u32>,
    /// Delete this session's files whose newest message is older than this, e.g. 1h
    /// (with --max-duration or --max-file-size, "the last hour" whatever its size);
    /// files an incident pins (rec trigger) stay. Default: recd's [recording] max_age.
    #[arg(long, value_name = "DURATION", value_parser = recd_control::units::parse_duration)]
    max_age: Option<Duration>,
    /// Stop by itself after this long, e.g. 60s or 2h (within a second of it).
    #[arg(long, value_name = "DURATION", value_parser = recd_control::units::parse_duration)]
    duration: Option<Duration>,
    /// Put KEY=VALUE into a Metadata record (`user/<file name>`) at the start of every file of
    /// the session (e.g. vehicle=test-car-3); repeatable.
    #[arg(long = "metadata", value_name = "KEY=VALUE", value_parser = crate::attach::parse_metadata_entry)]
    metadata: Vec<(String, String)>,
    /// Put FILE (a calibration, say) into every file of the session as an MCAP
    /// Attachment, named after it; repeatable, 4 MiB at most together. rec reads it, so
    /// it need only be readable by you.
    #[arg(long = "attach", value_name = "FILE")]
    attach: Vec<PathBuf>,
    /// Upload the session's finished files to the bucket of `[upload]` in recd.toml
    /// (the default when that section is there; an error when it is not).
    #[arg(long, conflicts_with = "no_upload")]
    upload: bool,
    /// Do not upload this session's files (`rec upload SESSION` queues them later).
    #[arg(long)]
    no_upload: bool,
    /// What recd does to each file once closed, in the background at low priority:
    /// index (chunk and index it in place, so that Foxglove opens it), zstd or lz4
    /// (compress too), none (leave it as recorded). Default: `[recording] finish`.
    #[arg(long, value_name = "MODE", value_parser = parse_finish_mode)]
    finish: Option<FinishMode>,
    /// What a topic must keep, checked live and written into each file's health record:
    /// PATTERN[:ITEM,...] with items 25hz (min_rate over 1 s windows), max_gap=200ms (a
    /// longer silence is a stall), required (`rec stop` exits 5 without it), off (no
    /// checks). Repeatable; the first matching rule wins, before recd.toml's
    /// [[expect]]. Topics no rule matches learn their rate from their first samples
    /// (stall: silent over max(10 periods, 500 ms)). E.g. --expect 'camera/*:25hz'
    /// --expect '/imu:max_gap=20ms,required'.
    #[arg(long = "expect", value_name = "RULE", value_parser = parse_expectation)]
    expect: Vec<String>,
    /// Print the result as JSON.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    pub socket: crate::socket::SocketArg,
}

/// Asks recd to start the session and prints where it records.
pub fn start(socket: &Path, args: &StartArgs) -> Result<ExitCode, String> {
    let metadata = crate::attach::metadata(&args.metadata)?;
    let attachments = crate::attach::read_attachments(&args.attach)?;
    let request = Request::Start(StartRequest {
        name: args.name.clone(),
        topics: args.topics.clone(),
        exclude: args.exclude.clone(),
        max_file_size: args.max_file_size,
        max_duration_ms: args.max_duration.map(|d| d.as_millis() as u64),
        crc: args.crc,
        dds_domain: args.dds_domain,
        zenoh_domain: args.zenoh_domain,
        no_iceoryx2: args.no_iceoryx2,
        io_mode: args.io_mode.map(|mode| mode.to_string()),
        max_files: args.max_files,
        max_age_ms: args.max_age.map(|d| d.as_millis() as u64),
        duration_ms: args.duration.map(|d| d.as_millis() as u64),
        metadata,
        attachments,
        paused: args.paused,
        pre_trigger_ms: args.pre_trigger.map(|d| d.as_millis() as u64),
        buffer_size: args.buffer_size,
        upload: match (args.upload, args.no_upload) {
            (true, _) => Some(true),
            (_, true) => Some(false),
            _ => None,
        },
        finish: args.finish,
        expect: args.expect.clone(),
        topic_types: args.topic_types.clone(),
        exclude_topic_types: args.exclude_topic_types.clone(),
        max_rate: args.max_rate.clone(),
        downsample: args.downsample.clone(),
        services: args.services.clone(),
        all_services: args.all_services,
        exclude_services: args.exclude_services.clone(),
        actions: args.actions.clone(),
        all_actions: args.all_actions,
        exclude_actions: args.exclude_actions.clone(),
        parameters: args.parameters,
    });
    let Response::Started(started) = ask(socket, &request)? else {
        return Err("recd answered a start with something else".into());
    };
    if args.json {
        crate::output::print_json(&started)?;
    } else {
        outln!(
            "recording session {} into {} ({} I/O)",
            started.name,
            started.directory.display(),
            started.io_mode
        );
    }
    Ok(ExitCode::SUCCESS)
}

fn parse_finish_mode(text: &str) -> Result<FinishMode, String> {
    text.parse()
        .map_err(|_| format!("{text:?} is not a finish mode: use index, zstd, lz4 or none"))
}

/// Checks a --expect rule here, so that a typo is told before recd is asked.
fn parse_expectation(text: &str) -> Result<String, String> {
    recd_health::Expectation::parse(text)
        .map(|_| text.to_string())
        .map_err(|e| e.to_string())
}

/// Checks a --max-rate rule here, so that a typo is told before recd is asked.
fn parse_max_rate(text: &str) -> Result<String, String> {
    recd_engine::ThrottleRule::max_rate(text)
        .map(|_| text.to_string())
        .map_err(|e| e.to_string())
}

/// Checks a --downsample rule here.
fn parse_downsample(text: &str) -> Result<String, String> {
    recd_engine::ThrottleRule::downsample(text)
        .map(|_| text.to_string())
        .map_err(|e| e.to_string())
}
