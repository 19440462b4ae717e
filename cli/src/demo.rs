//! `rec demo`: records a synthetic camera/lidar/IMU workload through the storage engine,
//! reindexes it and prints what it wrote. A self-check of the recording path that needs
//! nothing but this binary.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::AtomicBool;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use clap::Args;
use recd_storage::{
    ChannelId, Compression, MessageHeader, ReindexOptions, StreamWriter, WriterOptions,
};
use recd_workload::{demo_topics, PayloadPool, Schedule, Sensor, TopicSpec};

use crate::format;
use crate::output::outln;

/// Record a synthetic vehicle as fast as the disk allows.
///
/// Needs no recd. A FullHD camera at 30 Hz, lidar at 10 Hz and an IMU at 1 kHz go into one file, which
/// is then reindexed with zstd; both summaries are printed.
#[derive(Debug, Args)]
pub struct DemoArgs {
    /// Seconds of vehicle time to record.
    #[arg(long, default_value_t = 3.0)]
    seconds: f64,
    /// Keep the files in this directory (default: a temporary directory, removed after).
    #[arg(long, value_name = "DIR")]
    dir: Option<PathBuf>,
}

pub fn run(args: &DemoArgs) -> Result<ExitCode, String> {
    if !(args.seconds > 0.0 && args.seconds <= 3600.0) {
        return Err(format!(
            "--seconds must be more than 0 and at most 3600 (got {})",
            args.seconds
        ));
    }
    let temporary;
    let dir = match &args.dir {
        Some(dir) => {
            std::fs::create_dir_all(dir)
                .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
            dir.clone()
        }
        None => {
            temporary = tempfile::tempdir()
                .map_err(|e| format!("cannot create a temporary directory: {e}"))?;
            temporary.path().to_path_buf()
        }
    };
    let topics = demo_topics();
    let mut pools: Vec<PayloadPool> = topics.iter().map(pool_for).collect();

    let recorded = dir.join("demo_0000.mcap");
    let mut writer =
        StreamWriter::create(&recorded, WriterOptions::default()).map_err(|e| e.to_string())?;
    let channels = topics
        .iter()
        .map(|topic| add_channel(&mut writer, topic))
        .collect::<Result<Vec<ChannelId>, _>>()
        .map_err(|e| e.to_string())?;

    let start_ns = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64);
    let mut sent = vec![0u64; topics.len()];
    let started = Instant::now();
    for tick in Schedule::new(&topics, (args.seconds * 1e9) as u64) {
        let time = start_ns + tick.time_ns;
        let header = MessageHeader {
            channel: channels[tick.topic],
            sequence: tick.sequence as u32,
            log_time: time,
            publish_time: time,
        };
        let payload = pools[tick.topic].payload(tick.sequence);
        writer
            .write_message(&header, payload)
            .map_err(|e| e.to_string())?;
        sent[tick.topic] += 1;
    }
    let counts: BTreeMap<String, String> = topics
        .iter()
        .zip(&sent)
        .map(|(topic, n)| (format!("{}.received", topic.topic), n.to_string()))
        .collect();
    writer
        .add_metadata("recorder", &counts)
        .map_err(|e| e.to_string())?;
    let summary = writer.close().map_err(|e| e.to_string())?;
    let elapsed = started.elapsed().as_secs_f64();

    let indexed = dir.join("demo_0000.indexed.mcap");
    let options = ReindexOptions {
        compression: Compression::Zstd,
        ..ReindexOptions::default()
    };
    let reindex_started = Instant::now();
    let report = recd_storage::reindex(
        &recorded,
        &indexed,
        &options,
        &mut |_, _| {},
        &AtomicBool::new(false),
    )
    .map_err(|e| e.to_string())?;
    let reindex_elapsed = reindex_started.elapsed().as_secs_f64();

    outln!(
        "recorded {} of vehicle time on {} topics:",
        format_secs(args.seconds),
        topics.len()
    );
    for (topic, n) in topics.iter().zip(&sent) {
        outln!(
            "  {:<28} {:>7} messages of {}",
            topic.topic,
            n,
            format::bytes(topic.payload_len() as u64)
        );
    }
    outln!(
        "wrote {} messages, {} in {:.3} s: {} (unchunked, streamed)",
        summary.message_count,
        format::bytes(summary.bytes),
        elapsed,
        format::rate(summary.bytes as f64 / elapsed)
    );
    outln!(
        "reindexed with zstd in {:.3} s: {} → {}\n",
        reindex_elapsed,
        format::bytes(report.input_bytes),
        format::bytes(report.output_bytes)
    );
    for path in [&recorded, &indexed] {
        let info = recd_storage::summarize(path).map_err(|e| e.to_string())?;
        outln!("$ rec info {}", path.display());
        outln!(
            "{}",
            crate::info::render(&info, &crate::info::Interfaces::default())
        );
    }
    if args.dir.is_none() {
        outln!("(the files were in a temporary directory and are removed now; --dir keeps them)");
    }
    Ok(ExitCode::SUCCESS)
}

fn pool_for(topic: &TopicSpec) -> PayloadPool {
    match topic.sensor {
        Sensor::Camera { width, height } => {
            PayloadPool::new(4, |seed| recd_workload::camera_frame(width, height, seed))
        }
        Sensor::Lidar { points } => {
            PayloadPool::new(4, |seed| recd_workload::lidar_scan(points, seed))
        }
        Sensor::Imu => PayloadPool::new(64, |seed| recd_workload::imu_sample(seed, seed)),
    }
}

fn add_channel(
    writer: &mut StreamWriter,
    topic: &TopicSpec,
) -> Result<ChannelId, recd_storage::WriteError> {
    let metadata = BTreeMap::from([("sensor".to_string(), format!("{:?}", topic.sensor))]);
    writer.add_channel(None, &topic.topic, "application/octet-stream", &metadata)
}

fn format_secs(seconds: f64) -> String {
    format!("{seconds} s")
}
