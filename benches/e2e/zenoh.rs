//! `recd-e2e zenoh`: the Zenoh recorder against a bare Rust Zenoh subscriber.
//!
//! The load is `recd-e2e zenoh-pub`: one ROS 2 publisher as rmw_zenoh declares one
//! (liveliness token, data key, reliable with congestion control `Drop`, the attachment
//! on every sample), in a Zenoh router the subscribers connect to over TCP on loopback.
//! In the same run, one after the other on the same load, each with a ROS 2 domain and a
//! publisher process of its own: a bare subscriber (`recd-e2e bare-zenoh`: the Zenoh
//! source's session and wildcard subscription, samples counted and dropped: Zenoh's share
//! of the recorder's cost), the recorder (`recd-e2e record --zenoh-domain`, the engine as
//! recd runs it, every topic recorded), and a plain write of the bytes the recorder wrote
//! (the cost of the disk).

use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use ::zenoh::qos::CongestionControl;
use ::zenoh::Wait;
use recd_engine::zenoh_wire::{gid_of, publisher_token, Attachment, PublisherToken};
use recd_engine::{BareZenohCounts, BareZenohSubscriber, RecordingConfig, TopicCounts};
use recd_engine::{TopicStatus, ZenohConfig};
use recd_storage::IoMode;

use crate::measure::{interrupt, spawn, wait_measured, Started, Usage};

/// The ROS topic the load publishes.
const TOPIC: &str = "/bench";
/// The node that publishes it.
const NODE: &str = "bench_pub";
/// rmw_zenoh's name of `recd_test/msg/Blob`.
const TYPE_NAME: &str = "recd_test::msg::dds_::Blob_";
/// Its type hash (as the tests' Python node names it: SHA-256 of the definition).
const TYPE_HASH: &str = "RIHS01_d8b36370e9ebd03e7ffc7063e07cbbdf8ed861f04d5422a719c167dd192d3159";
/// `recd_test/msg/Blob`.
const DEFINITION: &str = "int32 seq\nuint8[] data\n";
/// rmw_zenoh's QoS field of a default publisher: reliable, volatile, keep last 10.
const QOS: &str = "::,10:,:,:,,";
/// The same, keep all.
const QOS_KEEP_ALL: &str = "::2,:,:,:,,";
/// Bytes of a Blob before its data: encapsulation, `seq`, the data's length.
const BLOB_HEADER: usize = 12;
/// How long the load waits for a subscriber to match, and for its router to listen.
const MATCH_LIMIT: Duration = Duration::from_secs(30);
/// How long the load keeps its router up after its last sample.
const LINGER: Duration = Duration::from_millis(500);
/// How long a subscriber runs on after the load has finished, to take what is in flight.
const DRAIN: Duration = Duration::from_secs(1);

/// The subcommands of the Zenoh benchmark.
#[derive(clap::Subcommand, Debug)]
pub enum ZenohCmd {
    /// Record a Zenoh load (one rmw_zenoh publisher) and compare with a bare Zenoh
    /// subscriber and a plain write, printing one Markdown table row (`--header` prints
    /// the header first).
    Zenoh {
        #[command(flatten)]
        args: ZenohArgs,
        /// Print the table's header before the row.
        #[arg(long)]
        header: bool,
    },
    /// (internal) Subscribe to a ROS 2 domain over Zenoh as the recorder does, counting
    /// and dropping samples; at SIGINT print the counts as JSON.
    #[command(hide = true)]
    BareZenoh {
        /// The ROS 2 domain.
        #[arg(long)]
        domain: u16,
        /// The Zenoh endpoint to connect to (the load's router).
        #[arg(long)]
        connect: String,
    },
    /// (internal) Publish one topic as an rmw_zenoh publisher, in a Zenoh router
    /// listening on ENDPOINT, once a subscriber matched; print `{"sent": N}`.
    #[command(hide = true)]
    ZenohPub(PubArgs),
}

/// Runs a subcommand of the Zenoh benchmark.
pub fn main(command: ZenohCmd) -> Result<(), String> {
    match command {
        ZenohCmd::Zenoh { args, header } => {
            if header {
                print_header();
            }
            run(&args)
        }
        ZenohCmd::BareZenoh { domain, connect } => bare(domain, connect),
        ZenohCmd::ZenohPub(args) => publish(&args),
    }
}

