//! The storage engine against its references, on the workload of the rosbag2 storage
//! plugin comparison (../shared/reference/rosbag2-storage-plugin-comparison-2022.txt):
//! 250 MiB of messages of 1 MiB, 10 KiB, 100 B, and mixed (70 % / 20 % / 10 % of the
//! bytes), with real-looking content, written to /dev/shm and to the ordinary disk.
//!
//! - `recd`: our streaming writer, unchunked, without and with the data-section CRC, and
//!   with the SHA-256 of the stored bytes a signed recording's chain enters (`recd-digest`);
//! - `mcap-crate`: the `mcap` crate's writer with the same options behind a BufWriter;
//! - `plain-write`: the same number of bytes written sequentially in 1 MiB blocks;
//! - `reindex`: our reindexer on the recorded file, uncompressed and zstd.
//!
//! Every file writer ends with fdatasync, so disk figures compare like with like.
//! `RECD_BENCH_DISK_DIR` picks the disk directory (default: the system temp directory);
//! `RECD_BENCH_MIB` shrinks the workload for a quick run.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use recd_storage::{Compression, MessageHeader, ReindexOptions, StreamWriter, WriterOptions};

/// Messages as slices of one buffer of real-looking bytes.
struct Workload {
    name: &'static str,
    data: Vec<u8>,
    sizes: Vec<usize>,
}

impl Workload {
    fn messages(&self) -> impl Iterator<Item = &[u8]> {
        self.sizes.iter().scan(0usize, move |at, &size| {
            let message = &self.data[*at..*at + size];
            *at += size;
            Some(message)
        })
    }

    fn bytes(&self) -> u64 {
        self.data.len() as u64
    }
}

fn workloads(total: usize) -> Vec<Workload> {
    let data = recd_workload::mixed_bytes(total, 42);
    let uniform = |name, size: usize| Workload {
        name,
        data: data[..total / size * size].to_vec(),
        sizes: vec![size; total / size],
    };
    let mut rng = fastrand::Rng::with_seed(5);
    let mut mixed_sizes = Vec::new();
    for (share, size) in [(0.7, 1 << 20), (0.2, 10 << 10), (0.1, 100)] {
        let count = (total as f64 * share / size as f64) as usize;
        mixed_sizes.extend(std::iter::repeat_n(size, count));
    }
    rng.shuffle(&mut mixed_sizes);
    let mixed_total = mixed_sizes.iter().sum();
    vec![
        uniform("1MiB", 1 << 20),
        uniform("10KiB", 10 << 10),
        uniform("100B", 100),
        Workload {
            name: "mixed",
            data: data[..mixed_total].to_vec(),
            sizes: mixed_sizes,
        },
    ]
}

fn write_recd(path: &Path, workload: &Workload, data_crc: bool) {
    let options = WriterOptions {
        data_crc,
        ..WriterOptions::default()
    };
    write_recd_with(path, workload, options);
}

fn write_recd_with(path: &Path, workload: &Workload, options: WriterOptions) {
    // recd never overwrites a file; the reference writers truncate theirs.
    let _ = std::fs::remove_file(path);
    let mut writer = StreamWriter::create(path, options).unwrap();
    let channel = writer
        .add_channel(None, "/bench", "raw", &Default::default())
        .unwrap();
    for (i, message) in workload.messages().enumerate() {
        let header = MessageHeader {
            channel,
            sequence: i as u32,
            log_time: i as u64,
            publish_time: i as u64,
        };
        writer.write_message(&header, message).unwrap();
    }
    writer.close().unwrap();
}

fn write_mcap_crate(path: &Path, workload: &Workload, data_crc: bool) {
    let file = File::create(path).unwrap();
    let options = mcap::WriteOptions::new()
        .use_chunks(false)
        .compression(None)
        .calculate_data_section_crc(data_crc);
    let mut writer = options.create(BufWriter::new(file)).unwrap();
    let channel = writer
        .add_channel(0, "/bench", "raw", &Default::default())
        .unwrap();
    for (i, message) in workload.messages().enumerate() {
        let header = mcap::records::MessageHeader {
            channel_id: channel,
            sequence: i as u32,
            log_time: i as u64,
            publish_time: i as u64,
        };
        writer.write_to_known_channel(&header, message).unwrap();
    }
    writer.finish().unwrap();
    let file = writer.into_inner().into_inner().unwrap();
    file.sync_data().unwrap();
}

