//! `recd-e2e`: the end-to-end benchmark. Runs the load generator and the recorder as
//! separate processes, verifies every recorded byte, and compares the recorder with a
//! plain sequential write of the same bytes (the disk's limit) and, when given, with
//! `iox2 service record` (the peer), all on the same disk in the same run. The load goes
//! over iceoryx2 shared memory, or over DDS / RTPS on loopback (scenario `dds`).

mod ddsperf;
mod measure;
mod sealed;
mod table;
mod throttle;
mod zenoh;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::{Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

use clap::{Parser, Subcommand};
use recd_engine::{
    BareDdsReader, DdsConfig, IoMode, PreTrigger, ReceiveThreadStatus, Recording, RecordingConfig,
    ThrottleRule, TopicCounts, TopicSelection, TopicStatus, DEFAULT_BUFFER_BYTES,
};
use recd_workload::blob;
use recd_workload::report::LoadReport;
use recd_workload::verify::check_files;

use measure::{spawn, wait_measured};

/// End-to-end benchmark of the recorder against plain write and `iox2 service record`.
#[derive(Parser, Debug)]
#[command(name = "recd-e2e", version)]
struct Cli {
    #[command(subcommand)]
    command: Cmd,
}

#[derive(Subcommand, Debug)]
enum Cmd {
    /// Run a scenario and print the table.
    Run(RunArgs),
    /// Record Cyclone's `ddsperf pub` and compare with `ddsperf sub`, a bare rustdds
    /// reader (the recorder's way of taking samples, nothing kept) and a plain write,
    /// printing one Markdown table row (`--header` prints the header first).
    Ddsperf {
        #[command(flatten)]
        args: ddsperf::DdsperfArgs,
        /// Print the table's header before the row.
        #[arg(long)]
        header: bool,
    },
    /// (internal) Record until SIGINT and print the summary as JSON.
    #[command(hide = true)]
    Record(RecordArgs),
    /// (internal) Take one DDS topic's samples the way the recorder's DDS source does,
    /// on loopback, and drop them; at SIGINT print what it took as JSON. `ddsperf`'s
    /// reference for rustdds' own share of the recorder's cost.
    #[command(hide = true)]
    BareDds {
        /// The DDS domain.
        #[arg(long)]
        dds_domain: u16,
        /// The DDS topic's name.
        #[arg(long)]
        topic: String,
    },
    /// (internal) Write this many bytes sequentially and fdatasync, as a reference.
    #[command(hide = true)]
    PlainWrite {
        #[arg(long)]
        dir: PathBuf,
        #[arg(long)]
        bytes: u64,
        #[arg(long)]
        chunk: usize,
    },
    /// The Zenoh benchmark (`zenoh`) and its internal subcommands.
    #[command(flatten)]
    Zenoh(zenoh::ZenohCmd),
}

#[derive(clap::Args, Debug)]
struct RecordArgs {
    #[arg(long)]
    dir: PathBuf,
    #[arg(long)]
    include: String,
    #[command(flatten)]
    recorder: RecorderOptions,
    /// Record DDS topics of this domain too (on loopback).
    #[arg(long)]
    dds_domain: Option<u16>,
    /// Where the DDS recorder finds message definitions.
    #[arg(long)]
    msg_dir: Option<PathBuf>,
    /// Leave iceoryx2 out (a DDS-only recording).
    #[arg(long)]
    no_iceoryx2: bool,
    #[command(flatten)]
    zenoh: zenoh::RecordZenoh,
}

/// How the recorder is configured: given to `run`, passed on to `record`.
#[derive(clap::Args, Debug)]
struct RecorderOptions {
    /// Keep a CRC of each file's data section.
    #[arg(long)]
    crc: bool,
    /// How the recorder writes: auto (direct I/O where the file system accepts O_DIRECT),
    /// direct (large payloads go from shared memory to the disk) or buffered (through
    /// the page cache).
    #[arg(long, default_value_t = IoMode::Auto)]
    io_mode: IoMode,
    /// The recorder's `max_poll_interval` (its default when left out).
    #[arg(long, value_parser = humantime::parse_duration)]
    max_poll_interval: Option<Duration>,
    /// The recorder's `min_poll_interval` (its default when left out).
    #[arg(long, value_parser = humantime::parse_duration)]
    min_poll_interval: Option<Duration>,
    /// The recorder's `receive_priority` (SCHED_FIFO; 0: none; its default when left out).
    #[arg(long)]
    receive_priority: Option<u8>,
    /// The recorder's `sync_period` (its default, 500ms, when left out; 0s turns the
    /// periodic fdatasync off).
    #[arg(long, value_parser = humantime::parse_duration)]
    sync_period: Option<Duration>,
    /// Record as a pre-trigger session keeping this much (`30s`): every message is copied
    /// into the buffer and no file is written (the harness never triggers).
    #[arg(long, value_parser = humantime::parse_duration)]
    pre_trigger: Option<Duration>,
    /// The pre-trigger buffer's memory in bytes, or with a `MiB` / `GiB` suffix (the
    /// engine's default, 1 GiB, when left out).
    #[arg(long, value_parser = parse_size, requires = "pre_trigger")]
    buffer_size: Option<u64>,
    /// Keep no topic health watch: the reference for what it costs.
    #[arg(long)]
    no_health: bool,
    /// Seal the files as `[encryption]` does (to a throwaway identity; the harness
    /// decrypts them to check them after the measurement).
    #[arg(long)]
    seal: bool,
    /// Keep at most HZ samples a second of the topics matching GLOB (`GLOB=HZ`, as `rec
    /// start --max-rate`); repeatable.
    #[arg(long = "max-rate", value_name = "GLOB=HZ", value_parser = parse_max_rate)]
    max_rate: Vec<ThrottleRule>,
}

/// Parses `--max-rate`.
fn parse_max_rate(text: &str) -> Result<ThrottleRule, String> {
    ThrottleRule::max_rate(text).map_err(|e| e.to_string())
}

/// Parses `--buffer-size`: bytes, or a whole number of `MiB` or `GiB`.
fn parse_size(text: &str) -> Result<u64, String> {
    let (digits, shift) = match text.strip_suffix("GiB") {
        Some(digits) => (digits, 30),
        None => text
            .strip_suffix("MiB")
            .map_or((text, 0), |digits| (digits, 20)),
    };
    let number: u64 = digits
        .trim()
        .parse()
        .map_err(|_| format!("`{text}` is not a size (try 1073741824, 512MiB or 1GiB)"))?;
    number
        .checked_mul(1 << shift)
        .ok_or_else(|| format!("`{text}` is too large"))
}

impl RecorderOptions {
    /// The flags that give `record` these options.
    fn to_args(&self) -> Vec<String> {
        let mut args = vec!["--io-mode".to_string(), self.io_mode.to_string()];
        if self.crc {
            args.push("--crc".into());
        }
        if let Some(interval) = self.max_poll_interval {
            args.push(format!("--max-poll-interval={}ms", interval.as_millis()));
        }
        if let Some(period) = self.sync_period {
            args.push(format!("--sync-period={}ms", period.as_millis()));
        }
        if let Some(interval) = self.min_poll_interval {
            args.push(format!("--min-poll-interval={}us", interval.as_micros()));
        }
        if let Some(priority) = self.receive_priority {
            args.push(format!("--receive-priority={priority}"));
        }
        if let Some(duration) = self.pre_trigger {
            args.push(format!("--pre-trigger={}ms", duration.as_millis()));
        }
        if self.no_health {
            args.push("--no-health".into());
        }
        if self.seal {
            args.push("--seal".into());
        }
        if let Some(bytes) = self.buffer_size {
            args.push(format!("--buffer-size={bytes}"));
        }
        for rule in &self.max_rate {
            let hz = rule.max_rate.unwrap_or_default();
            args.push(format!("--max-rate={}={hz}", rule.topic));
        }
        args
    }