/// `record`'s Zenoh flags.
#[derive(clap::Args, Debug)]
pub struct RecordZenoh {
    /// Record ROS 2 topics of this domain over Zenoh.
    #[arg(long)]
    zenoh_domain: Option<u16>,
    /// The Zenoh endpoint the recorder connects to.
    #[arg(long, requires = "zenoh_domain")]
    zenoh_connect: Option<String>,
}

impl RecordZenoh {
    /// Sets the recorder's Zenoh source, its message definitions found in `msg_dir`.
    pub fn apply(&self, config: &mut RecordingConfig, msg_dir: Option<&Path>) {
        config.zenoh = self.zenoh_domain.map(|domain| ZenohConfig {
            connect: self.zenoh_connect.iter().cloned().collect(),
            message_dirs: msg_dir.into_iter().map(Path::to_path_buf).collect(),
            ..ZenohConfig::new(domain)
        });
    }
}

/// The loads.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum Load {
    /// 100 B × 10 kHz.
    Small,
    /// 64 KiB × 1 kHz.
    Medium,
}

impl Load {
    /// The message's size (the whole CDR, as recorded) and the rate in Hz.
    fn shape(self) -> (usize, u32) {
        match self {
            Load::Small => (100, 10_000),
            Load::Medium => (64 << 10, 1_000),
        }
    }

    fn label(self) -> &'static str {
        match self {
            Load::Small => "100 B × 10 kHz",
            Load::Medium => "64 KiB × 1 kHz",
        }
    }
}

/// Options of `recd-e2e zenoh`.
#[derive(clap::Args, Debug)]
pub struct ZenohArgs {
    /// Which load.
    #[arg(long, value_enum)]
    load: Load,
    /// How long the load publishes, in whole seconds.
    #[arg(long, default_value_t = 10)]
    seconds: u32,
    /// Directory on the disk under test.
    #[arg(long, default_value = "/var/tmp/recd-e2e")]
    dir: PathBuf,
    /// The first of the two ROS 2 domains the run uses (the bare subscriber, the
    /// recorder: one each).
    #[arg(long, default_value_t = 70)]
    domain: u16,
    /// How the recorder writes: auto (its default), direct or buffered.
    #[arg(long, default_value_t = IoMode::Auto)]
    io_mode: IoMode,
    /// Publish reliable keep-all (congestion control `Block`: the publisher waits for a
    /// slow subscriber rather than drop) instead of rmw_zenoh's default reliable keep-last
    /// (`Drop`: a sample that finds the link's queue full for a millisecond is dropped).
    #[arg(long)]
    keep_all: bool,
}

/// Options of `recd-e2e zenoh-pub`.
#[derive(clap::Args, Debug)]
pub struct PubArgs {
    /// The ROS 2 domain.
    #[arg(long)]
    domain: u16,
    /// The endpoint the router listens on (`tcp/127.0.0.1:7447`).
    #[arg(long)]
    listen: String,
    /// Bytes of each message (the whole CDR).
    #[arg(long)]
    size: usize,
    /// Messages a second.
    #[arg(long)]
    rate: u32,
    /// How long to publish.
    #[arg(long)]
    seconds: u32,
    /// Reliable keep-all (congestion control `Block`) rather than keep last 10 (`Drop`).
    #[arg(long)]
    keep_all: bool,
}

/// A child process, killed and reaped if dropped before it was waited for.
struct Child(Option<Started>);

impl Child {
    fn start(command: &mut Command) -> Result<Self, String> {
        spawn(command).map(|started| Self(Some(started)))
    }

    fn interrupt(&self) {
        if let Some(started) = &self.0 {
            interrupt(started);
        }
    }

    /// Waits for it to exit; its output and what it cost.
    fn wait(mut self) -> Result<(Vec<u8>, Usage), String> {
        wait_measured(self.0.take().expect("not waited for yet"))
    }
}

impl Drop for Child {
    fn drop(&mut self) {
        if let Some(started) = self.0.take() {
            // SAFETY: kill(2) on our own child, not reaped yet.
            unsafe { libc::kill(started.pid() as i32, libc::SIGKILL) };
            let _ = wait_measured(started);
        }
    }
}

/// A directory removed when dropped.
struct RunDir(PathBuf);

