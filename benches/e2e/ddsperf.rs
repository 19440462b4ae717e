//! `recd-e2e ddsperf`: the DDS recorder against Cyclone DDS's own subscriber.
//!
//! The load is Cyclone's `ddsperf pub` (reliable, keep-all, keyed topic `DDSPerfRDataKS`,
//! a DDS none of us wrote) on loopback. In the same run, one after the other on the same
//! load: `ddsperf sub` (the cost of a bare DDS subscriber), the recorder (`recd-e2e
//! record`, the engine as recd runs it), and a plain write of the bytes the recorder
//! wrote (the cost of the disk). Each in a DDS domain of its own.

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Duration;

use recd_engine::{TopicCounts, TopicStatus};
use recd_storage::IoMode;

use crate::measure::{interrupt, spawn, wait_measured, Usage};

/// The loads of the DDS study.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum Load {
    /// 100 B × 10 kHz.
    Small,
    /// 64 KiB × 1 kHz (fragmented).
    Medium,
    /// 1 MiB × 60 Hz (fragmented).
    Large,
    /// 1 MiB as fast as the subscriber takes it (reliable, keep-all: the publisher
    /// waits for acknowledgements), for the highest loss-free rate.
    Max,
}

impl Load {
    /// ddsperf's rate and size arguments, and the size in bytes.
    fn ddsperf(self) -> (&'static str, &'static str, usize) {
        match self {
            Load::Small => ("10kHz", "100", 100),
            Load::Medium => ("1kHz", "64KiB", 64 << 10),
            Load::Large => ("60Hz", "1MiB", 1 << 20),
            Load::Max => ("inf", "1MiB", 1 << 20),
        }
    }
}

/// Options of `recd-e2e ddsperf`.
#[derive(clap::Args, Debug)]
pub struct DdsperfArgs {
    /// Which load.
    #[arg(long, value_enum)]
    load: Load,
    /// How long ddsperf publishes, in whole seconds.
    #[arg(long, default_value_t = 10)]
    seconds: u32,
    /// Directory on the disk under test.
    #[arg(long, default_value = "/var/tmp/recd-e2e")]
    dir: PathBuf,
    /// The first of the two DDS domains the run uses.
    #[arg(long, default_value_t = 60)]
    domain: u16,
    /// `CYCLONEDDS_URI` for ddsperf (default: the tests' loopback-only configuration,
    /// tests/python/cyclonedds-loopback.xml).
    #[arg(long)]
    cyclonedds_uri: Option<String>,
    /// How the recorder writes: auto (its default: direct I/O where the file system
    /// accepts O_DIRECT), direct or buffered. The plain write is buffered: its write-back
    /// runs in the kernel's flusher threads, which no process is charged for, while
    /// direct I/O submits from the recorder's writer thread.
    #[arg(long, default_value_t = IoMode::Auto)]
    io_mode: IoMode,
    /// ddsperf's publishing rate instead of the load's (e.g. 500Hz, or inf), to find the
    /// highest rate the recorder takes without loss.
    #[arg(long)]
    rate: Option<String>,
}

impl DdsperfArgs {
    /// ddsperf's rate and size arguments, and the size in bytes.
    fn load(&self) -> (&str, &'static str, usize) {
        let (rate, size, bytes) = self.load.ddsperf();
        (self.rate.as_deref().unwrap_or(rate), size, bytes)
    }
}