fn write_plain(path: &Path, workload: &Workload) {
    let mut file = File::create(path).unwrap();
    for block in workload.data.chunks(1 << 20) {
        file.write_all(block).unwrap();
    }
    file.sync_data().unwrap();
}

fn targets() -> Vec<(&'static str, PathBuf)> {
    let disk = std::env::var_os("RECD_BENCH_DISK_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(std::env::temp_dir);
    let mut targets = vec![("disk", disk)];
    if Path::new("/dev/shm").is_dir() {
        targets.insert(0, ("shm", PathBuf::from("/dev/shm")));
    }
    targets
}

fn total_bytes() -> usize {
    let mib = std::env::var("RECD_BENCH_MIB")
        .ok()
        .and_then(|v| v.parse::<usize>().ok())
        .unwrap_or(250);
    mib << 20
}

fn writers(c: &mut Criterion) {
    let workloads = workloads(total_bytes());
    for (target, dir) in targets() {
        let dir = tempfile::tempdir_in(dir).unwrap();
        let path = dir.path().join("bench.mcap");
        let mut group = c.benchmark_group(format!("write/{target}"));
        group
            .sample_size(10)
            .warm_up_time(Duration::from_secs(1))
            .measurement_time(Duration::from_secs(5));
        for workload in &workloads {
            group.throughput(Throughput::Bytes(workload.bytes()));
            let id = |name| BenchmarkId::new(name, workload.name);
            group.bench_function(id("plain-write"), |b| {
                b.iter(|| write_plain(&path, workload))
            });
            group.bench_function(id("recd"), |b| {
                b.iter(|| write_recd(&path, workload, false))
            });
            group.bench_function(id("recd-crc"), |b| {
                b.iter(|| write_recd(&path, workload, true))
            });
            let digest = WriterOptions {
                stored_digest: true,
                ..WriterOptions::default()
            };
            group.bench_function(id("recd-digest"), |b| {
                b.iter(|| write_recd_with(&path, workload, digest.clone()))
            });
            group.bench_function(id("mcap-crate"), |b| {
                b.iter(|| write_mcap_crate(&path, workload, false))
            });
            group.bench_function(id("mcap-crate-crc"), |b| {
                b.iter(|| write_mcap_crate(&path, workload, true))
            });
        }
        group.finish();
    }
}

fn reindexing(c: &mut Criterion) {
    let workloads = workloads(total_bytes());
    for (target, dir) in targets() {
        let dir = tempfile::tempdir_in(dir).unwrap();
        let input = dir.path().join("recorded.mcap");
        let output = dir.path().join("indexed.mcap");
        let mut group = c.benchmark_group(format!("reindex/{target}"));
        group
            .sample_size(10)
            .warm_up_time(Duration::from_secs(1))
            .measurement_time(Duration::from_secs(5));
        for workload in workloads
            .iter()
            .filter(|w| matches!(w.name, "1MiB" | "100B" | "mixed"))
        {
            write_recd(&input, workload, false);
            group.throughput(Throughput::Bytes(workload.bytes()));
            for compression in [Compression::None, Compression::Zstd] {
                let options = ReindexOptions {
                    compression,
                    ..ReindexOptions::default()
                };
                let name = format!("{compression:?}").to_lowercase();
                group.bench_function(BenchmarkId::new(name, workload.name), |b| {
                    b.iter(|| {
                        recd_storage::reindex(
                            &input,
                            &output,
                            &options,
                            &mut |_, _| {},
                            &AtomicBool::new(false),
                        )
                        .unwrap()
                    })
                });
            }
        }
        group.finish();
    }
}

criterion_group!(benches, writers, reindexing);
criterion_main!(benches);