impl Drop for RunDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// What the load process reports.
#[derive(serde::Serialize, serde::Deserialize)]
struct Sent {
    sent: u64,
    /// The most it fell behind its schedule, in ms.
    behind_ms: f64,
}

/// One subscriber's run: what it cost and what its load cost and sent.
struct Role {
    usage: Usage,
    output: Vec<u8>,
    load: Usage,
    sent: Sent,
}

/// Runs the bare subscriber and the recorder on the same load and prints one table row.
pub fn run(args: &ZenohArgs) -> Result<(), String> {
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let (size, rate) = args.load.shape();
    // A subscriber started once the load's router listens, and stopped a while after
    // the load has published.
    let while_published = |domain: u16, subscriber: &dyn Fn(&str) -> Command| {
        let port = free_port()?;
        let endpoint = format!("tcp/127.0.0.1:{port}");
        let load = Child::start(
            Command::new(&exe)
                .args(["zenoh-pub", "--domain", &domain.to_string()])
                .args(["--listen", &endpoint, "--size", &size.to_string()])
                .args(["--rate", &rate.to_string()])
                .args(["--seconds", &args.seconds.to_string()])
                .args(args.keep_all.then_some("--keep-all"))
                .stdout(Stdio::piped()),
        )?;
        wait_listening(port)?;
        let subscriber = Child::start(subscriber(&endpoint).stdout(Stdio::piped()))?;
        let (out, load_usage) = load.wait().map_err(|e| format!("load: {e}"))?;
        let sent: Sent = serde_json::from_slice(&out).map_err(|e| format!("load output: {e}"))?;
        std::thread::sleep(DRAIN);
        subscriber.interrupt();
        let (output, usage) = subscriber.wait()?;
        Ok::<_, String>(Role {
            usage,
            output,
            load: load_usage,
            sent,
        })
    };

    let bare = while_published(args.domain, &|endpoint| {
        let mut command = Command::new(&exe);
        command
            .args(["bare-zenoh", "--domain", &args.domain.to_string()])
            .args(["--connect", endpoint]);
        command
    })?;
    let bare_counts: BareZenohCounts =
        serde_json::from_slice(&bare.output).map_err(|e| format!("bare subscriber: {e}"))?;

    let domain = args.domain + 1;
    let run_dir = RunDir(args.dir.join(format!("zenoh-{}", std::process::id())));
    let msg_dir = run_dir.0.join("msg");
    let msg_file = msg_dir.join("recd_test/msg/Blob.msg");
    std::fs::create_dir_all(msg_file.parent().expect("a parent"))
        .and_then(|()| std::fs::write(&msg_file, DEFINITION))
        .map_err(|e| format!("{}: {e}", msg_file.display()))?;
    let recd = while_published(domain, &|endpoint| {
        let mut command = Command::new(&exe);
        command
            .args(["record", "--no-iceoryx2", "--include", ""])
            .args(["--zenoh-domain", &domain.to_string()])
            .args(["--zenoh-connect", endpoint])
            .args(["--io-mode", &args.io_mode.to_string()])
            .arg("--msg-dir")
            .arg(&msg_dir)
            .arg("--dir")
            .arg(run_dir.0.join("recd"));
        command
    })?;
    let recorded: serde_json::Value =
        serde_json::from_slice(&recd.output).map_err(|e| format!("recorder output: {e}"))?;
    let topics: Vec<TopicStatus> = serde_json::from_value(recorded["topics"].clone())
        .map_err(|e| format!("recorder counts: {e}"))?;
    let recd_counts = topics
        .iter()
        .find(|t| t.name == TOPIC)
        .map(|t| t.counts)
        .ok_or_else(|| format!("the recorder saw no {TOPIC}"))?;
    let recorded_bytes = recorded["bytes"].as_u64().unwrap_or(0);

    // The disk's share: a plain write of the same bytes.
    let plain = Child::start(
        Command::new(&exe)
            .args(["plain-write", "--dir"])
            .arg(&run_dir.0)
            .args(["--bytes", &recorded_bytes.to_string()])
            .args(["--chunk", &size.to_string()])
            .stdout(Stdio::piped()),
    )?;
    let (_, plain) = plain.wait()?;
    drop(run_dir);

    let measured = Measured {
        bare,
        bare_counts,
        recd,
        recd_counts,
        plain,
    };
    print_row(args, &measured);
    measured.check()
}