    /// Sets these options in the recorder's configuration.
    fn apply(&self, config: &mut RecordingConfig) {
        config.crc = self.crc;
        config.io_mode = self.io_mode;
        if let Some(interval) = self.max_poll_interval {
            config.max_poll_interval = interval;
        }
        if let Some(period) = self.sync_period {
            config.sync_period = Some(period).filter(|p| !p.is_zero());
        }
        if let Some(interval) = self.min_poll_interval {
            config.min_poll_interval = interval;
        }
        if let Some(priority) = self.receive_priority {
            config.receive_priority = priority;
        }
        config.test_hooks.no_health = self.no_health;
        config.pre_trigger = self.pre_trigger.map(|duration| PreTrigger {
            duration,
            buffer_bytes: self.buffer_size.unwrap_or(DEFAULT_BUFFER_BYTES),
        });
        config.throttles = self.max_rate.clone();
    }
}

#[derive(clap::Args, Debug)]
struct RunArgs {
    /// cameras8 (Apex study: 8 FullHD cameras at 30 fps for 13 s), cameras4, small100
    /// (100 topics × 1 kHz × 100 B; `small<N>`: N such topics), idle100 (100 topics, one message each per 10 s: the
    /// cost of an idle recorder), `cameras<N>`, or dds (over DDS / RTPS on loopback: 2
    /// topics × 1 MB × 30 Hz and 10 topics × 100 B × 1 kHz, ROS 2 `rt/` topics), and its
    /// halves dds-large and dds-small.
    #[arg(long, default_value = "cameras4")]
    scenario: String,
    /// How long to publish (default 13 s, as in the Apex study).
    #[arg(long, default_value = "13s", value_parser = humantime::parse_duration)]
    duration: Duration,
    /// Directory on the disk under test; recorded files are removed after checking.
    #[arg(long, default_value = "/var/tmp/recd-e2e")]
    dir: PathBuf,
    /// Path of the `iox2` binary (iceoryx2-cli) to run `iox2 service record` as the peer.
    #[arg(long)]
    iox2: Option<PathBuf>,
    #[command(flatten)]
    recorder: RecorderOptions,
    /// Samples the publishers let a subscriber hold at once (iceoryx2's default is 2);
    /// the load generator's own default when left out.
    #[arg(long)]
    borrowed: Option<usize>,
    /// Samples queued per subscriber before the oldest is overwritten (iceoryx2's
    /// default is 2); the load generator's own default when left out.
    #[arg(long)]
    buffer: Option<usize>,
    /// Publishers notify a same-named event service after each sample, so the recorder
    /// is woken rather than polling.
    #[arg(long)]
    notify: bool,
    /// Limit the recorder's writes to the output disk to this many MB/s (a cgroup blkio
    /// throttle): a disk slower than the load.
    #[arg(long, value_name = "MB_PER_S")]
    throttle_write: Option<u64>,
    /// The DDS domain of the `dds` scenario (publisher and recorder, loopback only).
    #[arg(long, default_value_t = 42)]
    dds_domain: u16,
    /// Run this many CPU-bound processes at normal priority throughout (the recording
    /// and the plain write): a busy machine.
    #[arg(long, default_value_t = 0)]
    hogs: usize,
}

fn main() -> ExitCode {
    iceoryx2::prelude::set_log_level(iceoryx2::prelude::LogLevel::Error);
    let result = match Cli::parse().command {
        Cmd::Run(args) => run(&args),
        Cmd::Ddsperf { args, header } => {
            if header {
                ddsperf::print_header(&args);
            }
            ddsperf::run(&args)
        }
        Cmd::Record(args) => record(args),
        Cmd::BareDds { dds_domain, topic } => bare_dds(dds_domain, &topic),
        Cmd::PlainWrite { dir, bytes, chunk } => plain_write(&dir, bytes, chunk),
        Cmd::Zenoh(command) => zenoh::main(command),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("recd-e2e: {error}");
            ExitCode::FAILURE
        }
    }
}

