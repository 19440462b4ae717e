//! `recd-e2e ddsperf`: the DDS recorder against Cyclone DDS's own subscriber.
//!
//! The load is Cyclone's `ddsperf pub` (reliable, keep-all, keyed topic `DDSPerfRDataKS`,
//! a DDS none of us wrote) on loopback. In the same run, one after the other on the same
//! load: `ddsperf sub` (the cost of a bare DDS subscriber), a bare rustdds reader
//! (`recd-e2e bare-dds`: the recorder's participant, QoS and way of taking samples,
//! nothing kept: rustdds' share of the recorder's cost), the recorder (`recd-e2e
//! record`, the engine as recd runs it), and a plain write of the bytes the recorder
//! wrote (the cost of the disk). Each in a DDS domain of its own.

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Duration;

use recd_engine::{BareCounts, TopicCounts, TopicStatus};
use recd_storage::IoMode;
use recd_testkit::{cyclone_loopback_config, DDSPERF_TOPIC};

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
    /// The first of the three DDS domains the run uses (ddsperf sub, the bare rustdds
    /// reader, the recorder: one each).
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
    let uri = args
        .cyclonedds_uri
        .clone()
        .unwrap_or_else(cyclone_loopback_config);
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
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    // A subscriber started a second before the publisher and stopped a second after it.
    let while_published = |command: &mut Command, domain: u16| {
        let subscriber = spawn(command)?;
        std::thread::sleep(Duration::from_secs(1));
        let _ = wait_measured(publisher(domain)?)?;
        std::thread::sleep(Duration::from_secs(1));
        interrupt(&subscriber);
        wait_measured(subscriber)
    };

    // A bare rustdds reader: the recorder's way of taking samples, nothing kept.
    let mut bare_command = Command::new(&exe);
    bare_command
        .args(["bare-dds", "--topic", DDSPERF_TOPIC, "--dds-domain"])
        .arg((args.domain + 1).to_string())
        .stdout(Stdio::piped());
    let (out, bare_usage) = while_published(&mut bare_command, args.domain + 1)?;
    let bare: BareCounts =
        serde_json::from_slice(&out).map_err(|e| format!("bare reader output: {e}"))?;

    // The recorder.
    let domain = args.domain + 2;
    let run_dir = args.dir.join(format!("ddsperf-{}", std::process::id()));
    std::fs::create_dir_all(&run_dir).map_err(|e| format!("{}: {e}", run_dir.display()))?;
    let mut record_command = Command::new(&exe);
    record_command
        .args(["record", "--no-iceoryx2", "--include", "*DataKS"])
        .args(["--dds-domain", &domain.to_string()])
        .arg("--dir")
        .arg(run_dir.join("recd"))
        .stdout(Stdio::piped());
    record_command.args(["--io-mode", &args.io_mode.to_string()]);
    let (out, recd_usage) = while_published(&mut record_command, domain)?;
    let recorded: serde_json::Value =
        serde_json::from_slice(&out).map_err(|e| format!("recorder output: {e}"))?;
    let topics: Vec<TopicStatus> = serde_json::from_value(recorded["topics"].clone())
        .map_err(|e| format!("recorder counts: {e}"))?;
    let counts = topics
        .iter()
        .find(|t| t.name == DDSPERF_TOPIC)
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

    let run = Measured {
        sub: sub_usage,
        sub_received,
        bare: bare_usage,
        bare_counts: bare,
        recd: recd_usage,
        recd_counts: counts,
        plain: plain_usage,
    };
    if matches!(args.load, Load::Max) {
        print_rate_row(args, &run);
    } else {
        print_row(args, &run);
    }
    Ok(())
}

/// What one run measured.
struct Measured {
    sub: Usage,
    /// Samples `ddsperf sub` received.
    sub_received: u64,
    bare: Usage,
    bare_counts: BareCounts,
    recd: Usage,
    recd_counts: TopicCounts,
    plain: Usage,
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
fn print_rate_row(args: &DdsperfArgs, run: &Measured) {
    let seconds = f64::from(args.seconds);
    let io = io_label(args.io_mode);
    let (rate, size, _) = args.load();
    let rate = if rate == "inf" {
        "as fast as taken"
    } else {
        rate
    };
    let (bare, recd) = (&run.bare_counts, &run.recd_counts);
    println!(
        "| {size} × {rate}, {} s{io} | {:.0}/s | {:.2} s | {:.0}/s | {:.2} s | {:.0}/s | {:.2} s | {:.0} % | {:.0} % | {} / {} | {} |",
        args.seconds,
        run.sub_received as f64 / seconds,
        run.sub.cpu(),
        bare.received as f64 / seconds,
        run.bare.cpu(),
        recd.received as f64 / seconds,
        run.recd.cpu(),
        100.0 * recd.received as f64 / (run.sub_received as f64).max(1.0),
        100.0 * recd.received as f64 / (bare.received as f64).max(1.0),
        bare.lost,
        recd.lost,
        recd.dropped,
    );
}

/// The rate table's header.
fn print_rate_header() {
    println!("| load | ddsperf sub received | ddsperf sub CPU | bare rustdds received | bare rustdds CPU | recd received | recd CPU | recd / sub rate | recd / bare rate | lost (bare / recd) | dropped (disk) |");
    println!("|---|---|---|---|---|---|---|---|---|---|---|");
}

/// A row of the CPU table: the CPU seconds of each process and the recorder's ratios.
fn print_row(args: &DdsperfArgs, run: &Measured) {
    let (rate, size, _) = args.load();
    let io = io_label(args.io_mode);
    let (sub, bare, plain, recd) = (
        run.sub.cpu(),
        run.bare.cpu(),
        run.plain.cpu(),
        run.recd.cpu(),
    );
    let ratio = |reference: f64| recd / reference.max(1e-3);
    let counts = &run.recd_counts;
    println!(
        "| {size} × {rate}, {} s{io} | {sub:.2} s | {bare:.2} s | {plain:.2} s | {recd:.2} s | {:.2}× | {:.2}× | {:.2}× | {:.2}× | {} / {} / {} | {} | {} / {} | {} MiB |",
        args.seconds,
        ratio(sub),
        ratio(sub + plain),
        ratio(bare),
        ratio(bare + plain),
        run.sub_received,
        run.bare_counts.received,
        counts.received,
        run.bare_counts.before_first,
        run.bare_counts.lost,
        counts.lost + counts.dropped,
        run.recd.max_rss_kib / 1024,
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
    println!("| load | ddsperf sub CPU | bare rustdds CPU | plain write CPU | recd CPU | recd / sub | recd / (sub + write) | recd / bare | recd / (bare + write) | received (sub / bare / recd) | sent before the bare reader's first | lost (bare / recd + dropped) | recd peak RSS |");
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|---|");
}
