//! `recd-load`: publishes camera-like frames and small sensor messages over iceoryx2 (the
//! default) or over DDS / RTPS (`recd-load dds`) from several processes, for the
//! end-to-end benchmark and tests.
//!
//! Every payload starts with its topic's sequence number and a checksum of the rest (see
//! `recd_workload::proof`), and every iceoryx2 sample carries rmw_iceoryx2's user header
//! (source time stamp, sequence number), every DDS sample is a `recd_load/msg/Blob` (see
//! `recd_workload::blob`), so a recording can be proven complete byte for byte.
//! The parent process starts one publisher process per camera and one for all small
//! topics, waits for them, and prints what each topic sent.

mod dds;
mod publisher;

use std::process::{Command, ExitCode, Stdio};
use std::time::Duration;

use clap::{Args, Parser, Subcommand};
use recd_workload::report::{LoadReport, TopicSent};

/// Publishes camera frames and small messages over iceoryx2 (or DDS) from several
/// processes.
#[derive(Parser, Debug)]
#[command(name = "recd-load", version)]
struct Cli {
    #[command(flatten)]
    load: Load,
    #[command(subcommand)]
    command: Option<Mode>,
}

/// What to publish and for how long: the same for both transports. These options may be
/// given before or after `dds`.
#[derive(Args, Debug, Clone)]
#[command(next_help_heading = "Workload (iceoryx2 and DDS)")]
pub struct Workload {
    /// Camera topics, one publisher process each.
    #[arg(long, global = true, default_value_t = 1)]
    cameras: usize,
    /// Bytes per camera frame (FullHD RGB by default); over DDS, of the whole CDR message.
    #[arg(long, global = true, default_value_t = 1920 * 1080 * 3)]
    frame_size: usize,
    /// Camera frames per second.
    #[arg(long, global = true, default_value_t = 30.0)]
    fps: f64,
    /// Small-message topics (lidar/IMU-like), all from one publisher process.
    #[arg(long, global = true, default_value_t = 0)]
    small_topics: usize,
    /// Bytes per small message; over DDS, of the whole CDR message.
    #[arg(long, global = true, default_value_t = 100)]
    small_size: usize,
    /// Messages per second on each small topic.
    #[arg(long, global = true, default_value_t = 1000.0)]
    small_rate: f64,
    /// How long to publish.
    #[arg(long, global = true, default_value = "5s", value_parser = humantime::parse_duration)]
    duration: Duration,
    /// Stop each topic after this many messages instead (whichever comes first).
    #[arg(long, global = true)]
    count: Option<u64>,
    /// Topic names start with this; cameras are `<prefix>camera/<i>`, small topics
    /// `<prefix>small/<i>` (over DDS `rt/<prefix>camera_<i>` and `rt/<prefix>small_<i>`,
    /// valid ROS 2 names when the prefix is one).
    #[arg(long, global = true, default_value = "recd/load/")]
    name_prefix: String,
    /// Keep the publishers up this long after the last sample (for latched topics, say).
    #[arg(long, global = true, default_value = "200ms", value_parser = humantime::parse_duration)]
    linger: Duration,
    /// Print the report as JSON.
    #[arg(long, global = true)]
    json: bool,
}

/// The load to publish over iceoryx2.
#[derive(Args, Debug, Clone)]
pub struct Load {
    #[command(flatten)]
    workload: Workload,
    /// iceoryx2 file prefix (`global.prefix`), to keep a run apart from others.
    #[arg(long, help_heading = "iceoryx2")]
    iceoryx2_prefix: Option<String>,
    /// Samples a subscriber may hold at once, per publisher.
    #[arg(long, help_heading = "iceoryx2", default_value_t = 4)]
    borrowed: usize,
    /// Samples queued per subscriber before the oldest is overwritten.
    #[arg(long, help_heading = "iceoryx2")]
    buffer: Option<usize>,
    /// History kept for late subscribers (makes the topics latched).
    #[arg(long, help_heading = "iceoryx2", default_value_t = 0)]
    history: usize,
    /// Also create a same-named event service and notify it after each sample.
    #[arg(long, help_heading = "iceoryx2")]
    notify: bool,
    /// Wait (up to 10 s) until this many subscribers are connected before publishing.
    #[arg(long, help_heading = "iceoryx2", default_value_t = 0)]
    wait_subscribers: usize,
}