/// The load of one scenario.
pub struct Scenario {
    load_args: Vec<String>,
    frame_size: usize,
    /// Service names the load generator will create (after the name prefix).
    pub services: Vec<String>,
    /// Over DDS / RTPS (in this domain) rather than iceoryx2.
    dds_domain: Option<u16>,
}

fn scenario(name: &str, duration: Duration, dds_domain: u16) -> Result<Scenario, String> {
    let seconds = format!("{}ms", duration.as_millis());
    let mut args: Vec<String> = vec!["--duration".into(), seconds];
    let mut frame_size = 1920 * 1080 * 3;
    let services;
    if let Some(variant) = name.strip_prefix("dds") {
        // 1 MB topics at 30 Hz (one publisher process each, as for cameras over
        // iceoryx2) and 100 B topics at 1 kHz (one process for all); sizes are of the whole
        // CDR message, as recorded.
        let (large, small) = match variant {
            "" => (2, 10),
            "-large" => (2, 0),
            "-small" => (0, 10),
            _ => {
                return Err(format!(
                    "unknown scenario {name:?} (dds, dds-large or dds-small)"
                ))
            }
        };
        frame_size = 1_000_000;
        services = (0..large)
            .map(|i| format!("camera_{i}"))
            .chain((0..small).map(|i| format!("small_{i}")))
            .collect();
        args.extend(["dds", "--domain", &dds_domain.to_string()].map(String::from));
        args.extend(
            ["--interface", "127.0.0.1", "--cameras", &large.to_string()].map(String::from),
        );
        args.extend(["--frame-size", "1000000", "--fps", "30"].map(String::from));
        args.extend(["--small-topics", &small.to_string()].map(String::from));
        args.extend(["--small-size", "100", "--small-rate", "1000"].map(String::from));
        return Ok(Scenario {
            load_args: args,
            frame_size,
            services,
            dds_domain: Some(dds_domain),
        });
    }
    let small = name
        .strip_prefix("small")
        .and_then(|n| n.parse::<usize>().ok())
        .map(|n| (n, "1000"));
    let idle = (name == "idle100").then_some((100, "0.1"));
    if let Some((topics, rate)) = small.or(idle) {
        services = (0..topics).map(|i| format!("small/{i}")).collect();
        args.extend(
            [
                "--cameras",
                "0",
                "--small-topics",
                &topics.to_string(),
                "--small-rate",
                rate,
                "--small-size",
                "100",
            ]
            .map(String::from),
        );
    } else if let Some(n) = name.strip_prefix("cameras") {
        let n: usize = n
            .parse()
            .map_err(|_| format!("unknown scenario {name:?}"))?;
        services = (0..n).map(|i| format!("camera/{i}")).collect();
        args.extend([
            "--cameras".to_string(),
            n.to_string(),
            "--fps".into(),
            "30".into(),
        ]);
    } else {
        return Err(format!(
            "unknown scenario {name:?} (`cameras<N>`, `small<N>`, idle100, dds, dds-large or dds-small)"
        ));
    }
    Ok(Scenario {
        load_args: args,
        frame_size,
        services,
        dds_domain: None,
    })
}