/// What one run measured.
struct Measured {
    bare: Role,
    bare_counts: BareZenohCounts,
    recd: Role,
    recd_counts: TopicCounts,
    plain: Usage,
}

impl Measured {
    /// Fails unless each subscriber received every sample sent, none lost or dropped.
    fn check(&self) -> Result<(), String> {
        let (bare, recd) = (&self.bare_counts, &self.recd_counts);
        let mut problems = Vec::new();
        if bare.received != self.bare.sent.sent || bare.lost > 0 {
            problems.push(format!(
                "bare subscriber received {} of {} sent, {} lost",
                bare.received, self.bare.sent.sent, bare.lost
            ));
        }
        if recd.received != self.recd.sent.sent || recd.written != recd.received {
            problems.push(format!(
                "recorder received {} and wrote {} of {} sent",
                recd.received, recd.written, self.recd.sent.sent
            ));
        }
        if recd.lost + recd.dropped > 0 {
            problems.push(format!(
                "recorder lost {}, dropped {}",
                recd.lost, recd.dropped
            ));
        }
        if problems.is_empty() {
            Ok(())
        } else {
            Err(problems.join("; "))
        }
    }
}

/// The table's header.
pub fn print_header() {
    println!("| load | bare zenoh CPU | plain write CPU | recd CPU | recd / bare | recd / (bare + write) | sent (bare / recd run) | received (bare / recd) | lost (bare / recd + dropped) | load CPU (bare / recd run) | load behind (ms, bare / recd run) | recd peak RSS |");
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|");
}

/// A row: the CPU seconds of each process and the recorder's ratios.
fn print_row(args: &ZenohArgs, run: &Measured) {
    let (bare, plain, recd) = (run.bare.usage.cpu(), run.plain.cpu(), run.recd.usage.cpu());
    let ratio = |reference: f64| recd / reference.max(1e-3);
    let mut variant = match args.io_mode {
        IoMode::Auto => String::new(),
        mode => format!(", {mode} I/O"),
    };
    if args.keep_all {
        variant += ", keep-all";
    }
    let counts = &run.recd_counts;
    println!(
        "| {}, {} s{variant} | {bare:.2} s | {plain:.2} s | {recd:.2} s | {:.2}× | {:.2}× | {} / {} | {} / {} | {} / {} | {:.2} s / {:.2} s | {:.1} / {:.1} | {} MiB |",
        args.load.label(),
        args.seconds,
        ratio(bare),
        ratio(bare + plain),
        run.bare.sent.sent,
        run.recd.sent.sent,
        run.bare_counts.received,
        counts.received,
        run.bare_counts.lost,
        counts.lost + counts.dropped,
        run.bare.load.cpu(),
        run.recd.load.cpu(),
        run.bare.sent.behind_ms,
        run.recd.sent.behind_ms,
        run.recd.usage.max_rss_kib / 1024,
    );
}

/// A TCP port on loopback free a moment ago.
fn free_port() -> Result<u16, String> {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .map(|address| address.port())
        .map_err(|e| format!("no free port: {e}"))
}