#[derive(Subcommand, Debug)]
enum Mode {
    /// Publish over DDS / RTPS (rustdds) instead of iceoryx2, as ROS 2 topics of type
    /// `recd_load/msg/Blob`.
    Dds(dds::DdsLoad),
    #[command(flatten)]
    Worker(Worker),
}

/// One publisher process's share of the load.
#[derive(Subcommand, Debug, Clone, Copy)]
pub enum Worker {
    /// (internal) publish one camera topic.
    #[command(hide = true)]
    Camera {
        /// Which camera.
        index: usize,
    },
    /// (internal) publish every small topic.
    #[command(hide = true)]
    Small,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    iceoryx2::prelude::set_log_level(iceoryx2::prelude::LogLevel::Error);
    let workload = &cli.load.workload;
    let result = match &cli.command {
        Some(Mode::Worker(worker)) => publisher::run(&cli.load, worker),
        Some(Mode::Dds(dds)) => match dds.worker {
            Some(worker) => dds::run(workload, dds, worker),
            None => return run_parent(workload),
        },
        None => return run_parent(workload),
    };
    match result {
        Ok(sent) => emit(&serde_json::to_string(&sent).expect("report serializes")),
        Err(error) => {
            eprintln!("recd-load: {error}");
            ExitCode::FAILURE
        }
    }
}

/// Starts one worker process per camera and one for the small topics, with this
/// process's own arguments (so the same transport), and merges their reports.
fn run_parent(load: &Workload) -> ExitCode {
    let exe = match std::env::current_exe() {
        Ok(exe) => exe,
        Err(error) => {
            eprintln!("recd-load: cannot find my own executable: {error}");
            return ExitCode::FAILURE;
        }
    };
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut workers = Vec::new();
    let mut kinds: Vec<Vec<String>> = (0..load.cameras)
        .map(|i| vec!["camera".to_string(), i.to_string()])
        .collect();
    if load.small_topics > 0 {
        kinds.push(vec!["small".to_string()]);
    }
    let started = std::time::Instant::now();
    for kind in kinds {
        let child = Command::new(&exe)
            .args(&args)
            .args(&kind)
            .stdout(Stdio::piped())
            .spawn();
        match child {
            Ok(child) => workers.push(child),
            Err(error) => {
                eprintln!("recd-load: cannot start a publisher process: {error}");
                return ExitCode::FAILURE;
            }
        }
    }
    let mut report = LoadReport::default();
    let mut failed = false;
    for worker in workers {
        match worker.wait_with_output() {
            Ok(output) if output.status.success() => {
                for line in String::from_utf8_lossy(&output.stdout).lines() {
                    match serde_json::from_str::<Vec<TopicSent>>(line) {
                        Ok(sent) => report.topics.extend(sent),
                        Err(_) => failed = true,
                    }
                }
            }
            _ => failed = true,
        }
    }
    report.seconds = started.elapsed().as_secs_f64();
    report.topics.sort_by(|a, b| a.service.cmp(&b.service));
    let text = if load.json {
        serde_json::to_string(&report).expect("report serializes")
    } else {
        let mut text = format!(
            "{:<32} {:>10} {:>12} {:>8}\n",
            "topic", "sent", "bytes each", "errors"
        );
        for topic in &report.topics {
            text += &format!(
                "{:<32} {:>10} {:>12} {:>8}\n",
                topic.service, topic.sent, topic.payload_len, topic.errors
            );
        }
        text + &format!(
            "{:.1} MB/s over {:.2} s",
            report.bytes() as f64 / report.seconds / 1e6,
            report.seconds
        )
    };
    let reported = emit(&text);
    if failed {
        eprintln!("recd-load: a publisher process failed");
        return ExitCode::FAILURE;
    }
    reported
}

/// Writes `text` and a newline to stdout; a reader that went away is an error, not a panic.
fn emit(text: &str) -> ExitCode {
    use std::io::Write;
    let mut stdout = std::io::stdout().lock();
    match writeln!(stdout, "{text}").and_then(|()| stdout.flush()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("recd-load: cannot write the report: {error}");
            ExitCode::FAILURE
        }
    }
}