fn run(args: &RunArgs) -> Result<(), String> {
    let scenario = scenario(&args.scenario, args.duration, args.dds_domain)?;
    let dds = scenario.dds_domain.is_some();
    if dds && args.iox2.is_some() {
        return Err("`iox2 service record` records iceoryx2 only; no peer for dds".into());
    }
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let load_exe = exe.with_file_name("recd-load");
    let run_dir = args.dir.join(format!("run-{}", std::process::id()));
    std::fs::create_dir_all(&run_dir).map_err(|e| format!("{}: {e}", run_dir.display()))?;
    // The default iceoryx2 domain, so that `iox2` sees the services too; names unique
    // to this run keep other services out. Over DDS the names are ROS 2 names
    // (`/recd_bench_<pid>/camera_0`, DDS topic `rt/recd_bench_<pid>/camera_0`).
    let (name_prefix, include) = if dds {
        let prefix = format!("recd_bench_{}/", std::process::id());
        let include = format!("*{prefix}*");
        (prefix, include)
    } else {
        let prefix = format!("recd-bench-{}/", std::process::id());
        let include = format!("{prefix}*");
        (prefix, include)
    };

    // The recorder, then the load, as separate processes. Over DDS the load waits until
    // the recorder matched each of its writers before it publishes.
    let mut record_command = Command::new(&exe);
    record_command
        .args(["record", "--include", &include, "--dir"])
        .arg(run_dir.join("recd"))
        .args(args.recorder.to_args())
        .stdout(Stdio::piped());
    if let Some(domain) = scenario.dds_domain {
        let msg_dir = run_dir.join("msg");
        blob::write_message_definition(&msg_dir)
            .map_err(|e| format!("{}: {e}", msg_dir.display()))?;
        record_command
            .args(["--dds-domain", &domain.to_string(), "--msg-dir"])
            .arg(&msg_dir);
    }
    let hogs = recd_testkit::Hogs::cpu(args.hogs);
    let recorder = spawn(&mut record_command)?;
    let throttle = match args.throttle_write {
        Some(mb) => Some(throttle::Throttle::apply(
            recorder.pid(),
            &args.dir,
            mb * 1_000_000,
        )?),
        None => None,
    };
    std::thread::sleep(Duration::from_millis(300));
    let mut load_command = Command::new(&load_exe);
    load_command
        .args(["--json", "--name-prefix", &name_prefix])
        .args(&scenario.load_args)
        .stdout(Stdio::piped());
    if !dds {
        load_command.args([
            "--wait-subscribers",
            if args.iox2.is_some() { "2" } else { "1" },
        ]);
        if let Some(borrowed) = args.borrowed {
            load_command.args(["--borrowed", &borrowed.to_string()]);
        }
        if let Some(buffer) = args.buffer {
            load_command.args(["--buffer", &buffer.to_string()]);
        }
        load_command.args(args.notify.then_some("--notify"));
    }
    let load = spawn(&mut load_command)?;
    let iox2 = match &args.iox2 {
        Some(path) => {
            // iox2 reads the service types at start: let the load create them first.
            std::thread::sleep(Duration::from_millis(1000));
            Some(measure::start_iox2_peer(
                path,
                &name_prefix,
                &scenario,
                &run_dir,
            )?)
        }
        None => None,
    };
    let (load_out, load_usage) = match wait_measured(load) {
        Ok(done) => done,
        Err(error) => {
            // Over DDS, say, when no reader matched: stop the recorder rather than leave it.
            measure::interrupt(&recorder);
            let _ = wait_measured(recorder);
            if let Some(peer) = iox2 {
                let _ = measure::stop_iox2_peer(peer);
            }
            return Err(format!("load generator: {error}"));
        }
    };
    let mut report: LoadReport =
        serde_json::from_slice(&load_out).map_err(|e| format!("load report: {e}"))?;
    if dds {
        // The file and the recorder's counts name DDS topics by their ROS names.
        for topic in &mut report.topics {
            topic.service = blob::recorded_topic(&topic.service);
        }
    }
    // The load waited for acknowledgements over DDS: the samples are in the recorder's
    // readers; give its receive thread and writer time to drain them.
    std::thread::sleep(Duration::from_millis(if dds { 1000 } else { 300 }));
    measure::interrupt(&recorder);
    let (recorder_out, recorder_usage) = wait_measured(recorder)?;
    drop(throttle);
    let recorded: serde_json::Value =
        serde_json::from_slice(&recorder_out).map_err(|e| format!("recorder output: {e}"))?;
    let peer = iox2.map(measure::stop_iox2_peer).transpose()?;

    // The plain write of the same number of bytes, on the same disk, before this process
    // reads the files back (a forked child inherits the parent's peak RSS).
    let plain = spawn(
        Command::new(&exe)
            .args(["plain-write", "--dir"])
            .arg(&run_dir)
            .args(["--bytes", &report.bytes().to_string(), "--chunk"])
            .arg(scenario.frame_size.to_string())
            .stdout(Stdio::piped()),
    )?;
    let (plain_out, plain_usage) = wait_measured(plain)?;
    let plain_seconds: f64 = String::from_utf8_lossy(&plain_out)
        .trim()
        .parse()
        .map_err(|_| "plain write output".to_string())?;
    let files: Vec<PathBuf> = recorded["files"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|f| f.as_str().map(PathBuf::from))
        .collect();
    let (files, sealed_files) = match recorded["identity"].as_str() {
        Some(identity) => (sealed::decrypt_all(&files, identity)?, files),
        None => (files, Vec::new()),
    };
    let checks = check_files(&files)?;
    drop(hogs);
    let receive_threads: Vec<ReceiveThreadStatus> =
        serde_json::from_value(recorded["receive_threads"].clone())
            .map_err(|e| format!("recorder's receive threads: {e}"))?;
    let recorded_bytes: u64 = recorded["bytes"].as_u64().unwrap_or(0);
    let recording_seconds = recorded["seconds"].as_f64().unwrap_or(0.0);
    // By service (iceoryx2) and by channel name (which is how DDS topics are looked up).
    let recorder_counts: BTreeMap<String, TopicCounts> =
        serde_json::from_value::<Vec<TopicStatus>>(recorded["topics"].clone())
            .map_err(|e| format!("recorder counts: {e}"))?
            .into_iter()
            .flat_map(|topic| [(topic.name, topic.counts), (topic.service, topic.counts)])
            .collect();
    for file in files.iter().chain(&sealed_files) {
        let _ = std::fs::remove_file(file);
    }

    let _ = std::fs::remove_dir_all(&run_dir);

    let mut scenario_name = format!(
        "{} (io_mode {}: {})",
        args.scenario,
        args.recorder.io_mode,
        recorded["io_mode"].as_str().unwrap_or("?")
    );
    if let (Some(borrowed), Some(buffer)) = (args.borrowed, args.buffer) {
        scenario_name += &format!(", publishers {buffer} buffered / {borrowed} borrowed");
    }
    if args.notify {
        scenario_name += ", event service";
    }
    if args.recorder.seal {
        scenario_name += ", sealed";
    }
    if let Some(mb) = args.throttle_write {
        scenario_name += &format!(", recorder's writes throttled to {mb} MB/s");
    }
    if args.hogs > 0 {
        scenario_name += &format!(", {} CPU hogs", args.hogs);
    }
    if let Some(duration) = args.recorder.pre_trigger {
        let buffer = args.recorder.buffer_size.unwrap_or(DEFAULT_BUFFER_BYTES);
        scenario_name += &format!(
            ", pre-trigger {} in {} MiB (no file written)",
            humantime::format_duration(duration),
            buffer >> 20
        );
    }
    table::print(&table::Results {
        scenario: &scenario_name,
        report: &report,
        publish_seconds: args.duration.as_secs_f64(),
        checks: &checks,
        recorder_counts: &recorder_counts,
        recorded_bytes,
        recording_seconds,
        recorder: recorder_usage,
        load: load_usage,
        plain: plain_usage,
        plain_seconds,
        peer,
        receive_threads: &receive_threads,
    });
    Ok(())
}