/// Waits until something listens on `port` of loopback.
fn wait_listening(port: u16) -> Result<(), String> {
    let deadline = Instant::now() + MATCH_LIMIT;
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        if Instant::now() > deadline {
            return Err(format!("the load's router does not listen on port {port}"));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    Ok(())
}

/// Subscribes as the recorder does and counts, until SIGINT.
fn bare(domain: u16, connect: String) -> Result<(), String> {
    let (tx, rx) = std::sync::mpsc::channel();
    ctrlc::set_handler(move || {
        let _ = tx.send(());
    })
    .map_err(|e| e.to_string())?;
    let config = ZenohConfig {
        connect: vec![connect],
        ..ZenohConfig::new(domain)
    };
    let subscriber = BareZenohSubscriber::open(&config).map_err(|e| e.to_string())?;
    let _ = rx.recv();
    let counts = subscriber.close();
    println!(
        "{}",
        serde_json::to_string(&counts).map_err(|e| e.to_string())?
    );
    Ok(())
}

/// Publishes as an rmw_zenoh publisher, once a subscriber matched.
fn publish(args: &PubArgs) -> Result<(), String> {
    let mut config = ::zenoh::Config::default();
    let listen = serde_json::to_string(&[&args.listen]).map_err(|e| e.to_string())?;
    for (key, value) in [
        ("mode", "\"router\""),
        ("listen/endpoints", listen.as_str()),
        ("scouting/multicast/enabled", "false"),
    ] {
        config
            .insert_json5(key, value)
            .map_err(|e| format!("zenoh config {key} = {value}: {e}"))?;
    }
    let session = ::zenoh::open(config)
        .wait()
        .map_err(|e| format!("cannot open the router's session: {e}"))?;
    let zid = session.zid().to_string();
    let token_key = publisher_token(&PublisherToken {
        domain: args.domain,
        zid: &zid,
        node_id: 0,
        entity_id: 1,
        namespace: "/",
        node: NODE,
        ros_topic: TOPIC,
        type_name: TYPE_NAME,
        type_hash: TYPE_HASH,
        qos: if args.keep_all { QOS_KEEP_ALL } else { QOS },
    });
    let key = format!(
        "{}/{}/{TYPE_NAME}/{TYPE_HASH}",
        args.domain,
        TOPIC.trim_start_matches('/')
    );
    // Reliable: Zenoh's default (setting it is `unstable` API); congestion control as
    // rmw_zenoh's: `Drop` for keep last, `Block` for keep all.
    let publisher = session
        .declare_publisher(key.clone())
        .congestion_control(if args.keep_all {
            CongestionControl::Block
        } else {
            CongestionControl::Drop
        })
        .wait()
        .map_err(|e| format!("cannot publish on {key}: {e}"))?;
    let token = session
        .liveliness()
        .declare_token(token_key.clone())
        .wait()
        .map_err(|e| format!("cannot declare {token_key}: {e}"))?;
    let gid = gid_of(&token_key);

    let deadline = Instant::now() + MATCH_LIMIT;
    let matched = || {
        publisher
            .matching_status()
            .wait()
            .is_ok_and(|status| status.matching())
    };
    while !matched() {
        if Instant::now() > deadline {
            return Err(format!("no subscriber matched {key}"));
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    // Let the subscriber take the publisher's token in before the first sample.
    std::thread::sleep(Duration::from_millis(500));

    let mut message = vec![0u8; args.size.max(BLOB_HEADER)];
    message[..4].copy_from_slice(&[0x00, 0x01, 0x00, 0x00]);
    let data_len = message.len() - BLOB_HEADER;
    message[8..12].copy_from_slice(&(data_len as u32).to_le_bytes());
    message[BLOB_HEADER..].copy_from_slice(&recd_workload::mixed_bytes(data_len, 7)[..data_len]);

    let total = u64::from(args.rate) * u64::from(args.seconds);
    let period = Duration::from_secs(1) / args.rate.max(1);
    let start = Instant::now();
    let mut behind = Duration::ZERO;
    let mut sent = 0u64;
    while sent < total {
        // Sleep until the next sample is due; then put every sample due (a batch when
        // the sleep overran).
        let next = start + period * u32::try_from(sent).unwrap_or(u32::MAX);
        let now = Instant::now();
        if next > now {
            std::thread::sleep(next - now);
        }
        let elapsed = start.elapsed();
        let due = (elapsed.as_nanos() / period.as_nanos().max(1) + 1).min(u128::from(total)) as u64;
        behind = behind.max(elapsed.saturating_sub(period * u32::try_from(sent).unwrap_or(0)));
        while sent < due {
            sent += 1;
            message[4..8].copy_from_slice(&(sent as i32).to_le_bytes());
            let attachment = Attachment {
                sequence: sent,
                source_time_ns: SystemTime::now()
                    .duration_since(UNIX_EPOCH)
                    .map_or(0, |d| d.as_nanos() as u64),
                gid,
            };
            publisher
                .put(message.clone())
                .attachment(attachment.to_bytes())
                .wait()
                .map_err(|e| format!("cannot put on {key}: {e}"))?;
        }
    }
    // A while for what is queued to go out; then the token, then the publisher, as
    // rmw_zenoh leaves.
    std::thread::sleep(LINGER);
    let _ = token.undeclare().wait();
    let _ = publisher.undeclare().wait();
    let _ = session.close().wait();
    let report = Sent {
        sent,
        behind_ms: behind.as_secs_f64() * 1e3,
    };
    println!(
        "{}",
        serde_json::to_string(&report).map_err(|e| e.to_string())?
    );
    Ok(())
}