/// Runs the reference and the recorder on the same load and prints one table row.
pub fn run(args: &DdsperfArgs) -> Result<(), String> {
    let uri = args.cyclonedds_uri.clone().unwrap_or_else(loopback_config);
    let (rate, size, bytes) = args.load();
    let publisher = |domain: u16| {
        let mut command = Command::new("ddsperf");
        command
            .args(["-i", &domain.to_string(), "-D", &args.seconds.to_string()])
            .args(["pub", rate, "size", size])
            .env("CYCLONEDDS_URI", &uri)
            .stdout(Stdio::null());
        spawn(&mut command)
    };

    // The reference: ddsperf's own subscriber (it prints its statistics; not needed).
    let mut sub_command = Command::new("ddsperf");
    sub_command
        .args(["-i", &args.domain.to_string(), "-D"])
        .arg((args.seconds + 2).to_string())
        .arg("sub")
        .env("CYCLONEDDS_URI", &uri)
        .stdout(Stdio::piped());
    let sub = spawn(&mut sub_command)?;
    std::thread::sleep(Duration::from_secs(1));
    let publishing = publisher(args.domain)?;
    let _ = wait_measured(publishing)?;
    let (sub_out, sub_usage) = wait_measured(sub)?;
    let sub_received = received_by_ddsperf_sub(&String::from_utf8_lossy(&sub_out))
        .ok_or("ddsperf sub printed no sample count")?;

    // The recorder.
    let domain = args.domain + 1;
    let run_dir = args.dir.join(format!("ddsperf-{}", std::process::id()));
    std::fs::create_dir_all(&run_dir).map_err(|e| format!("{}: {e}", run_dir.display()))?;
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let mut record_command = Command::new(&exe);
    record_command
        .args(["record", "--no-iceoryx2", "--include", "*DataKS"])
        .args(["--dds-domain", &domain.to_string()])
        .arg("--dir")
        .arg(run_dir.join("recd"))
        .stdout(Stdio::piped());
    record_command.args(["--io-mode", &args.io_mode.to_string()]);
    let recorder = spawn(&mut record_command)?;
    std::thread::sleep(Duration::from_secs(1));
    let publishing = publisher(domain)?;
    let _ = wait_measured(publishing)?;
    std::thread::sleep(Duration::from_secs(1));
    interrupt(&recorder);
    let (out, recd_usage) = wait_measured(recorder)?;
    let recorded: serde_json::Value =
        serde_json::from_slice(&out).map_err(|e| format!("recorder output: {e}"))?;
    let topics: Vec<TopicStatus> = serde_json::from_value(recorded["topics"].clone())
        .map_err(|e| format!("recorder counts: {e}"))?;
    let counts = topics
        .iter()
        .find(|t| t.name == "DDSPerfRDataKS")
        .map(|t| t.counts)
        .ok_or("the recorder saw no ddsperf data")?;
    let recorded_bytes = recorded["bytes"].as_u64().unwrap_or(0);

    // The disk's share: a plain write of the same bytes.
    let plain = spawn(
        Command::new(&exe)
            .args(["plain-write", "--dir"])
            .arg(&run_dir)
            .args(["--bytes", &recorded_bytes.to_string(), "--chunk"])
            .arg(bytes.to_string())
            .stdout(Stdio::piped()),
    )?;
    let (_, plain_usage) = wait_measured(plain)?;
    let _ = std::fs::remove_dir_all(&run_dir);

    if matches!(args.load, Load::Max) {
        print_rate_row(args, &sub_usage, sub_received, &recd_usage, &counts);
    } else {
        print_row(
            args,
            &sub_usage,
            &recd_usage,
            &plain_usage,
            counts.received,
            counts.lost + counts.dropped,
        );
    }
    Ok(())
}

/// The last `total` of ddsperf sub's per-second lines (`… size 1048576 total 3346 lost 0
/// …`): the samples it received in the run.
fn received_by_ddsperf_sub(output: &str) -> Option<u64> {
    output.lines().rev().find_map(|line| {
        let mut words = line.split_whitespace().skip_while(|w| *w != "total");
        words.next()?;
        words.next()?.parse().ok()
    })
}

/// A row of the rate table: what each subscriber took of a publisher that goes as fast
/// as it is acknowledged.
fn print_rate_row(
    args: &DdsperfArgs,
    sub: &Usage,
    sub_received: u64,
    recd: &Usage,
    counts: &TopicCounts,
) {
    let seconds = f64::from(args.seconds);
    let io = io_label(args.io_mode);
    let (rate, size, _) = args.load();
    let rate = if rate == "inf" {
        "as fast as taken"
    } else {
        rate
    };
    println!(
        "| {size} × {rate}, {} s{io} | {:.0}/s | {:.2} s | {:.0}/s | {:.2} s | {:.0} % | {} | {} |",
        args.seconds,
        sub_received as f64 / seconds,
        sub.cpu(),
        counts.received as f64 / seconds,
        recd.cpu(),
        100.0 * counts.received as f64 / (sub_received as f64).max(1.0),
        counts.lost,
        counts.dropped,
    );
}

/// The rate table's header.
fn print_rate_header() {
    println!("| load | ddsperf sub received | ddsperf sub CPU | recd received | recd CPU | recd / sub rate | lost | dropped (disk) |");
    println!("|---|---|---|---|---|---|---|---|");
}

fn print_row(
    args: &DdsperfArgs,
    sub: &Usage,
    recd: &Usage,
    plain: &Usage,
    received: u64,
    lost: u64,
) {
    let (rate, size, _) = args.load();
    let io = io_label(args.io_mode);
    println!(
        "| {size} × {rate}, {} s{io} | {:.2} s | {:.2} s | {:.2} s | {:.2}× | {:.2}× | {received} | {lost} | {} MiB |",
        args.seconds,
        sub.cpu(),
        plain.cpu(),
        recd.cpu(),
        recd.cpu() / sub.cpu().max(1e-3),
        recd.cpu() / (sub.cpu() + plain.cpu()).max(1e-3),
        recd.max_rss_kib / 1024,
    );
}

/// What a row says about the recorder's I/O mode: nothing for its default.
fn io_label(mode: IoMode) -> String {
    match mode {
        IoMode::Auto => String::new(),
        mode => format!(", {mode} I/O"),
    }
}

/// The header of the table `args`' row belongs to.
pub fn print_header(args: &DdsperfArgs) {
    if matches!(args.load, Load::Max) {
        print_rate_header();
    } else {
        print_cpu_header();
    }
}

/// The CPU table's header.
fn print_cpu_header() {
    println!("| load | ddsperf sub CPU | plain write CPU | recd CPU | recd / sub | recd / (sub + write) | recd received | lost + dropped | recd peak RSS |");
    println!("|---|---|---|---|---|---|---|---|---|");
}

/// The tests' Cyclone configuration: loopback only, unicast discovery (this machine's
/// `lo` has no multicast).
fn loopback_config() -> String {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/python/cyclonedds-loopback.xml");
    format!("file://{}", path.display())
}