/// The DDS settings of `record --dds-domain`: loopback only, the engine's defaults.
fn loopback_dds(domain: u16) -> DdsConfig {
    DdsConfig {
        interfaces: vec![std::net::IpAddr::from([127, 0, 0, 1])],
        ..DdsConfig::new(domain)
    }
}

/// Takes `topic`'s samples as `record` would and drops them, until SIGINT.
fn bare_dds(domain: u16, topic: &str) -> Result<(), String> {
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let on_signal = stop.clone();
    ctrlc::set_handler(move || on_signal.store(true, std::sync::atomic::Ordering::Relaxed))
        .map_err(|e| e.to_string())?;
    let reader = BareDdsReader::open(&loopback_dds(domain), topic).map_err(|e| e.to_string())?;
    let counts = reader.run(&stop)?;
    println!(
        "{}",
        serde_json::to_string(&counts).map_err(|e| e.to_string())?
    );
    Ok(())
}

/// Records until SIGINT; DDS topics too with `--dds-domain`, on loopback only.
fn record(args: RecordArgs) -> Result<(), String> {
    let mut config = RecordingConfig::new(args.dir);
    config.file_prefix = "bench".into();
    args.recorder.apply(&mut config);
    let identity = args.recorder.seal.then(|| sealed::seal(&mut config));
    args.zenoh.apply(&mut config, args.msg_dir.as_deref());
    config.dds = args.dds_domain.map(|domain| DdsConfig {
        message_dirs: args.msg_dir.into_iter().collect(),
        ..loopback_dds(domain)
    });
    config.iceoryx2 = !args.no_iceoryx2;
    config.topics = TopicSelection {
        // An empty `--include`: every topic.
        include: Some(args.include)
            .filter(|i| !i.is_empty())
            .into_iter()
            .collect(),
        ..TopicSelection::default()
    };
    let (tx, rx) = std::sync::mpsc::channel();
    ctrlc::set_handler(move || {
        let _ = tx.send(());
    })
    .map_err(|e| e.to_string())?;
    let started = Instant::now();
    let recording = Recording::start(config).map_err(|e| e.to_string())?;
    let io_mode = recording.status().io_mode;
    let _ = rx.recv();
    let summary = recording.stop().map_err(|e| e.to_string())?;
    if let Some(error) = &summary.write_error {
        eprintln!("recd-e2e: write error: {error}");
    }
    let output = serde_json::json!({
        "files": summary.files.iter().map(|f| f.path.display().to_string()).collect::<Vec<_>>(),
        "bytes": summary.files.iter().map(|f| f.bytes).sum::<u64>(),
        "seconds": started.elapsed().as_secs_f64(),
        "topics": summary.topics,
        "io_mode": io_mode,
        "receive_threads": summary.receive_threads,
        "identity": identity,
    });
    println!("{output}");
    Ok(())
}

fn plain_write(dir: &std::path::Path, bytes: u64, chunk: usize) -> Result<(), String> {
    use std::io::Write;
    let path = dir.join("plain-write.bin");
    let mut file = std::fs::File::create(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let buffer = recd_workload::mixed_bytes(chunk.max(1), 7);
    let started = Instant::now();
    let mut left = bytes;
    while left > 0 {
        let n = left.min(buffer.len() as u64) as usize;
        file.write_all(&buffer[..n]).map_err(|e| e.to_string())?;
        left -= n as u64;
    }
    file.sync_data().map_err(|e| e.to_string())?;
    let seconds = started.elapsed().as_secs_f64();
    drop(file);
    let _ = std::fs::remove_file(&path);
    println!("{seconds}");
    Ok(())
}
